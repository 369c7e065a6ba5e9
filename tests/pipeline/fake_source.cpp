// The Kafka side of the pipeline's fakes: FakeSource (an in-memory topic log
// with a consumer group) and FakeDlq.
#include <algorithm>
#include <stdexcept>

#include "tests/pipeline/fakes.hpp"

namespace cdc2doris::test {

using kafka::TopicPartition;

// ================================================================== FakeSource

namespace {
struct Keep final : kafka::MessageBatch::Owner {
  std::vector<std::shared_ptr<const FakeSource::Stored>> held;
};
}  // namespace

void FakeSource::add_topic(const std::string& topic, int partitions) {
  std::lock_guard lk(mu_);
  for (int p = 0; p < partitions; ++p) log_[{topic, p}];
}

int64_t FakeSource::produce(const std::string& topic, int32_t partition, std::optional<std::string> key,
                            std::optional<std::string> value) {
  std::lock_guard lk(mu_);
  auto& v = log_[{topic, partition}];
  v.push_back(std::make_shared<const Stored>(Stored{std::move(key), std::move(value)}));
  data_cv_.notify_all();
  return static_cast<int64_t>(v.size()) - 1;
}

void FakeSource::produce_at_once(std::vector<std::pair<TopicPartition, Stored>> records) {
  std::lock_guard lk(mu_);
  for (auto& [tp, r] : records) log_[tp].push_back(std::make_shared<const Stored>(std::move(r)));
  data_cv_.notify_all();
}

int64_t FakeSource::end_offset(const TopicPartition& tp) const {
  std::lock_guard lk(mu_);
  auto it = log_.find(tp);
  return it == log_.end() ? 0 : static_cast<int64_t>(it->second.size());
}

std::vector<TopicPartition> FakeSource::partitions() const {
  std::lock_guard lk(mu_);
  std::vector<TopicPartition> out;
  for (const auto& [tp, v] : log_) out.push_back(tp);
  return out;
}

std::vector<FakeSource::Stored> FakeSource::messages(const TopicPartition& tp) const {
  std::lock_guard lk(mu_);
  std::vector<Stored> out;
  if (auto it = log_.find(tp); it != log_.end())
    for (const auto& m : it->second)
      if (m) out.push_back(*m);
  return out;
}

void FakeSource::set_chunk_per_partition(size_t n) {
  std::lock_guard lk(mu_);
  chunk_ = std::max<size_t>(1, n);
}

void FakeSource::inject_poll_error(Error e, bool with_batch) {
  std::lock_guard lk(mu_);
  errors_.emplace_back(std::move(e), with_batch);
}

void FakeSource::schedule_revoke(std::vector<TopicPartition> tps, bool lost, int after_polls,
                                 int reassign_after_polls) {
  std::lock_guard lk(mu_);
  Action a{Action::Revoke, std::move(tps), lost, stats_.polls + 1 + after_polls, reassign_after_polls};
  actions_.push_back(std::move(a));
}

void FakeSource::set_after_revoke(std::function<void(const std::vector<TopicPartition>&, bool)> hook) {
  std::lock_guard lk(mu_);
  after_revoke_ = std::move(hook);
}

FakeSource::Stats FakeSource::stats() const {
  std::lock_guard lk(mu_);
  return stats_;
}

kafka::OffsetMap FakeSource::group_committed() const {
  std::lock_guard lk(mu_);
  return group_;
}

kafka::OffsetMap FakeSource::positions() const {
  std::lock_guard lk(mu_);
  return kafka::OffsetMap(pos_.begin(), pos_.end());
}

std::set<TopicPartition> FakeSource::paused() const {
  std::lock_guard lk(mu_);
  return paused_;
}

bool FakeSource::closed() const {
  std::lock_guard lk(mu_);
  return closed_;
}

bool FakeSource::wait_for(const std::function<bool()>& pred, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::unique_lock lk(poll_mu_);
  while (!pred()) {
    // Re-check after every poll; the short slice also covers a pipeline
    // that stopped polling (it then never changes the condition anyway).
    if (std::chrono::steady_clock::now() >= deadline) return pred();
    poll_cv_.wait_for(lk, std::chrono::milliseconds(20));
  }
  return true;
}

void FakeSource::notify_poll() {
  {
    std::lock_guard lk(poll_mu_);
    ++poll_seq_;
  }
  poll_cv_.notify_all();
}

void FakeSource::subscribe(kafka::RebalanceListener& listener) {
  std::lock_guard lk(mu_);
  listener_ = &listener;
  closed_ = false;
  assigned_once_ = false;
  pos_.clear();
  paused_.clear();
  ++stats_.subscribes;
}

void FakeSource::assign(kafka::RebalanceListener& l, const std::vector<TopicPartition>& tps) {
  if (tps.empty()) return;
  kafka::OffsetMap starts = l.on_assign(tps);
  std::lock_guard lk(mu_);
  ++stats_.assigns;
  for (const auto& tp : tps) {
    auto s = starts.find(tp);
    auto g = group_.find(tp);
    pos_[tp] = s != starts.end() ? s->second : g != group_.end() ? g->second : 0;  // earliest
    paused_.erase(tp);
  }
}

void FakeSource::revoke(kafka::RebalanceListener& l, const std::vector<TopicPartition>& tps, bool lost) {
  if (tps.empty()) return;
  l.on_revoke(tps, lost);
  std::function<void(const std::vector<TopicPartition>&, bool)> hook;
  {
    std::lock_guard lk(mu_);
    ++stats_.revokes;
    for (const auto& tp : tps) {
      pos_.erase(tp);
      paused_.erase(tp);
    }
    hook = after_revoke_;
  }
  if (hook) hook(tps, lost);
}

kafka::PollResult FakeSource::poll(std::chrono::milliseconds timeout, size_t max_messages) {
  kafka::PollResult out;
  kafka::RebalanceListener* l = nullptr;
  bool first = false;
  bool rejoin = false;
  std::vector<Action> due;
  std::optional<std::pair<Error, bool>> err;
  {
    std::lock_guard lk(mu_);
    if (closed_ || listener_ == nullptr) {
      out.errors.emplace_back(Disposition::Fatal, "fake source is closed");
      return out;
    }
    ++stats_.polls;
    l = listener_;
    first = !assigned_once_;
    assigned_once_ = true;
    for (auto it = actions_.begin(); it != actions_.end();) {
      if (it->at_poll <= stats_.polls) {
        due.push_back(*it);
        it = actions_.erase(it);
      } else {
        ++it;
      }
    }
    if (rejoin_pending_ && std::none_of(actions_.begin(), actions_.end(),
                                        [](const Action& a) { return a.kind == Action::Revoke; })) {
      rejoin_pending_ = false;
      rejoin = true;
    }
    if (!errors_.empty()) {
      err = errors_.front();
      errors_.pop_front();
    }
  }
  if (first) {
    std::vector<TopicPartition> all = partitions();
    assign(*l, all);
  }
  for (auto& a : due) {
    if (a.kind == Action::Revoke) {
      std::vector<TopicPartition> owned;
      {
        std::lock_guard lk(mu_);
        for (const auto& tp : a.tps)
          if (pos_.count(tp)) owned.push_back(tp);
      }
      revoke(*l, owned, a.lost);
      if (a.reassign_after >= 0) {
        std::lock_guard lk(mu_);
        actions_.push_back(Action{Action::Assign, owned, false, stats_.polls + a.reassign_after, -1});
      }
    } else {
      std::vector<TopicPartition> fresh;
      {
        std::lock_guard lk(mu_);
        for (const auto& tp : a.tps)
          if (!pos_.count(tp)) fresh.push_back(tp);
      }
      assign(*l, fresh);
    }
  }
  if (rejoin) l->on_rebalance();
  if (err) out.errors.push_back(err->first);
  if (!err || err->second) {
    auto keep = std::make_unique<Keep>();
    std::vector<kafka::Message> msgs;
    std::unique_lock lk(mu_);
    auto fetch = [&] {
      bool more = true;
      while (more && msgs.size() < max_messages) {
        more = false;
        for (auto& [tp, next] : pos_) {
          if (paused_.count(tp)) continue;
          const auto lit = log_.find(tp);  // log_ is never erased from: its keys outlive the batch
          const auto& v = lit->second;
          for (size_t n = 0; n < chunk_ && next < static_cast<int64_t>(v.size()) && msgs.size() < max_messages;
               ++n, ++next) {
            const auto& m = v[static_cast<size_t>(next)];
            if (!m) continue;  // compacted away
            keep->held.push_back(m);
            kafka::Message msg;
            msg.topic = lit->first.topic;
            msg.partition = tp.partition;
            msg.offset = next;
            if (m->key) msg.key = *m->key;
            if (m->value) msg.value = *m->value;
            msgs.push_back(msg);
            more = true;
          }
        }
      }
    };
    fetch();
    if (msgs.empty() && !err) {
      data_cv_.wait_for(lk, timeout);
      fetch();
    }
    lk.unlock();
    if (!msgs.empty()) out.batch = kafka::MessageBatch(std::move(msgs), nullptr, std::move(keep));
  }
  notify_poll();
  return out;
}

std::optional<Error> FakeSource::read_range(const Ranges& ranges,
                                            const std::function<void(const kafka::Message&)>& fn,
                                            std::chrono::milliseconds) {
  if (!range_reader_) return Error(Disposition::Retry, "no range reader");
  for (const auto& [tp, r] : ranges) {
    std::vector<std::shared_ptr<const Stored>> held;
    std::string topic;
    {
      std::lock_guard lk(mu_);
      ++range_reads_;
      auto lit = log_.find(tp);
      if (lit == log_.end()) continue;
      topic = lit->first.topic;
      for (int64_t off = std::max<int64_t>(r.first, 0);
           off < r.second && off < static_cast<int64_t>(lit->second.size()); ++off)
        held.push_back(lit->second[static_cast<size_t>(off)]);
    }
    for (size_t i = 0; i < held.size(); ++i) {
      if (!held[i]) continue;  // compacted away
      kafka::Message msg;
      msg.topic = topic;
      msg.partition = tp.partition;
      msg.offset = std::max<int64_t>(r.first, 0) + static_cast<int64_t>(i);
      if (held[i]->key) msg.key = *held[i]->key;
      if (held[i]->value) msg.value = *held[i]->value;
      fn(msg);
    }
  }
  return std::nullopt;
}

int FakeSource::range_reads() const {
  std::lock_guard lk(mu_);
  return range_reads_;
}

void FakeSource::fail_next_seeks(int n, Error e) {
  std::lock_guard lk(mu_);
  seek_failures_ = n;
  seek_error_ = std::move(e);
}

std::optional<Error> FakeSource::seek(const TopicPartition& tp, int64_t offset, std::chrono::milliseconds) {
  std::lock_guard lk(mu_);
  stats_.seeks.emplace_back(tp, offset);
  auto it = pos_.find(tp);
  if (it == pos_.end()) return Error(Disposition::Retry, "seek: " + kafka::to_string(tp) + " is not assigned");
  if (seek_failures_ > 0 && seek_error_) {
    --seek_failures_;
    return *seek_error_;
  }
  it->second = offset;
  return std::nullopt;
}

std::optional<Error> FakeSource::pause(const std::vector<TopicPartition>& tps) {
  std::lock_guard lk(mu_);
  ++stats_.pauses;
  for (const auto& tp : tps) paused_.insert(tp);
  return std::nullopt;
}

std::optional<Error> FakeSource::resume(const std::vector<TopicPartition>& tps) {
  std::lock_guard lk(mu_);
  ++stats_.resumes;
  for (const auto& tp : tps) paused_.erase(tp);
  return std::nullopt;
}

std::optional<Error> FakeSource::commit(const kafka::OffsetMap& offsets, const std::string& metadata) {
  std::lock_guard lk(mu_);
  ++stats_.commits;
  for (const auto& [tp, off] : offsets) {
    group_[tp] = off;
    group_meta_[tp] = metadata;
  }
  return std::nullopt;
}

kafka::CommitResult FakeSource::commit_group(const kafka::GroupOffsetMap& offsets) {
  std::unique_lock lk(mu_);
  if (fence_commits_ > 0) {
    --fence_commits_;
    rejoin_pending_ = true;
    if (auto hook = on_fence_) {
      lk.unlock();
      hook();
    }
    return {kafka::CommitStatus::Fenced,
            Error(Disposition::Retry, "Kafka: commit offsets with generation: ILLEGAL_GENERATION (fake)")};
  }
  ++stats_.commits;
  for (const auto& [tp, go] : offsets) {
    group_[tp] = go.offset;
    group_meta_[tp] = go.metadata;
    group_commits_[tp].push_back(go.offset);
  }
  return {};
}

std::vector<int64_t> FakeSource::group_commits(const TopicPartition& tp) const {
  std::lock_guard lk(mu_);
  auto it = group_commits_.find(tp);
  return it == group_commits_.end() ? std::vector<int64_t>{} : it->second;
}

std::variant<kafka::GroupOffsetMap, Error> FakeSource::committed_group(const std::vector<TopicPartition>& tps,
                                                                       std::chrono::milliseconds) {
  std::lock_guard lk(mu_);
  kafka::GroupOffsetMap out;
  for (const auto& tp : tps)
    if (auto it = group_.find(tp); it != group_.end()) out[tp] = {it->second, group_meta_[tp]};
  return out;
}

void FakeSource::set_log_start(const kafka::TopicPartition& tp, int64_t offset) {
  std::lock_guard lk(mu_);
  log_start_[tp] = offset;
}

void FakeSource::compact(const kafka::TopicPartition& tp, int64_t offset) {
  std::lock_guard lk(mu_);
  log_.at(tp).at(static_cast<size_t>(offset)) = nullptr;
}

void FakeSource::recreate_topic(const std::string& topic) {
  std::lock_guard lk(mu_);
  for (auto& [tp, v] : log_)
    if (tp.topic == topic) v.clear();
  for (auto* m : {&group_, &log_start_})
    for (auto it = m->begin(); it != m->end();) it = it->first.topic == topic ? m->erase(it) : std::next(it);
  for (auto it = group_meta_.begin(); it != group_meta_.end();)
    it = it->first.topic == topic ? group_meta_.erase(it) : std::next(it);
}

std::variant<kafka::WatermarkMap, Error> FakeSource::watermarks(const std::vector<TopicPartition>& tps,
                                                                 std::chrono::milliseconds) {
  std::lock_guard lk(mu_);
  kafka::WatermarkMap out;
  for (const auto& tp : tps) {
    auto l = log_.find(tp);
    auto s = log_start_.find(tp);
    out[tp] = {s == log_start_.end() ? 0 : s->second, l == log_.end() ? 0 : static_cast<int64_t>(l->second.size())};
  }
  return out;
}

void FakeSource::fence_next_group_commits(int n, std::function<void()> on_fence) {
  std::lock_guard lk(mu_);
  fence_commits_ = n;
  on_fence_ = std::move(on_fence);
}

kafka::GroupOffsetMap FakeSource::group_committed_with_metadata() const {
  std::lock_guard lk(mu_);
  kafka::GroupOffsetMap out;
  for (const auto& [tp, off] : group_) {
    auto m = group_meta_.find(tp);
    out[tp] = {off, m == group_meta_.end() ? std::string() : m->second};
  }
  return out;
}

void FakeSource::set_group_offset(const kafka::TopicPartition& tp, kafka::GroupOffset go) {
  std::lock_guard lk(mu_);
  group_[tp] = go.offset;
  group_meta_[tp] = std::move(go.metadata);
}

std::variant<kafka::OffsetMap, Error> FakeSource::committed(const std::vector<TopicPartition>& tps,
                                                            std::chrono::milliseconds) {
  std::lock_guard lk(mu_);
  kafka::OffsetMap out;
  for (const auto& tp : tps)
    if (auto it = group_.find(tp); it != group_.end()) out[tp] = it->second;
  return out;
}

std::vector<TopicPartition> FakeSource::assignment() {
  std::lock_guard lk(mu_);
  std::vector<TopicPartition> out;
  for (const auto& [tp, p] : pos_) out.push_back(tp);
  return out;
}

std::vector<kafka::PartitionLag> FakeSource::lag() {
  std::lock_guard lk(mu_);
  std::vector<kafka::PartitionLag> out;
  for (const auto& [tp, p] : pos_) {
    const auto hw = static_cast<int64_t>(log_[tp].size());
    out.push_back({tp, p, hw, hw - p});
  }
  return out;
}

std::optional<Error> FakeSource::close(std::chrono::milliseconds) {
  // Like the real source: the remaining assignment is revoked (not lost)
  // on the calling thread, then the consumer is closed. Idempotent.
  kafka::RebalanceListener* l = nullptr;
  std::vector<TopicPartition> owned;
  {
    std::lock_guard lk(mu_);
    if (closed_) return std::nullopt;
    closed_ = true;
    ++stats_.closes;
    l = listener_;
    for (const auto& [tp, p] : pos_) owned.push_back(tp);
  }
  if (l != nullptr) revoke(*l, owned, false);
  std::lock_guard lk(mu_);
  pos_.clear();
  listener_ = nullptr;
  return std::nullopt;
}

// ================================================================== FakeDlq

std::optional<Error> FakeDlq::produce(const std::string& topic, const kafka::Message& original,
                                      const std::string& error_text) {
  std::lock_guard lk(mu_);
  Letter l;
  l.topic = topic;
  l.source_topic = std::string(original.topic);
  l.partition = original.partition;
  l.offset = original.offset;
  if (original.value) l.value = std::string(*original.value);
  l.error = error_text;
  letters_.push_back(std::move(l));
  return std::nullopt;
}

std::optional<Error> FakeDlq::flush(std::chrono::milliseconds) {
  std::function<void()> hook;
  {
    std::lock_guard lk(mu_);
    hook = on_flush_;
  }
  if (hook) hook();
  std::lock_guard lk(mu_);
  ++flushes_;
  if (fail_flush_) {
    auto e = std::move(*fail_flush_);
    fail_flush_.reset();
    for (auto& l : letters_)
      if (!l.flushed) l.lost = true;
    return e;
  }
  for (auto& l : letters_)
    if (!l.lost) l.flushed = true;
  return std::nullopt;
}

std::vector<FakeDlq::Letter> FakeDlq::letters() const {
  std::lock_guard lk(mu_);
  return letters_;
}

void FakeDlq::fail_next_flush(Error e) {
  std::lock_guard lk(mu_);
  fail_flush_ = std::move(e);
}

int FakeDlq::flushes() const {
  std::lock_guard lk(mu_);
  return flushes_;
}

void FakeDlq::set_on_flush(std::function<void()> hook) {
  std::lock_guard lk(mu_);
  on_flush_ = std::move(hook);
}

}  // namespace cdc2doris::test
