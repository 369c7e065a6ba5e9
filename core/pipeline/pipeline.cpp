#include "core/pipeline/pipeline.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <future>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <variant>

#include "core/common/crash_point.hpp"
#include "core/doris/backoff.hpp"
#include "core/doris/label.hpp"
#include "core/pipeline/epoch_machine.hpp"

namespace cdc2doris::pipeline {

const char* to_string(BadRecordPolicy p) {
  switch (p) {
    case BadRecordPolicy::Fail: return "fail";
    case BadRecordPolicy::Skip: return "skip";
    case BadRecordPolicy::DeadLetter: return "dead_letter";
  }
  return "?";
}

namespace {

using Clock = std::chrono::steady_clock;
using kafka::TopicPartition;

int64_t unix_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

TopicPartition to_kafka(const state::TopicPartition& tp) { return {tp.topic, tp.partition}; }

// A fatal condition that unwinds to run(): the pipeline stops, nothing past
// it is committed.
struct FatalStop {
  Error error;
};

// One Stream Load of the epoch being filled.
struct OpenLoad {
  Target target;
  doris::LoadSpec spec;
  std::unique_ptr<doris::LoadStream> stream;
  std::string pending;  // rows gathered before they are handed to the stream
  uint64_t rows = 0;
  uint64_t bytes = 0;
};

// The epoch being filled.
struct OpenEpoch {
  uint64_t epoch = 0;
  Phase phase = Phase::Open;
  state::EpochRecord record;  // built when its loads are pre-committed
  std::map<Target, OpenLoad> loads;
  Clock::time_point started = Clock::now();
  bool end_requested = false;
  bool dead_letters = false;  // dead letters produced since the last flush
};

// The epoch being committed (at most one; its record is in the store).
struct ClosingEpoch {
  state::EpochRecord record;
  Phase phase = Phase::Committing;
  std::vector<std::pair<size_t, std::future<doris::TxnResult>>> inflight;  // index into record.txns
  Clock::time_point committing_since = Clock::now();
  Clock::time_point retry_at{};
  int attempt = 0;
  std::set<size_t> lost;
};

// Re-reading one recorded epoch's offset range for the tables whose txn
// Doris lost (aborted after a pre-commit timeout, label expired...).
struct Replay {
  Phase phase = Phase::Replaying;
  state::EpochRecord record;
  std::set<Target> tables;
  std::map<TopicPartition, std::pair<int64_t, int64_t>> ranges;  // [start, end)
  std::set<TopicPartition> remaining;
  std::map<Target, OpenLoad> loads;
  bool positioned = false;  // partitions sought to their start offsets
  int attempt = 0;
};

}  // namespace

class Pipeline::Impl : public kafka::RebalanceListener {
 public:
  Impl(PipelineConfig config, decode::DecoderOptions decoder_options, Dependencies deps)
      : cfg_(std::move(config)),
        deps_(deps),
        decoder_(std::move(decoder_options)),
        log_(spdlog::default_logger()->clone("pipeline")),
        backoff_{cfg_.backoff_base, cfg_.backoff_cap} {
    if (cfg_.bad_record_policy == BadRecordPolicy::DeadLetter &&
        (deps_.dead_letters == nullptr || cfg_.dead_letter_topic.empty()))
      throw std::invalid_argument("bad-record policy dead_letter needs a dead-letter topic and producer");
  }

  RunResult run();
  void request_stop() { stop_.store(true); }
  bool stop_requested() const { return stop_.load(); }

  // RebalanceListener (called inside source.poll() on this thread)
  kafka::OffsetMap on_assign(const std::vector<TopicPartition>& added) override;
  void on_revoke(const std::vector<TopicPartition>& revoked, bool lost) override;

 private:
  enum class Who { Open, Closing, Replay };
  enum class LostCheck { Committed, Lost, Retry };

  kafka::OffsetMap assign_partitions(const std::vector<TopicPartition>& added);
  void revoke_partitions(const std::vector<TopicPartition>& revoked, bool lost);
  // --- recovery
  void recover();
  void abort_lingering();
  // --- main loop
  void process(const kafka::Message& msg);
  // Topic names compared by the source's pointer first: librdkafka hands out
  // one name per topic, so a per-record string compare is rarely needed. Only
  // within one batch, whose records keep their names alive: two live names
  // cannot share an address, while a freed one could be reused.
  bool same_topic(std::string_view a, const std::string& b) const {
    if (a.data() == current_topic_name_.data() && a.size() == current_topic_name_.size()) return true;
    return a == b;
  }
  // Both records of the same batch (alive), so equal pointers mean equal names.
  static bool same_partition(const kafka::Message& a, std::string_view topic, int32_t partition) {
    return a.partition == partition && ((a.topic.data() == topic.data() && a.topic.size() == topic.size()) || a.topic == topic);
  }
  void handle_change();
  void bad_record(const kafka::Message& msg, const decode::DecodeError& err);
  // nullptr when opening failed and the epoch was aborted (the record is re-read).
  OpenLoad* load_for(std::map<Target, OpenLoad>& loads, const Target& target, const decode::Row& row,
                     uint64_t epoch, bool may_end_epoch);
  void append_row(OpenLoad& load, const decode::Row& row);
  std::optional<doris::DorisError> flush_pending(OpenLoad& load);
  bool should_end_epoch() const;
  void apply_memory_cap();
  // --- epoch lifecycle, driven by transition()
  void step(Who who, Event event);
  void end_open_epoch(const char* reason);
  std::optional<doris::DorisError> finish_loads(std::map<Target, OpenLoad>& loads, std::vector<state::TableTxn>& txns);
  void start_commits(ClosingEpoch& closing);
  void drive_closing(bool block);
  LostCheck classify_lost(const state::TableTxn& txn);
  void mark_committed(ClosingEpoch& closing);
  void commit_offsets(const ClosingEpoch& closing);
  void open_next_epoch();
  // --- replay
  void begin_replay();
  void position_replay();
  void process_replay(const kafka::Message& msg);
  void finish_replay();
  void resume_after_replay();
  // --- failures
  void fail(const Error& error, const std::string& reason);
  void abort_loads(std::map<Target, OpenLoad>& loads);
  void abort_open_epoch_for_replay();
  void rewind(const std::string& reason);
  void sleep_backoff(int attempt);
  // --- helpers
  std::optional<bool> table_unique_key(const Target& t, const TableSettings& s);
  int open_txns_in_db(const std::string& db) const;
  state::EpochRecord make_record(uint64_t epoch, std::vector<state::TableTxn> txns) const;
  void publish_partitions();
  void shutdown(RunResult& result);
  Clock::time_point stop_deadline();
  bool stop_deadline_passed();
  // A load cannot be placed because the closing epoch did not commit before
  // the shutdown deadline: abort the open epoch (it is re-read by the next start).
  void abort_open_epoch_stopping();

  PipelineConfig cfg_;
  Dependencies deps_;
  decode::Decoder decoder_;
  decode::Change change_;
  std::shared_ptr<spdlog::logger> log_;
  doris::Backoff backoff_;
  std::atomic<bool> stop_{false};

  uint64_t last_committed_epoch_ = 0;
  OpenEpoch open_;
  std::optional<ClosingEpoch> closing_;
  std::optional<Replay> replay_;
  // Per assigned partition: next offset to process, and where the open epoch
  // started (the rewind target: the end of the last recorded epoch).
  std::map<TopicPartition, int64_t> pos_;
  std::map<TopicPartition, int64_t> base_;
  TopicPartition current_tp_{"", -1};  // process(): the previous record's partition
  std::string_view current_topic_name_;  // the source's view of its topic name (librdkafka: one per topic)
  // End offsets of committed epochs, for partitions (re)assigned later.
  std::map<TopicPartition, int64_t> committed_;
  std::map<Target, bool> unique_key_cache_;
  uint64_t rewind_generation_ = 0;
  bool paused_ = false;
  bool subscribed_ = false;
  int consecutive_failures_ = 0;
  std::optional<Error> failure_;  // what the next failure event is about
  std::optional<Clock::time_point> stop_deadline_;  // set once the stop request is seen
  bool closing_source_ = false;  // inside the final source.close()
  std::optional<Error> deferred_stop_;  // raised inside a rebalance callback
  kafka::OffsetMap group_offsets_pending_;
  Clock::time_point last_publish_{};  // committed during recovery, before subscribe
  std::string failure_reason_;
};

// ============================================================== recovery

void Pipeline::Impl::recover() {
  for (const auto& [tp, off] : deps_.store.committed_offsets()) committed_[to_kafka(tp)] = off.offset;
  auto latest = deps_.store.latest();
  if (!latest) {
    open_.epoch = 1;
  } else if (latest->state == state::EpochState::Committed) {
    last_committed_epoch_ = latest->epoch;
    open_.epoch = latest->epoch + 1;
  } else if (latest->state == state::EpochState::Aborted) {
    // An aborted record never committed anything; its number is reused.
    open_.epoch = latest->epoch;
    if (auto prev = latest->epoch > 1 ? deps_.store.get(latest->epoch - 1) : std::nullopt)
      last_committed_epoch_ = prev->epoch;
  } else {
    open_.epoch = latest->epoch + 1;
    log_->info("recovery: epoch {} is PRECOMMITTED with {} txn(s); rolling it forward", latest->epoch,
               latest->txns.size());
    if (auto prev = latest->epoch > 1 ? deps_.store.get(latest->epoch - 1) : std::nullopt)
      last_committed_epoch_ = prev->epoch;
    closing_.emplace();
    closing_->record = *latest;
    start_commits(*closing_);
    // Commits run now; a txn Doris lost turns the epoch into a replay, which
    // the main loop finishes once the partitions are assigned.
    drive_closing(/*block=*/true);
  }
  abort_lingering();
  deps_.metrics.set_epochs(open_.epoch, last_committed_epoch_);
}

void Pipeline::Impl::abort_lingering() {
  // Every label prefix ever used, and where its labels could linger: no epoch
  // number is used before the previous epoch's record is synced, so the only
  // labels that can hold open txns are those after the last recorded epoch.
  struct Walk {
    std::string prefix;
    uint64_t first_epoch;
  };
  std::vector<Walk> walks{{cfg_.label_prefix, open_.epoch}};
  for (const auto& use : deps_.store.label_prefixes())
    if (use.prefix != cfg_.label_prefix) walks.push_back({use.prefix, use.last_epoch + 1});

  std::set<Target> tables;
  for (const auto& [t, e] : deps_.store.table_epochs()) tables.insert({t.db, t.table});
  for (const auto& t : deps_.router.known_targets()) tables.insert(t);
  if (tables.empty()) return;

  std::vector<std::pair<Walk, Target>> work;
  for (const auto& w : walks)
    for (const auto& t : tables) work.push_back({w, t});

  std::mutex mu;
  std::optional<Error> fatal;
  std::atomic<size_t> next{0};
  std::atomic<uint64_t> aborted{0};
  auto worker = [&] {
    for (size_t i = next++; i < work.size(); i = next++) {
      const auto& [walk, target] = work[i];
      for (int n = 0; n < cfg_.probe_max_labels; ++n) {
        doris::LoadSpec spec;
        spec.db = target.db;
        spec.table = target.table;
        spec.label = doris::make_label(walk.prefix, target.db, target.table, walk.first_epoch + n);
        auto probed = deps_.doris.probe_label(spec);
        if (auto* err = std::get_if<doris::DorisError>(&probed)) {
          // A table that does not exist (any more) cannot hold txns of ours.
          if (err->kind() == doris::ErrorKind::UnknownTable) break;
          std::lock_guard lk(mu);
          if (!fatal) fatal = *err;
          return;
        }
        const auto& st = std::get<doris::LabelState>(probed);
        if (st.state == doris::LabelState::Unused) break;
        if (st.state == doris::LabelState::Finished) {
          std::lock_guard lk(mu);
          ErrorContext ctx;
          ctx.table = target.name();
          ctx.label = spec.label;
          ctx.txn_id = st.txn_id;
          if (!fatal)
            fatal = Error(Disposition::Fatal,
                          "label " + spec.label +
                              " is already FINISHED in Doris but the checkpoint state does not know it: the state "
                              "directory was reset or belongs to another pipeline; set a new delivery.label_prefix",
                          ctx);
          return;
        }
        if (st.txn_id) {
          auto r = deps_.doris.abort(target.db, *st.txn_id);
          if (auto* err = std::get_if<doris::DorisError>(&r)) {
            std::lock_guard lk(mu);
            if (!fatal) fatal = *err;
            return;
          }
          ++aborted;
          log_->info("recovery: aborted lingering txn {} (label {}, table {})", *st.txn_id, spec.label,
                     target.name());
        }
      }
    }
  };
  {
    std::vector<std::jthread> workers;
    int n = std::clamp<int>(cfg_.probe_parallelism, 1, static_cast<int>(work.size()));
    for (int i = 0; i < n; ++i) workers.emplace_back(worker);
  }
  deps_.metrics.lingering_txns_aborted += aborted.load();
  if (fatal) throw FatalStop{*fatal};
}

// ============================================================== rebalance

// The rebalance callbacks run inside librdkafka's C frames (source.poll()):
// nothing may unwind through them. A stop raised inside is kept and re-thrown
// by the run loop once poll() returned.
kafka::OffsetMap Pipeline::Impl::on_assign(const std::vector<TopicPartition>& added) {
  try {
    return assign_partitions(added);
  } catch (const FatalStop& f) {
    if (!deferred_stop_) deferred_stop_ = f.error;
  } catch (const state::StateError& e) {
    if (!deferred_stop_) deferred_stop_ = e.to_error();
  }
  return {};
}

void Pipeline::Impl::on_revoke(const std::vector<TopicPartition>& revoked, bool lost) {
  try {
    revoke_partitions(revoked, lost);
  } catch (const FatalStop& f) {
    if (!deferred_stop_) deferred_stop_ = f.error;
  } catch (const state::StateError& e) {
    if (!deferred_stop_) deferred_stop_ = e.to_error();
  }
}

kafka::OffsetMap Pipeline::Impl::assign_partitions(const std::vector<TopicPartition>& added) {
  kafka::OffsetMap out;
  for (const auto& tp : added) {
    if (replay_) {
      if (auto it = replay_->ranges.find(tp); it != replay_->ranges.end()) {
        out[tp] = it->second.first;
        pos_[tp] = it->second.second;
        base_[tp] = it->second.second;
        continue;
      }
    }
    if (auto it = committed_.find(tp); it != committed_.end()) {
      out[tp] = it->second;
      pos_[tp] = it->second;
      base_[tp] = it->second;
    }
    // Otherwise the group's committed offset or auto.offset.reset decides;
    // the first record seen fixes the epoch's start for that partition.
  }
  log_->info("assigned {} partition(s)", added.size());
  if (replay_ && replay_->positioned == false) {
    bool all = std::all_of(replay_->ranges.begin(), replay_->ranges.end(),
                           [&](const auto& r) { return pos_.count(r.first) > 0; });
    if (all) replay_->positioned = true;  // the assignment itself starts them at the replay range
  }
  publish_partitions();
  return out;
}

void Pipeline::Impl::revoke_partitions(const std::vector<TopicPartition>& revoked, bool lost) {
  log_->info("{} {} partition(s)", lost ? "lost" : "revoking", revoked.size());
  // The final revoke of source.close() ends nothing: shutdown() already ended
  // the epoch (or ran out of time), and after a fatal error the open epoch
  // holds rows that never reached Doris — recording it would commit offsets
  // past them.
  if (!lost && !replay_ && !closing_source_) {
    end_open_epoch("partition revocation");
    drive_closing(/*block=*/true);
    if (closing_) {
      // Stopping, and the previous epoch did not commit before the shutdown
      // deadline: the open epoch cannot be recorded before the partitions
      // go, so it is aborted like for lost partitions.
      abort_open_epoch_for_replay();
      rewind("partition revocation while stopping");
    }
  }
  for (const auto& tp : revoked) {
    pos_.erase(tp);
    base_.erase(tp);
    deps_.metrics.erase_partition(kafka::to_string(tp));
  }
  if (lost && !replay_) {
    // Someone else owns them already: committing their rows now could race
    // the new owner. The rest is re-read.
    abort_open_epoch_for_replay();
    rewind("partitions lost");
  }
}

// ============================================================== main loop

RunResult Pipeline::Impl::run() {
  RunResult result;
  try {
    recover();
    deps_.metrics.recovered = true;
    deps_.source.subscribe(*this);
    subscribed_ = true;
    log_->info("consuming; epoch {} open, label prefix '{}'", open_.epoch, cfg_.label_prefix);
    deps_.metrics.set_phase(to_string(Phase::Open));
    while (!stop_.load()) {
      auto polled = deps_.source.poll(cfg_.poll_timeout, cfg_.poll_max_messages);
      if (deferred_stop_) throw FatalStop{*deferred_stop_};
      if (!group_offsets_pending_.empty() && !pos_.empty()) {
        kafka::OffsetMap mine;
        for (const auto& [tp, off] : group_offsets_pending_)
          if (pos_.count(tp)) mine[tp] = off;
        if (!mine.empty())
          if (auto err = deps_.source.commit(mine, "cdc2doris recovery"))
            log_->warn("committing recovered offsets to the consumer group failed: {}", err->what());
        group_offsets_pending_.clear();
      }
      for (const auto& e : polled.transient) {
        log_->warn("kafka: {}", e.what());
        deps_.metrics.kafka_error_unix_ms = unix_ms();
      }
      // A partition without an epoch start (first epoch, no committed
      // offset) starts where its first fetched record is: a rewind must be
      // able to seek it back there even if that record is not processed
      // (a failure earlier in the batch, or an error returned with it).
      // Records come in runs of one partition, in offset order: the first of
      // each run is enough (this loop built a heap key per record before).
      const kafka::Message* run_start = nullptr;
      for (const auto& msg : polled.batch) {
        if (run_start != nullptr && same_partition(*run_start, msg.topic, msg.partition)) continue;
        run_start = &msg;
        base_.try_emplace(TopicPartition{std::string(msg.topic), msg.partition}, msg.offset);
      }
      // Taken before the errors: a rewind they cause drops the whole batch
      // (it was fetched before the seek; processing it would move the
      // positions past the records the seek is to re-read).
      const uint64_t generation = rewind_generation_;
      for (const auto& e : polled.errors) {
        if (e.disposition() == Disposition::Fatal) throw FatalStop{e};
        fail(e, "kafka");
      }
      current_topic_name_ = {};  // the previous batch's names may be gone (see same_topic)
      for (const auto& msg : polled.batch) {
        if (rewind_generation_ != generation) break;  // the rest was fetched before a rewind
        if (replay_)
          process_replay(msg);
        else
          process(msg);
      }
      polled.batch.release();
      if (replay_ && replay_->positioned && replay_->remaining.empty()) finish_replay();
      drive_closing(/*block=*/false);
      if (!replay_ && should_end_epoch()) end_open_epoch(open_.end_requested ? "size" : "interval");
      apply_memory_cap();
      // Positions and lag for /status and /metrics, at most once a second.
      if (Clock::now() - last_publish_ >= std::chrono::seconds(1)) {
        publish_partitions();
        last_publish_ = Clock::now();
      }
    }
    shutdown(result);
  } catch (const FatalStop& f) {
    log_->error("stopping: {}", f.error.what());
    // Unrecorded txns are aborted now rather than left for the pre-commit
    // timeout; a recorded epoch stays as it is for the next start.
    abort_loads(open_.loads);
    if (replay_) abort_loads(replay_->loads);
    closing_source_ = true;
    if (subscribed_) deps_.source.close(std::chrono::seconds(10));
    result.error = f.error;
  } catch (const state::StateError& e) {
    log_->error("stopping: checkpoint state: {}", e.what());
    abort_loads(open_.loads);
    closing_source_ = true;
    if (subscribed_) deps_.source.close(std::chrono::seconds(10));
    result.error = e.to_error();
  }
  deps_.metrics.set_phase(result.error ? "failed" : "stopped");
  return result;
}

void Pipeline::Impl::shutdown(RunResult& result) {
  const auto deadline = stop_deadline();
  log_->info("shutting down: finishing epoch {} (deadline {} ms)", open_.epoch, cfg_.shutdown_deadline.count());
  if (!replay_) end_open_epoch("shutdown");
  while (closing_ && Clock::now() < deadline) {
    drive_closing(/*block=*/false);
    if (closing_) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (closing_ || replay_) {
    // The recorded epoch stays PRECOMMITTED; the next start commits or replays it.
    // Txns not in any record are aborted (their rows are re-read).
    abort_loads(open_.loads);
    if (replay_) abort_loads(replay_->loads);
    result.error = Error(Disposition::Retry, "shutdown deadline passed before the last epoch committed; "
                                             "the next start rolls it forward");
  }
  closing_source_ = true;
  if (auto err = deps_.source.close(std::chrono::seconds(10))) log_->warn("kafka close: {}", err->what());
}

Clock::time_point Pipeline::Impl::stop_deadline() {
  // The shutdown deadline counts from the first time the pipeline thread
  // sees the stop request, wherever it was waiting then.
  if (!stop_deadline_) stop_deadline_ = Clock::now() + cfg_.shutdown_deadline;
  return *stop_deadline_;
}

bool Pipeline::Impl::stop_deadline_passed() { return stop_.load() && Clock::now() >= stop_deadline(); }

bool Pipeline::Impl::should_end_epoch() const {
  if (open_.end_requested) return true;
  return Clock::now() - open_.started >= cfg_.epoch_interval;
}

void Pipeline::Impl::process(const kafka::Message& msg) {
  // Records come in runs of one partition: build its key (a heap string for
  // most topic names) only when the partition changes.
  if (msg.partition != current_tp_.partition || !same_topic(msg.topic, current_tp_.topic))
    current_tp_ = TopicPartition{std::string(msg.topic), msg.partition};
  current_topic_name_ = msg.topic;
  const TopicPartition& tp = current_tp_;
  auto pit = pos_.find(tp);
  // A record before the partition's position was fetched before a seek: it
  // belongs to an epoch that is already recorded.
  if (pit != pos_.end() && msg.offset < pit->second) return;
  ++deps_.metrics.records_consumed;
  deps_.metrics.bytes_consumed += (msg.value ? msg.value->size() : 0) + (msg.key ? msg.key->size() : 0);

  const uint64_t generation = rewind_generation_;
  decode::KafkaRecord rec{msg.topic, msg.partition, msg.offset, msg.key, msg.value, {}};
  for (const auto& h : msg.headers) rec.headers.emplace_back(h.key, h.value.value_or(std::string_view{}));
  if (auto err = decoder_.decode(rec, change_)) {
    bad_record(msg, *err);
  } else if (change_.kind == decode::Kind::Change) {
    handle_change();
  } else {
    ++deps_.metrics.records_skipped;
    if (change_.kind == decode::Kind::SchemaChange || change_.kind == decode::Kind::Truncate)
      log_->warn("{} record at {}/{}@{} for {}.{} is not applied to Doris", decode::to_string(change_.kind),
                 msg.topic, msg.partition, msg.offset, change_.db, change_.table);
  }
  // A failure while handling the record rewound the partitions: the record
  // is read again later and must not move the position now.
  if (rewind_generation_ != generation || replay_) return;
  base_.try_emplace(tp, msg.offset);
  pos_.insert_or_assign(tp, msg.offset + 1);
}

void Pipeline::Impl::handle_change() {
  auto target = deps_.router.route(change_);
  if (!target) {
    ++deps_.metrics.records_skipped;
    return;
  }
  const uint64_t generation = rewind_generation_;
  for (const auto& row : change_.rows) {
    OpenLoad* load = load_for(open_.loads, *target, row, open_.epoch, /*may_end_epoch=*/true);
    if (load == nullptr || rewind_generation_ != generation || replay_) return;
    append_row(*load, row);
    if (rewind_generation_ != generation) return;
    if (load->rows >= cfg_.epoch_max_rows || load->bytes >= cfg_.epoch_max_bytes) open_.end_requested = true;
  }
}

void Pipeline::Impl::bad_record(const kafka::Message& msg, const decode::DecodeError& err) {
  const std::string reason = decode::to_string(err.code);
  deps_.metrics.add_bad_record(reason, to_string(cfg_.bad_record_policy));
  switch (cfg_.bad_record_policy) {
    case BadRecordPolicy::Fail: {
      failure_ = Error(Disposition::Fatal,
                       "bad record (policy fail; nothing from this offset on is committed): " + err.message(),
                       err.to_error().context());
      step(Who::Open, Event::LoadFailedFatal);
      return;
    }
    case BadRecordPolicy::Skip:
      log_->warn("skipping bad record: {}", err.message());
      return;
    case BadRecordPolicy::DeadLetter:
      if (auto e = deps_.dead_letters->produce(cfg_.dead_letter_topic, msg, err.message())) {
        fail(*e, "dead-letter");
        return;
      }
      open_.dead_letters = true;
      log_->warn("bad record sent to dead-letter topic {}: {}", cfg_.dead_letter_topic, err.message());
      return;
  }
}

int Pipeline::Impl::open_txns_in_db(const std::string& db) const {
  int n = 0;
  for (const auto& [t, l] : open_.loads)
    if (t.db == db) ++n;
  if (closing_)
    for (const auto& txn : closing_->record.txns)
      if (txn.db == db && !txn.committed) ++n;
  return n;
}

OpenLoad* Pipeline::Impl::load_for(std::map<Target, OpenLoad>& loads, const Target& target, const decode::Row& row,
                                   uint64_t epoch, bool may_end_epoch) {
  auto it = loads.find(target);
  if (it != loads.end()) {
    if (it->second.spec.partial_columns == row.partial_columns || !may_end_epoch) return &it->second;
    // One column set per load: a partial (TOAST) row after full rows, or the
    // reverse, starts a new epoch so Doris applies them in order.
    const uint64_t generation = rewind_generation_;
    end_open_epoch("column set change");
    if (rewind_generation_ != generation || replay_) return nullptr;
    if (closing_) {  // not ended: stopping, past the shutdown deadline
      abort_open_epoch_stopping();
      return nullptr;
    }
    return load_for(open_.loads, target, row, open_.epoch, may_end_epoch);
  }
  if (may_end_epoch && open_txns_in_db(target.db) >= cfg_.open_txn_budget_per_db) {
    const uint64_t generation = rewind_generation_;
    drive_closing(/*block=*/true);
    if (!replay_ && open_txns_in_db(target.db) >= cfg_.open_txn_budget_per_db) {
      end_open_epoch("open-transaction budget");
      drive_closing(/*block=*/true);
    }
    if (rewind_generation_ != generation || replay_) return nullptr;
    if (closing_) {  // not committed: stopping, past the shutdown deadline
      abort_open_epoch_stopping();
      return nullptr;
    }
    if (open_txns_in_db(target.db) >= cfg_.open_txn_budget_per_db) {
      // Nothing of ours is open any more: the budget itself is below one epoch's need.
      failure_ = Error(Disposition::Fatal, "delivery.open_transaction_budget (" +
                                               std::to_string(cfg_.open_txn_budget_per_db) +
                                               ") is too small for one table's load in database " + target.db);
      step(Who::Open, Event::LoadFailedFatal);
    }
    return load_for(open_.loads, target, row, open_.epoch, may_end_epoch);
  }
  TableSettings settings = deps_.router.settings(target);
  auto unique = table_unique_key(target, settings);
  if (!unique) return nullptr;
  OpenLoad load;
  load.target = target;
  load.spec.db = target.db;
  load.spec.table = target.table;
  load.spec.label = doris::make_label(cfg_.label_prefix, target.db, target.table, epoch);
  load.spec.unique_key = *unique;
  load.spec.sequence_col = settings.sequence_col;
  load.spec.partial_columns = row.partial_columns;
  load.spec.headers = settings.headers;
  load.stream = deps_.doris.open_load(load.spec);
  return &loads.emplace(target, std::move(load)).first->second;
}

std::optional<bool> Pipeline::Impl::table_unique_key(const Target& t, const TableSettings& s) {
  if (s.unique_key) return *s.unique_key;
  if (auto it = unique_key_cache_.find(t); it != unique_key_cache_.end()) return it->second;
  auto schema = deps_.doris.schema(t.db, t.table);
  if (auto* err = std::get_if<doris::DorisError>(&schema)) {
    fail(*err, "schema lookup");
    return std::nullopt;
  }
  const auto& keys = std::get<doris::TableSchema>(schema).keys_type;
  bool unique = keys == "UNIQUE_KEYS";
  unique_key_cache_[t] = unique;
  log_->info("table {} has key model {}", t.name(), keys);
  return unique;
}

void Pipeline::Impl::append_row(OpenLoad& load, const decode::Row& row) {
  load.pending.append(row.json);
  load.pending.push_back('\n');
  load.rows += 1;
  load.bytes += row.json.size() + 1;
  if (load.pending.size() >= cfg_.write_chunk_bytes) {
    if (auto err = flush_pending(load)) fail(*err, "load");
  }
}

std::optional<doris::DorisError> Pipeline::Impl::flush_pending(OpenLoad& load) {
  if (load.pending.empty()) return std::nullopt;
  // Rows already handed to a stream that then fails are gone with it, so a
  // failed stream is never reopened in place: the epoch is aborted and
  // re-read from Kafka. That includes "Label Already Exists" for a txn an
  // earlier run left behind: aborting the epoch aborts by label, which frees
  // the label for the retry.
  auto err = load.stream->write(load.pending);
  if (err) {
    deps_.metrics.add_doris_error(doris::to_string(err->kind()));
    deps_.metrics.set_table_error(load.target.name(), err->what());
    return err;
  }
  load.pending.clear();
  return std::nullopt;
}

void Pipeline::Impl::apply_memory_cap() {
  uint64_t buffered = 0;
  for (const auto& [t, l] : open_.loads) buffered += l.pending.size() + l.stream->buffered_bytes();
  deps_.metrics.buffered_bytes = buffered;
  if (!paused_ && buffered > cfg_.memory_cap_bytes) {
    if (auto err = deps_.source.pause(deps_.source.assignment())) log_->warn("pause: {}", err->what());
    paused_ = true;
    log_->info("memory cap reached ({} bytes buffered): partitions paused", buffered);
    // The buffers drain when the epoch ends; end it now rather than wait for the timer.
    open_.end_requested = true;
  } else if (paused_ && buffered <= cfg_.memory_cap_bytes / 2) {
    if (auto err = deps_.source.resume(deps_.source.assignment())) log_->warn("resume: {}", err->what());
    paused_ = false;
  }
}

// ============================================================== epochs

state::EpochRecord Pipeline::Impl::make_record(uint64_t epoch, std::vector<state::TableTxn> txns) const {
  state::EpochRecord rec;
  rec.epoch = epoch;
  rec.label_prefix = cfg_.label_prefix;
  rec.state = state::EpochState::Precommitted;
  rec.txns = std::move(txns);
  rec.created_unix_ms = unix_ms();
  for (const auto& [tp, end] : pos_) {
    auto b = base_.find(tp);
    rec.partitions.push_back({tp.topic, tp.partition, b == base_.end() ? end : b->second, end});
  }
  return rec;
}

std::optional<doris::DorisError> Pipeline::Impl::finish_loads(std::map<Target, OpenLoad>& loads,
                                                              std::vector<state::TableTxn>& txns) {
  // Bodies first, answers after: every BE works on its load in parallel.
  for (auto& [target, load] : loads)
    if (auto err = flush_pending(load)) return err;
  for (auto& [target, load] : loads) {
    auto res = load.stream->finish();
    if (auto* err = std::get_if<doris::DorisError>(&res)) {
      deps_.metrics.add_doris_error(doris::to_string(err->kind()));
      deps_.metrics.set_table_error(target.name(), err->what());
      return *err;
    }
    const auto& r = std::get<doris::LoadResult>(res);
    if (r.filtered_rows > 0)
      log_->warn("table {}: {} row(s) filtered by Doris within max_filter_ratio (label {}, txn {}, {})", target.name(),
                 r.filtered_rows, load.spec.label, r.txn_id, r.error_url);
    deps_.metrics.add_table_load(target.name(), load.rows, load.bytes, unix_ms());
    txns.push_back({target.db, target.table, load.spec.label, r.txn_id, false});
  }
  return std::nullopt;
}

void Pipeline::Impl::end_open_epoch(const char* reason) {
  // The previous epoch must be fully committed first: at most one PRECOMMITTED
  // record exists at any time, and a table's txns commit in epoch order.
  drive_closing(/*block=*/true);
  if (replay_) return;  // the closing epoch turned into a replay; the open one was aborted
  if (closing_) return;  // stopping and the shutdown deadline passed first: shutdown() reports it
  bool progressed = !open_.loads.empty();
  for (const auto& [tp, end] : pos_) {
    auto b = base_.find(tp);
    if (b == base_.end() || b->second != end) progressed = true;
  }
  if (!progressed) {
    open_.started = Clock::now();
    open_.end_requested = false;
    return;
  }
  log_->debug("ending epoch {} ({}): {} table(s)", open_.epoch, reason, open_.loads.size());
  step(Who::Open, Event::EndRequested);
}

// The thin driver: feeds `event` to the pure transition function for the
// epoch `who` names and performs the actions it returns. An action may yield
// the next event (synchronous steps); asynchronous ones (commits) report back
// through drive_closing().
void Pipeline::Impl::step(Who who, Event event) {
  // (A plain flag rather than std::optional: GCC 12 -O2 warns maybe-uninitialized on it.)
  Event next = event;
  bool has_next = true;
  while (has_next) {
    Phase& phase = who == Who::Open ? open_.phase : who == Who::Closing ? closing_->phase : replay_->phase;
    const Transition t = transition(phase, next);
    if (!t.valid)
      throw std::logic_error(std::string("epoch machine: event ") + to_string(next) + " in phase " +
                             to_string(phase));
    log_->trace("epoch machine: {} --{}--> {}", to_string(phase), to_string(next), to_string(t.next));
    phase = t.next;
    has_next = false;
    if (who != Who::Closing) deps_.metrics.set_phase(to_string(t.next));
    for (Action action : t.actions) {
      switch (action) {
        case Action::FinishLoads: {
          CDC2DORIS_CRASH_POINT("before_precommit");
          std::vector<state::TableTxn> txns;
          std::optional<Error> err = finish_loads(open_.loads, txns);
          if (!err && open_.dead_letters) err = deps_.dead_letters->flush(std::chrono::seconds(30));
          if (err) {
            failure_ = *err;
            failure_reason_ = "pre-commit";
            next = err->disposition() == Disposition::Retry ? Event::LoadFailedRetry : Event::LoadFailedFatal;
            has_next = true;
            break;
          }
          open_.dead_letters = false;
          CDC2DORIS_CRASH_POINT("after_precommit");
          open_.record = make_record(open_.epoch, std::move(txns));
          next = Event::LoadsPrecommitted;
          has_next = true;
          break;
        }
        case Action::WriteRecord: {
          state::EpochRecord& record = who == Who::Open ? open_.record : replay_->record;
          try {
            deps_.store.put_epoch(record);
          } catch (const state::StateError& e) {
            failure_ = e.to_error();
            next = Event::LoadFailedFatal;
            has_next = true;
            break;
          }
          CDC2DORIS_CRASH_POINT(who == Who::Open ? "after_record" : "after_replay_record");
          next = Event::RecordWritten;
          has_next = true;
          break;
        }
        case Action::CommitTxns:
          if (who == Who::Closing) {
            start_commits(*closing_);
          } else {
            // The recorded epoch becomes the closing one; consumption goes on
            // into the next epoch while its txns commit.
            state::EpochRecord record = who == Who::Open ? std::move(open_.record) : std::move(replay_->record);
            closing_.emplace();
            closing_->record = std::move(record);
            closing_->phase = Phase::Committing;
            start_commits(*closing_);
            if (who == Who::Open) {
              open_next_epoch();
            } else {
              replay_.reset();
              resume_after_replay();
            }
          }
          break;
        case Action::ReplayLost:
          if (who == Who::Closing) {
            begin_replay();
          } else {
            position_replay();
          }
          break;
        case Action::MarkCommitted:
          CDC2DORIS_CRASH_POINT("after_commits");
          try {
            deps_.store.set_state(closing_->record.epoch, state::EpochState::Committed);
          } catch (const state::StateError& e) {
            failure_ = e.to_error();
            next = Event::LoadFailedFatal;
            has_next = true;
            break;
          }
          mark_committed(*closing_);
          next = Event::StateMarked;
          has_next = true;
          break;
        case Action::CommitOffsets:
          commit_offsets(*closing_);
          next = Event::OffsetsCommitted;
          has_next = true;
          break;
        case Action::AbortTxns:
          if (who == Who::Open && !open_.loads.empty()) ++deps_.metrics.epochs_aborted;
          abort_loads(who == Who::Replay ? replay_->loads : open_.loads);
          if (phase == Phase::Aborting) {
            next = Event::AbortDone;
            has_next = true;
          }
          break;
        case Action::Rewind:
          rewind(failure_reason_);
          break;
        case Action::Backoff:
          if (who == Who::Closing) {
            closing_->retry_at = Clock::now() + backoff_.delay(closing_->attempt++);
          } else {
            sleep_backoff(who == Who::Replay ? replay_->attempt++ : consecutive_failures_++);
          }
          break;
        case Action::Stop:
          throw FatalStop{failure_.value_or(Error(Disposition::Fatal, "pipeline stopped"))};
      }
      if (has_next && (next == Event::LoadFailedRetry || next == Event::LoadFailedFatal)) break;
    }
    if (who == Who::Closing && closing_ && closing_->phase == Phase::Done) closing_.reset();
  }
}

void Pipeline::Impl::fail(const Error& error, const std::string& reason) {
  // Kafka is the replay buffer: abort what Doris holds for the epoch, rewind
  // to the end of the last recorded epoch and go on after a backoff.
  log_->warn("epoch {}: {} failed: {}", replay_ ? replay_->record.epoch : open_.epoch, reason, error.what());
  failure_ = error;
  failure_reason_ = reason;
  const Event ev = error.disposition() == Disposition::Retry ? Event::LoadFailedRetry : Event::LoadFailedFatal;
  if (replay_) {
    abort_loads(replay_->loads);
    step(Who::Replay, ev);
  } else {
    step(Who::Open, ev);
  }
}

void Pipeline::Impl::open_next_epoch() {
  for (const auto& [tp, end] : pos_) base_[tp] = end;
  open_.epoch += 1;
  open_.phase = Phase::Open;
  open_.loads.clear();
  open_.record = {};
  open_.started = Clock::now();
  open_.end_requested = false;
  consecutive_failures_ = 0;
  deps_.metrics.set_epochs(open_.epoch, last_committed_epoch_);
}

void Pipeline::Impl::start_commits(ClosingEpoch& closing) {
  // After a failed round the Backoff action set retry_at; drive_closing()
  // issues the retry once it has passed.
  if (closing.retry_at != Clock::time_point{}) return;
  if (closing.attempt == 0) closing.committing_since = Clock::now();
  for (size_t i = 0; i < closing.record.txns.size(); ++i) {
    const auto& txn = closing.record.txns[i];
    if (txn.committed || closing.lost.count(i)) continue;
    bool running = std::any_of(closing.inflight.begin(), closing.inflight.end(),
                               [&](const auto& f) { return f.first == i; });
    if (!running) closing.inflight.emplace_back(i, deps_.doris.commit_async(txn.db, txn.txn_id));
  }
}

// Collects commit results of the closing epoch and turns them into events.
// block=false returns as soon as something is still in flight.
void Pipeline::Impl::drive_closing(bool block) {
  while (closing_ && closing_->phase == Phase::Committing) {
    ClosingEpoch& c = *closing_;
    if (c.inflight.empty() && c.retry_at != Clock::time_point{}) {
      if (Clock::now() < c.retry_at) {
        if (!block) return;
        if (stop_.load()) {
          // Blocking, but stopping: wait no longer than the shutdown
          // deadline; the caller then finds the epoch still closing.
          if (stop_deadline_passed()) return;
          std::this_thread::sleep_until(std::min(c.retry_at, stop_deadline()));
          continue;
        }
        std::this_thread::sleep_until(c.retry_at);
      }
      c.retry_at = {};
      start_commits(c);
    }
    bool retry = false;
    for (auto it = c.inflight.begin(); it != c.inflight.end();) {
      if (!block && it->second.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
        ++it;
        continue;
      }
      // Copied before the erase: a reference into the vector would then name
      // the next element (this once marked the wrong txn committed).
      const size_t idx = it->first;
      doris::TxnResult res = it->second.get();
      it = c.inflight.erase(it);
      auto& txn = c.record.txns[idx];
      if (auto* err = std::get_if<doris::DorisError>(&res)) {
        deps_.metrics.add_doris_error(doris::to_string(err->kind()));
        if (err->disposition() == Disposition::Fatal) {
          failure_ = *err;
          step(Who::Closing, Event::CommitFatal);
        }
        // A recorded epoch only moves forward: retry however long Doris is
        // away (the open epoch fills meanwhile and backpressure holds it).
        log_->warn("epoch {}: commit failed, will retry: {}", c.record.epoch, err->what());
        retry = true;
        continue;
      }
      if (std::get<doris::TxnOutcome>(res) == doris::TxnOutcome::NotFoundOrAborted) {
        switch (classify_lost(txn)) {
          case LostCheck::Committed: break;
          case LostCheck::Lost:
            log_->warn("epoch {}: txn {} of {}.{} (label {}) was aborted or forgotten by Doris; it will be replayed",
                       c.record.epoch, txn.txn_id, txn.db, txn.table, txn.label);
            c.lost.insert(idx);
            continue;
          case LostCheck::Retry: retry = true; continue;
        }
      }
      txn.committed = true;
      deps_.store.mark_txn_committed(c.record.epoch, txn.db, txn.table);
      CDC2DORIS_CRASH_POINT("between_table_commits");
    }
    if (!c.inflight.empty()) return;  // non-blocking, still running
    if (retry) {
      step(Who::Closing, Event::CommitRetry);
      if (!block) return;
      continue;
    }
    step(Who::Closing, c.lost.empty() ? Event::AllCommitted : Event::TxnLost);
  }
}

Pipeline::Impl::LostCheck Pipeline::Impl::classify_lost(const state::TableTxn& txn) {
  // "not found" is ambiguous once Doris forgot a finished label: the label's
  // own state tells a committed txn from a lost one.
  doris::LoadSpec spec;
  spec.db = txn.db;
  spec.table = txn.table;
  spec.label = txn.label;
  auto probed = deps_.doris.probe_label(spec);
  if (auto* err = std::get_if<doris::DorisError>(&probed)) {
    if (err->disposition() == Disposition::Retry) return LostCheck::Retry;
    failure_ = *err;
    step(Who::Closing, Event::CommitFatal);
    return LostCheck::Retry;  // not reached: CommitFatal stops
  }
  const auto& ls = std::get<doris::LabelState>(probed);
  if (ls.state == doris::LabelState::Finished) return LostCheck::Committed;
  if (ls.state != doris::LabelState::Unused && ls.txn_id) {
    // Someone (an earlier replay attempt) holds the label: free it for the replay.
    auto r = deps_.doris.abort(txn.db, *ls.txn_id);
    if (std::holds_alternative<doris::DorisError>(r)) return LostCheck::Retry;
  }
  return LostCheck::Lost;
}

void Pipeline::Impl::mark_committed(ClosingEpoch& c) {
  last_committed_epoch_ = c.record.epoch;
  ++deps_.metrics.epochs_committed;
  deps_.metrics.observe_commit_latency(std::chrono::duration<double>(Clock::now() - c.committing_since).count());
  for (const auto& p : c.record.partitions) committed_[{p.topic, p.partition}] = p.end_offset;
  // Partitions first: whoever sees the new epoch number in /status sees its offsets.
  publish_partitions();
  deps_.metrics.set_epochs(open_.epoch, last_committed_epoch_);
  log_->debug("epoch {} committed ({} txn(s))", c.record.epoch, c.record.txns.size());
}

void Pipeline::Impl::commit_offsets(const ClosingEpoch& c) {
  kafka::OffsetMap offsets;
  for (const auto& p : c.record.partitions) offsets[{p.topic, p.partition}] = p.end_offset;
  CDC2DORIS_CRASH_POINT("before_offset_commit");
  // The group's offsets serve lag tools and a consumer without our state; the
  // RocksDB record is what recovery trusts, so a failure is only logged.
  if (!offsets.empty() && !subscribed_) {
    // Rolled forward during recovery, before the consumer joined its group:
    // sent once the first partitions are assigned.
    for (const auto& [tp, off] : offsets) group_offsets_pending_[tp] = off;
  } else if (!offsets.empty()) {
    if (auto err = deps_.source.commit(offsets, "cdc2doris epoch " + std::to_string(c.record.epoch)))
      log_->warn("committing offsets of epoch {} to the consumer group failed: {}", c.record.epoch, err->what());
  }
  CDC2DORIS_CRASH_POINT("after_offset_commit");
  publish_partitions();
}

// ============================================================== replay

void Pipeline::Impl::begin_replay() {
  // Replay is stop-the-world: the open epoch is aborted (it is re-read after
  // the replayed one) and the closing epoch becomes the replay.
  abort_open_epoch_for_replay();
  ++deps_.metrics.epochs_replayed;
  Replay r;
  r.record = std::move(closing_->record);
  for (size_t i : closing_->lost) r.tables.insert({r.record.txns[i].db, r.record.txns[i].table});
  for (const auto& p : r.record.partitions) r.ranges[{p.topic, p.partition}] = {p.start_offset, p.end_offset};
  closing_.reset();
  log_->warn("replaying epoch {} for {} table(s) from Kafka", r.record.epoch, r.tables.size());
  replay_ = std::move(r);
  position_replay();
}

void Pipeline::Impl::position_replay() {
  Replay& r = *replay_;
  r.loads.clear();
  r.remaining.clear();
  for (const auto& [tp, range] : r.ranges)
    if (range.second > range.first) r.remaining.insert(tp);
  ++rewind_generation_;
  // Before subscribe (recovery) on_assign positions the partitions instead.
  if (!subscribed_) return;
  for (const auto& [tp, range] : r.ranges) {
    if (auto err = deps_.source.seek(tp, range.first, std::chrono::seconds(10))) throw FatalStop{*err};
    pos_[tp] = range.second;
    base_[tp] = range.second;
  }
  r.positioned = true;
}

void Pipeline::Impl::process_replay(const kafka::Message& msg) {
  const TopicPartition tp{std::string(msg.topic), msg.partition};
  auto range = replay_->ranges.find(tp);
  if (range == replay_->ranges.end()) return;  // re-read after the replay
  if (msg.offset < range->second.first) return;
  if (msg.offset >= range->second.second) {
    replay_->remaining.erase(tp);
    return;
  }
  if (msg.offset + 1 >= range->second.second) replay_->remaining.erase(tp);
  decode::KafkaRecord rec{msg.topic, msg.partition, msg.offset, msg.key, msg.value, {}};
  for (const auto& h : msg.headers) rec.headers.emplace_back(h.key, h.value.value_or(std::string_view{}));
  // The record decoded before (it is inside a recorded epoch), so an error
  // now was already handled by the policy then: skip it the same way.
  if (decoder_.decode(rec, change_) || change_.kind != decode::Kind::Change) return;
  auto target = deps_.router.route(change_);
  if (!target || !replay_->tables.count(*target)) return;
  const uint64_t generation = rewind_generation_;
  for (const auto& row : change_.rows) {
    OpenLoad* load = load_for(replay_->loads, *target, row, replay_->record.epoch, /*may_end_epoch=*/false);
    if (load == nullptr || rewind_generation_ != generation) return;  // the attempt failed and restarts
    append_row(*load, row);
    if (rewind_generation_ != generation) return;
  }
}

void Pipeline::Impl::finish_replay() {
  Replay& r = *replay_;
  // A lost table whose rows are gone from the range (a routing change) still
  // needs its txn replaced: an empty load pre-commits an empty txn.
  for (const auto& t : r.tables)
    if (!r.loads.count(t)) load_for(r.loads, t, decode::Row{}, r.record.epoch, /*may_end_epoch=*/false);
  std::vector<state::TableTxn> txns;
  if (auto err = finish_loads(r.loads, txns)) {
    fail(*err, "replay pre-commit");
    return;
  }
  for (auto& txn : r.record.txns)
    for (const auto& fresh : txns)
      if (fresh.db == txn.db && fresh.table == txn.table) txn = fresh;
  r.loads.clear();
  step(Who::Replay, Event::LoadsPrecommitted);
}

void Pipeline::Impl::resume_after_replay() {
  // Continue after the replayed epoch: every assigned partition back to the
  // end of the last recorded epoch.
  ++rewind_generation_;
  for (const auto& tp : deps_.source.assignment()) {
    auto b = base_.find(tp);
    if (b == base_.end()) continue;
    if (auto err = deps_.source.seek(tp, b->second, std::chrono::seconds(10))) throw FatalStop{*err};
    pos_[tp] = b->second;
  }
  open_.started = Clock::now();
}

// ============================================================== failures

void Pipeline::Impl::abort_loads(std::map<Target, OpenLoad>& loads) {
  for (auto& [target, load] : loads) {
    if (load.stream) load.stream->cancel();
    // Best effort: what cannot be aborted now is found by the label probe at
    // the next start or by the label-conflict handling when this epoch number
    // is used again.
    auto r = deps_.doris.abort_by_label(target.db, load.spec.label);
    if (auto* err = std::get_if<doris::DorisError>(&r))
      log_->warn("aborting label {} failed: {}", load.spec.label, err->what());
  }
  loads.clear();
}

void Pipeline::Impl::abort_open_epoch_for_replay() {
  if (!open_.loads.empty()) ++deps_.metrics.epochs_aborted;
  abort_loads(open_.loads);
  open_.phase = Phase::Open;
  open_.end_requested = false;
  open_.started = Clock::now();
  ++rewind_generation_;
}

void Pipeline::Impl::abort_open_epoch_stopping() {
  failure_ = Error(Disposition::Retry, "stopping: the previous epoch did not commit before the shutdown deadline");
  failure_reason_ = "stopping";
  step(Who::Open, Event::LoadFailedRetry);
}

void Pipeline::Impl::rewind(const std::string& reason) {
  deps_.metrics.add_rewind(reason);
  open_.end_requested = false;
  open_.started = Clock::now();
  ++rewind_generation_;
  for (const auto& tp : deps_.source.assignment()) {
    auto b = base_.find(tp);
    if (b == base_.end()) {
      // Nothing recorded covers it: restart it where the group says.
      pos_.erase(tp);
      continue;
    }
    if (auto err = deps_.source.seek(tp, b->second, std::chrono::seconds(10))) {
      if (err->disposition() == Disposition::Fatal) throw FatalStop{*err};
      log_->warn("seek {} to {} failed: {}", kafka::to_string(tp), b->second, err->what());
    }
    pos_[tp] = b->second;
  }
}

void Pipeline::Impl::sleep_backoff(int attempt) {
  auto until = Clock::now() + backoff_.delay(attempt);
  // Sleep in slices: a stop request must not wait out a long backoff.
  while (!stop_.load() && Clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

void Pipeline::Impl::publish_partitions() {
  for (const auto& [tp, p] : pos_) {
    PartitionStats s;
    s.position = p;
    if (auto c = committed_.find(tp); c != committed_.end()) s.committed = c->second;
    s.paused = paused_;
    deps_.metrics.set_partition(kafka::to_string(tp), s);
  }
  for (const auto& l : deps_.source.lag()) {
    PartitionStats s;
    if (auto p = pos_.find(l.tp); p != pos_.end()) s.position = p->second;
    if (auto c = committed_.find(l.tp); c != committed_.end()) s.committed = c->second;
    s.lag = l.lag.value_or(-1);
    s.paused = paused_;
    deps_.metrics.set_partition(kafka::to_string(l.tp), s);
  }
}

// ============================================================== facade

Pipeline::Pipeline(PipelineConfig config, decode::DecoderOptions decoder_options, Dependencies deps)
    : impl_(std::make_unique<Impl>(std::move(config), std::move(decoder_options), deps)) {}
Pipeline::~Pipeline() = default;
RunResult Pipeline::run() { return impl_->run(); }
void Pipeline::request_stop() { impl_->request_stop(); }
bool Pipeline::stop_requested() const { return impl_->stop_requested(); }

}  // namespace cdc2doris::pipeline
