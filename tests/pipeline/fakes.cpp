#include "tests/pipeline/fakes.hpp"

#include <thread>

#include <algorithm>
#include <stdexcept>

#include "tests/workload/workload.hpp"

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
    for (const auto& m : it->second) out.push_back(*m);
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

std::optional<Error> FakeSource::seek(const TopicPartition& tp, int64_t offset, std::chrono::milliseconds) {
  std::lock_guard lk(mu_);
  stats_.seeks.emplace_back(tp, offset);
  auto it = pos_.find(tp);
  if (it == pos_.end()) return Error(Disposition::Retry, "seek: " + kafka::to_string(tp) + " is not assigned");
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
  for (auto& l : letters_) l.flushed = true;
  return std::nullopt;
}

std::vector<FakeDlq::Letter> FakeDlq::letters() const {
  std::lock_guard lk(mu_);
  return letters_;
}

int FakeDlq::flushes() const {
  std::lock_guard lk(mu_);
  return flushes_;
}

void FakeDlq::set_on_flush(std::function<void()> hook) {
  std::lock_guard lk(mu_);
  on_flush_ = std::move(hook);
}

// ================================================================== FakeDoris

const char* to_string(TxnState s) {
  switch (s) {
    case TxnState::Prepare: return "PREPARE";
    case TxnState::Precommitted: return "PRECOMMITTED";
    case TxnState::Committed: return "COMMITTED";
    case TxnState::Aborted: return "ABORTED";
  }
  return "?";
}

namespace {
template <class T>
std::future<T> ready(T v) {
  std::promise<T> p;
  p.set_value(std::move(v));
  return p.get_future();
}

doris::DorisError err(doris::ErrorKind k, Disposition d, std::string msg, const std::string& db = "",
                      const std::string& table = "", const std::string& label = "") {
  ErrorContext ctx;
  ctx.table = table.empty() ? db : db + "." + table;
  ctx.label = label;
  return doris::DorisError(k, d, std::move(msg), std::move(ctx));
}

bool open_state(TxnState s) { return s == TxnState::Prepare || s == TxnState::Precommitted; }
}  // namespace

// ---------------------------------------------------------------- stream

FakeLoadStream::~FakeLoadStream() {
  if (!done_) cancel();
}

std::optional<doris::DorisError> FakeLoadStream::begin() {
  if (txn_id_ >= 0) return std::nullopt;
  auto r = doris_.begin_txn(spec_);
  if (auto* e = std::get_if<doris::DorisError>(&r)) return *e;
  txn_id_ = std::get<int64_t>(r);
  return std::nullopt;
}

std::optional<doris::DorisError> FakeLoadStream::write(std::string_view rows) {
  if (failed_) return failed_;
  if (done_) return err(doris::ErrorKind::Cancelled, Disposition::Fail, "stream is finished");
  if (auto e = begin()) return failed_ = e;
  if (auto e = doris_.on_write(spec_)) return failed_ = e;
  body_.append(rows);
  return std::nullopt;
}

std::variant<doris::LoadResult, doris::DorisError> FakeLoadStream::finish() {
  if (failed_) return *failed_;
  if (done_) return err(doris::ErrorKind::Cancelled, Disposition::Fail, "stream is finished");
  if (auto e = begin()) return *(failed_ = e);
  done_ = true;
  auto r = doris_.precommit(spec_, txn_id_, body_);
  if (auto* e = std::get_if<doris::DorisError>(&r)) failed_ = *e;
  return r;
}

void FakeLoadStream::cancel() {
  // The connection closes; the txn stays PREPARE until aborted by label
  // (or, in Doris, by its timeout).
  done_ = true;
  if (!failed_) failed_ = err(doris::ErrorKind::Cancelled, Disposition::Fail, "cancelled");
}

// ---------------------------------------------------------------- client

void FakeDoris::add_table(const std::string& db, const std::string& table, bool unique) {
  std::lock_guard lk(mu_);
  tables_[db + "." + table].unique = unique;
}

int64_t FakeDoris::seed_txn(const std::string& db, const std::string& table, const std::string& label, TxnState state,
                            std::vector<std::string> rows) {
  std::lock_guard lk(mu_);
  Txn t{next_txn_++, db, table, label, state, std::move(rows), {}};
  txns_[t.id] = t;
  if (state == TxnState::Committed) apply_locked(t);
  track_open_locked(db);
  return t.id;
}

void FakeDoris::expire_txn(int64_t txn_id) {
  std::lock_guard lk(mu_);
  auto it = txns_.find(txn_id);
  if (it == txns_.end() || !open_state(it->second.state)) throw std::logic_error("expire_txn: not an open txn");
  it->second.state = TxnState::Aborted;
}

void FakeDoris::fail_next_writes(int n, doris::DorisError e, const std::string& table, int after_ok) {
  std::lock_guard lk(mu_);
  write_faults_.push_back({n, after_ok, table, std::move(e)});
}

void FakeDoris::fail_next_finishes(int n, doris::DorisError e, const std::string& table) {
  std::lock_guard lk(mu_);
  finish_faults_.push_back({n, 0, table, std::move(e)});
}

void FakeDoris::fail_next_commits(int n, doris::DorisError e) {
  std::lock_guard lk(mu_);
  commit_faults_.push_back({n, 0, "", std::move(e)});
}

void FakeDoris::fail_all_commits(std::optional<doris::DorisError> e) {
  std::lock_guard lk(mu_);
  all_commits_fail_ = std::move(e);
}

void FakeDoris::lose_next_commit(const std::string& table) {
  std::lock_guard lk(mu_);
  lose_.insert(table);
}

void FakeDoris::delay_commits(const std::string& table, std::chrono::milliseconds delay) {
  std::lock_guard lk(mu_);
  commit_delays_[table] = delay;
}

void FakeDoris::heal() {
  std::lock_guard lk(mu_);
  commit_delays_.clear();
  write_faults_.clear();
  finish_faults_.clear();
  commit_faults_.clear();
  all_commits_fail_.reset();
  lose_.clear();
}

FakeDoris::Stats FakeDoris::stats() const {
  std::lock_guard lk(mu_);
  return stats_;
}

std::vector<FakeDoris::Txn> FakeDoris::txns() const {
  std::lock_guard lk(mu_);
  std::vector<Txn> out;
  for (const auto& [id, t] : txns_) out.push_back(t);
  return out;
}

std::optional<FakeDoris::Txn> FakeDoris::txn_by_label(const std::string& db, const std::string& label) const {
  std::lock_guard lk(mu_);
  const Txn* found = nullptr;
  for (const auto& [id, t] : txns_)
    if (t.db == db && t.label == label) found = &t;  // the newest
  if (found == nullptr) return std::nullopt;
  return *found;
}

int FakeDoris::open_txns(const std::string& db) const {
  std::lock_guard lk(mu_);
  int n = 0;
  for (const auto& [id, t] : txns_)
    if (t.db == db && open_state(t.state)) ++n;
  return n;
}

FakeDoris::Table FakeDoris::table(const std::string& db, const std::string& table) const {
  std::lock_guard lk(mu_);
  auto it = tables_.find(db + "." + table);
  return it == tables_.end() ? Table{} : it->second;
}

std::map<std::string, FakeDoris::Table> FakeDoris::tables() const {
  std::lock_guard lk(mu_);
  return tables_;
}

std::optional<doris::DorisError> FakeDoris::take(std::vector<Fault>& faults, const std::string& table) {
  for (auto it = faults.begin(); it != faults.end(); ++it) {
    if (!it->table.empty() && it->table != table) continue;
    if (it->skip > 0) {
      --it->skip;
      return std::nullopt;
    }
    auto e = it->error;
    if (--it->remaining <= 0) faults.erase(it);
    return e;
  }
  return std::nullopt;
}

FakeDoris::Txn* FakeDoris::find_label_locked(const std::string& db, const std::string& label) {
  Txn* found = nullptr;
  for (auto& [id, t] : txns_)
    if (t.db == db && t.label == label) found = &t;
  return found;
}

void FakeDoris::track_open_locked(const std::string& db) {
  int n = 0;
  for (const auto& [id, t] : txns_)
    if (t.db == db && open_state(t.state)) ++n;
  int& m = stats_.max_open_per_db[db];
  m = std::max(m, n);
}

std::variant<int64_t, doris::DorisError> FakeDoris::begin_txn(const doris::LoadSpec& spec) {
  std::lock_guard lk(mu_);
  ++stats_.streams_opened;
  if (!tables_.count(spec.db + "." + spec.table))
    return err(doris::ErrorKind::UnknownTable, Disposition::Fatal, "unknown table", spec.db, spec.table, spec.label);
  if (Txn* t = find_label_locked(spec.db, spec.label); t != nullptr && t->state != TxnState::Aborted) {
    ++stats_.label_conflicts;
    const bool finished = t->state == TxnState::Committed;
    auto e = err(doris::ErrorKind::LabelExists, finished ? Disposition::Fail : Disposition::Retry,
                 "Label Already Exists", spec.db, spec.table, spec.label);
    e.existing_label = doris::LabelState{finished                           ? doris::LabelState::Finished
                                         : t->state == TxnState::Prepare ? doris::LabelState::Running
                                                                          : doris::LabelState::Precommitted,
                                         t->id};
    return e;
  }
  Txn t{next_txn_++, spec.db, spec.table, spec.label, TxnState::Prepare, {}, spec.headers};
  txns_[t.id] = t;
  track_open_locked(spec.db);
  return t.id;
}

std::optional<doris::DorisError> FakeDoris::on_write(const doris::LoadSpec& spec) {
  std::lock_guard lk(mu_);
  ++stats_.writes;
  return take(write_faults_, spec.table);
}

std::variant<doris::LoadResult, doris::DorisError> FakeDoris::precommit(const doris::LoadSpec& spec, int64_t txn_id,
                                                                        const std::string& body) {
  std::lock_guard lk(mu_);
  ++stats_.finishes;
  if (auto e = take(finish_faults_, spec.table)) return *e;
  auto it = txns_.find(txn_id);
  if (it == txns_.end() || it->second.state != TxnState::Prepare)
    return err(doris::ErrorKind::ServerError, Disposition::Retry, "txn is not PREPARE any more", spec.db, spec.table,
               spec.label);
  Txn& t = it->second;
  size_t start = 0;
  while (start < body.size()) {
    size_t nl = body.find('\n', start);
    if (nl == std::string::npos) nl = body.size();
    if (nl > start) t.rows.push_back(body.substr(start, nl - start));
    start = nl + 1;
  }
  t.state = TxnState::Precommitted;
  doris::LoadResult r;
  r.txn_id = t.id;
  r.label = t.label;
  r.status = "Success";
  r.total_rows = r.loaded_rows = static_cast<int64_t>(t.rows.size());
  r.load_bytes = static_cast<int64_t>(body.size());
  return r;
}

void FakeDoris::apply_row(Table& tab, const std::string& row) {
  if (!tab.unique) {
    tab.dup_rows.push_back(row);
    return;
  }
  // Rows are {"<key>":<value>,...}: the first member is the key.
  const size_t colon = row.find(':');
  const size_t comma = row.find(',', colon);
  std::string key = row.substr(colon + 1, comma - colon - 1);
  const bool del = row.find("\"__DORIS_DELETE_SIGN__\":1") != std::string::npos;
  if (del)
    tab.rows.erase(key);
  else
    tab.rows[key] = workload::strip_delete_sign(row);
}

void FakeDoris::apply_locked(const Txn& t) {
  Table& tab = tables_[t.db + "." + t.table];
  for (const auto& row : t.rows) apply_row(tab, row);
}

doris::TxnResult FakeDoris::commit_locked(Txn& t) {
  ++stats_.commits;
  if (all_commits_fail_) return *all_commits_fail_;
  if (auto e = take(commit_faults_, "")) return *e;
  if (lose_.count(t.table) && open_state(t.state)) {
    lose_.erase(lose_.find(t.table));
    t.state = TxnState::Aborted;
    stats_.lost_labels.push_back(t.label);
    return doris::TxnOutcome::NotFoundOrAborted;
  }
  switch (t.state) {
    case TxnState::Prepare:
      return err(doris::ErrorKind::TxnNotPrecommitted, Disposition::Retry, "txn is PREPARE", t.db, t.table, t.label);
    case TxnState::Precommitted:
      t.state = TxnState::Committed;
      apply_locked(t);
      return doris::TxnOutcome::Done;
    case TxnState::Committed: return doris::TxnOutcome::AlreadyDone;
    case TxnState::Aborted: return doris::TxnOutcome::NotFoundOrAborted;
  }
  return doris::TxnOutcome::NotFoundOrAborted;
}

doris::TxnResult FakeDoris::abort_locked(Txn& t) {
  switch (t.state) {
    case TxnState::Prepare:
    case TxnState::Precommitted:
      t.state = TxnState::Aborted;
      ++stats_.aborts;
      return doris::TxnOutcome::Done;
    case TxnState::Committed:
      return err(doris::ErrorKind::AlreadyCommitted, Disposition::Fail, "txn is already COMMITTED", t.db, t.table,
                 t.label);
    case TxnState::Aborted: return doris::TxnOutcome::AlreadyDone;
  }
  return doris::TxnOutcome::AlreadyDone;
}

std::unique_ptr<doris::LoadStream> FakeDoris::open_load(doris::LoadSpec spec) {
  return std::make_unique<FakeLoadStream>(*this, std::move(spec));
}

std::future<doris::TxnResult> FakeDoris::commit_async(const std::string& db, int64_t txn_id) {
  std::lock_guard lk(mu_);
  auto it = txns_.find(txn_id);
  if (it == txns_.end() || it->second.db != db) {
    ++stats_.commits;
    return ready<doris::TxnResult>(doris::TxnOutcome::NotFoundOrAborted);
  }
  if (auto d = commit_delays_.find(it->second.table); d != commit_delays_.end()) {
    const auto delay = d->second;
    return std::async(std::launch::async, [this, txn_id, delay] {
      std::this_thread::sleep_for(delay);
      std::lock_guard lk2(mu_);
      return commit_locked(txns_.at(txn_id));
    });
  }
  return ready(commit_locked(it->second));
}

std::future<doris::TxnResult> FakeDoris::abort_async(const std::string& db, int64_t txn_id) {
  std::lock_guard lk(mu_);
  auto it = txns_.find(txn_id);
  if (it == txns_.end() || it->second.db != db) return ready<doris::TxnResult>(doris::TxnOutcome::NotFoundOrAborted);
  return ready(abort_locked(it->second));
}

std::future<doris::TxnResult> FakeDoris::commit_by_label_async(const std::string& db, const std::string& label) {
  std::lock_guard lk(mu_);
  Txn* t = find_label_locked(db, label);
  if (t == nullptr) return ready<doris::TxnResult>(doris::TxnOutcome::NotFoundOrAborted);
  return ready(commit_locked(*t));
}

std::future<doris::TxnResult> FakeDoris::abort_by_label_async(const std::string& db, const std::string& label) {
  std::lock_guard lk(mu_);
  Txn* t = find_label_locked(db, label);
  if (t == nullptr) return ready<doris::TxnResult>(doris::TxnOutcome::NotFoundOrAborted);
  return ready(abort_locked(*t));
}

std::variant<doris::LabelState, doris::DorisError> FakeDoris::probe_label(const doris::LoadSpec& spec) {
  std::lock_guard lk(mu_);
  ++stats_.probes;
  if (!tables_.count(spec.db + "." + spec.table))
    return err(doris::ErrorKind::UnknownTable, Disposition::Fatal, "unknown table", spec.db, spec.table, spec.label);
  Txn* t = find_label_locked(spec.db, spec.label);
  // An aborted label may be reused: the probe's own txn begins and is aborted.
  if (t == nullptr || t->state == TxnState::Aborted) return doris::LabelState{doris::LabelState::Unused, std::nullopt};
  switch (t->state) {
    case TxnState::Prepare: return doris::LabelState{doris::LabelState::Running, t->id};
    case TxnState::Precommitted: return doris::LabelState{doris::LabelState::Precommitted, t->id};
    default: return doris::LabelState{doris::LabelState::Finished, t->id};
  }
}

std::variant<doris::TableSchema, doris::DorisError> FakeDoris::schema(const std::string& db, const std::string& table) {
  std::lock_guard lk(mu_);
  auto it = tables_.find(db + "." + table);
  if (it == tables_.end()) return err(doris::ErrorKind::UnknownTable, Disposition::Fatal, "unknown table", db, table);
  doris::TableSchema s;
  s.keys_type = it->second.unique ? "UNIQUE_KEYS" : "DUP_KEYS";
  s.columns = it->second.columns;
  return s;
}

void FakeDoris::set_columns(const std::string& db, const std::string& table, std::vector<doris::ColumnSchema> columns) {
  std::lock_guard lk(mu_);
  tables_[db + "." + table].columns = std::move(columns);
}

std::variant<doris::SqlResult, doris::DorisError> FakeDoris::sql(const std::string& db, const std::string&) {
  return err(doris::ErrorKind::BadRequest, Disposition::Fatal, "sql is not supported by the fake", db);
}

}  // namespace cdc2doris::test
