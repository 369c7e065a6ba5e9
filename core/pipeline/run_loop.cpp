// The main loop: poll, decode (identify, route, convert); and the bounded shutdown.
#include "core/avro/avro_records.hpp"
#include "core/common/crash_point.hpp"
#include "core/pipeline/pipeline_impl.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <thread>

namespace cdc2doris::pipeline {

namespace {

SkipReason skip_reason(decode::Kind k) {
  switch (k) {
    case decode::Kind::Tombstone: return SkipReason::Tombstone;
    case decode::Kind::Heartbeat: return SkipReason::Heartbeat;
    case decode::Kind::TransactionMetadata: return SkipReason::TransactionMetadata;
    case decode::Kind::SchemaChange: return SkipReason::SchemaChange;
    case decode::Kind::Truncate: return SkipReason::Truncate;
    case decode::Kind::Message: return SkipReason::Message;
    case decode::Kind::Change: break;
  }
  return SkipReason::NotRouted;
}

}  // namespace

RunResult Pipeline::Impl::run() {
  RunResult result;
  try {
    deps_.metrics.beat();
    deps_.metrics.set_phase("recovering");
    recover();
    deps_.metrics.recovered = true;
    deps_.metrics.advanced();
    deps_.source.subscribe(*this);
    subscribed_ = true;
    log_->info("consuming; epoch {} open, label prefix '{}'", open_.epoch, cfg_.label_prefix);
    publish_state();
    while (!stop_.load()) {
      deps_.metrics.beat();
      // Synchronous, before the next poll: no rebalance can come between
      // its start and its end.
      if (replay_ && replay_->by_range) replay_by_range();
      auto polled = deps_.source.poll(cfg_.poll_timeout, cfg_.poll_max_messages);
      if (deferred_stop_) throw FatalStop{*deferred_stop_};
      if (!group_offsets_pending_.empty() && !pos_.empty()) {
        kafka::GroupOffsetMap mine;
        for (const auto& [tp, off] : group_offsets_pending_)
          if (may_commit_end(tp, off.offset)) mine[tp] = off;
        if (!mine.empty()) {
          if (auto r = deps_.source.commit_group(mine); r.status != kafka::CommitStatus::Committed)
            log_->warn("committing recovered offsets to the consumer group failed: {}",
                       r.error ? r.error->what() : "?");
        }
        group_offsets_pending_.clear();
      }
      for (const auto& tp : polled.offset_gaps_skipped) {
        // The source moved tp to its log start (kafka.on_offset_gap: skip);
        // a replay must not commit what is left of its range.
        if (replay_ && replay_->ranges.count(tp))
          throw FatalStop{Error(Disposition::Fatal, "Kafka: " + kafka::to_string(tp) +
                                                        ": records of a replayed epoch were deleted by retention "
                                                        "during its replay; it cannot be reloaded exactly")};
        ++deps_.metrics.offset_gaps_skipped;
      }
      for (const auto& e : polled.transient) {
        log_->warn("kafka: {}", e.what());
        deps_.metrics.kafka_error_unix_ms = unix_ms();
        deps_.metrics.note_error("kafka", e.what());
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
      if (end_fenced_wait_if_due()) {
        // Fetched from positions the fenced member may no longer own, or
        // before the seeks just made: read again (or by the new owner). So
        // are a partition's errors (an offset gap there is the new owner's
        // concern); the rest are handled below.
        polled.batch.release();
        std::erase_if(polled.errors, [&](const Error& e) {
          if (e.context().topic.empty()) return false;
          log_->info("kafka, while the group rebalances after a fenced commit point: {}", e.what());
          return true;
        });
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
      const size_t polled_records = polled.batch.size(), polled_bytes = polled.batch.bytes();
      for (const auto& msg : polled.batch) {
        if (rewind_generation_ != generation) break;  // the rest was fetched before a rewind
        if (replay_) {
          // A range reader replays on its own handle; these are re-read after it.
          if (!replay_->by_range) process_replay(msg);
        } else {
          process(msg);
        }
      }
      polled.batch.release();
      if (replay_ && replay_->positioned && replay_->remaining.empty()) finish_replay();
      drive_closing(/*block=*/false);
      end_epoch_if_caught_up(polled_records, polled_bytes);
      if (!replay_ && should_end_epoch()) end_open_epoch(open_.end_requested ? "size" : "interval");
      apply_memory_cap();
      // Positions and lag for /status and /metrics, at most once a second.
      if (Clock::now() - last_publish_ >= std::chrono::seconds(1)) {
        publish_partitions();
        last_publish_ = Clock::now();
      }
      publish_state();
    }
    shutdown(result);
  } catch (const FatalStop& f) {
    log_->error("stopping: {}", f.error.what());
    deps_.metrics.set_stopping(f.error.what(), f.error.disposition() == Disposition::Fatal);
    // Unrecorded txns are aborted now rather than left for the pre-commit
    // timeout; a recorded epoch stays as it is for the next start.
    abort_loads(open_.loads);
    if (replay_) abort_loads(replay_->loads);
    closing_source_ = true;
    CDC2DORIS_CRASH_POINT("error_stop_before_kafka_close");
    if (subscribed_) deps_.source.close(std::chrono::seconds(10));
    result.error = f.error;
  } catch (const state::StateError& e) {
    log_->error("stopping: checkpoint state: {}", e.what());
    deps_.metrics.set_stopping(std::string("checkpoint state: ") + e.what(),
                               e.to_error().disposition() == Disposition::Fatal);
    abort_loads(open_.loads);
    closing_source_ = true;
    if (subscribed_) deps_.source.close(std::chrono::seconds(10));
    result.error = e.to_error();
  }
  deps_.metrics.set_phase(!result.error                                        ? "stopped"
                          : result.error->disposition() == Disposition::Retry ? "stopped_incomplete"
                                                                              : "failed");
  return result;
}

void Pipeline::Impl::shutdown(RunResult& result) {
  const auto deadline = stop_deadline();
  publish_state();
  log_->info("shutting down: finishing epoch {} (deadline {} ms)", open_.epoch, cfg_.shutdown_deadline.count());
  // Whether the open epoch holds records that must reach Doris: if it is not
  // recorded by the end (its number did not move on), they were not loaded.
  const uint64_t open_epoch = open_.epoch;
  const bool open_has_rows = !replay_ && open_epoch_progressed();
  if (!replay_) end_open_epoch("shutdown");
  while (closing_ && Clock::now() < deadline) {
    deps_.metrics.beat();
    drive_closing(/*block=*/false);
    if (closing_) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  std::string abandoned;
  auto add = [&](const std::string& what) { abandoned += (abandoned.empty() ? "" : "; ") + what; };
  if (closing_)
    add("epoch " + std::to_string(closing_->record.epoch) +
        " is PRECOMMITTED but did not commit before the shutdown deadline; the next start rolls it forward");
  if (replay_)
    add("epoch " + std::to_string(replay_->record.epoch) +
        " was being replayed and is not committed; the next start replays it");
  if (open_has_rows && open_.epoch == open_epoch)
    add("epoch " + std::to_string(open_epoch) +
        " was not recorded (its loads did not pre-commit in time, or failed); the next start re-reads its records");
  if (!abandoned.empty()) {
    // Txns not in any record are aborted (their rows are re-read).
    abort_loads(open_.loads);
    if (replay_) abort_loads(replay_->loads);
    result.error = Error(Disposition::Retry, "shutdown incomplete: " + abandoned);
  }
  closing_source_ = true;
  // The group leave gets what is left of the deadline (at least a second).
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  const auto close_timeout = std::clamp<std::chrono::milliseconds>(left, std::chrono::seconds(1), std::chrono::seconds(10));
  if (auto err = deps_.source.close(close_timeout)) log_->warn("kafka close: {}", err->what());
}

Clock::time_point Pipeline::Impl::stop_deadline() {
  // The shutdown deadline counts from the first time the pipeline thread
  // sees the stop request, wherever it was waiting then.
  if (!stop_deadline_) stop_deadline_ = Clock::now() + cfg_.shutdown_deadline;
  return *stop_deadline_;
}

bool Pipeline::Impl::stop_deadline_passed() { return stop_.load() && Clock::now() >= stop_deadline(); }

bool Pipeline::Impl::open_epoch_progressed() const {
  if (!open_.loads.empty()) return true;
  for (const auto& [tp, end] : pos_) {
    auto b = base_.find(tp);
    if (b == base_.end() || b->second != end) return true;
  }
  return false;
}

void Pipeline::Impl::end_epoch_if_caught_up(size_t polled, size_t polled_bytes) {
  // Reading a backlog, polls come (at least half) full: half the message cap,
  // or backlog_poll_bytes (large records fill the prefetch queue before the
  // cap: 4 KB records in a 16 MiB queue are 4,000 a poll). The first poll
  // that then waits its whole timeout for nothing means the backlog's end was
  // read: its last rows become visible now instead of up to
  // delivery.epoch_interval later (10 s by default). Once per backlog, so a
  // steady stream (small polls) still gets one epoch per interval.
  if (polled >= std::max<size_t>(1, cfg_.poll_max_messages / 2) || polled_bytes >= cfg_.backlog_poll_bytes) {
    catching_up_ = true;
    return;
  }
  if (polled != 0 || !catching_up_ || !cfg_.end_epoch_when_caught_up) return;
  catching_up_ = false;
  if (!replay_ && !open_.end_requested && open_epoch_progressed()) end_open_epoch("caught up");
}

bool Pipeline::Impl::should_end_epoch() const {
  if (open_.end_requested) return true;
  return Clock::now() - open_.started >= cfg_.epoch_interval;
}

void Pipeline::Impl::process(const kafka::Message& msg) {
  // Records come in runs of one partition: build its key (a heap string for
  // most topic names) and look up its position only when the partition
  // changes (the map lookups compared topic names for every record).
  if (msg.partition != current_tp_.partition || !same_topic(msg.topic, current_tp_.topic)) {
    current_tp_ = TopicPartition{std::string(msg.topic), msg.partition};
    current_pos_ = current_base_ = nullptr;
  }
  current_topic_name_ = msg.topic;
  const TopicPartition& tp = current_tp_;
  if (current_pos_ == nullptr)
    if (auto pit = pos_.find(tp); pit != pos_.end()) current_pos_ = &pit->second;
  // A record before the partition's position was fetched before a seek: it
  // belongs to an epoch that is already recorded.
  if (current_pos_ != nullptr && msg.offset < *current_pos_) return;
  ++deps_.metrics.records_consumed;
  deps_.metrics.bytes_consumed += (msg.value ? msg.value->size() : 0) + (msg.key ? msg.key->size() : 0);

  const uint64_t generation = rewind_generation_;
  bool failed = false;
  auto err = decode_record(msg, failed);
  if (failed) return;  // not read: the registry failed (rewound, or stopping)
  if (err) {
    bad_record(msg, *err);
  } else if ((change_.kind == decode::Kind::Change || change_.kind == decode::Kind::Truncate) &&
             (routed_ == nullptr || routed_->target == nullptr)) {
    deps_.metrics.add_skipped(SkipReason::NotRouted);
  } else if (change_.kind == decode::Kind::Change) {
    handle_change(msg, *routed_->target);
  } else if (change_.kind == decode::Kind::Truncate) {
    handle_truncate(msg, *routed_->target);
  } else {
    deps_.metrics.add_skipped(skip_reason(change_.kind));
    if (change_.kind == decode::Kind::SchemaChange)
      log_->warn("{} record at {}/{}@{} for {}.{} is not applied to Doris", decode::to_string(change_.kind),
                 msg.topic, msg.partition, msg.offset, change_.db, change_.table);
  }
  // A failure while handling the record rewound the partitions: the record
  // is read again later and must not move the position now.
  if (rewind_generation_ != generation || replay_) return;
  if (current_base_ == nullptr) current_base_ = &base_.try_emplace(tp, msg.offset).first->second;
  if (current_pos_ == nullptr) current_pos_ = &pos_.try_emplace(tp).first->second;
  *current_pos_ = msg.offset + 1;
}

decode::KafkaRecord& Pipeline::Impl::fill_record(const kafka::Message& msg) {
  decode::KafkaRecord& rec = record_;
  rec.topic = msg.topic;
  rec.partition = msg.partition;
  rec.offset = msg.offset;
  rec.key = msg.key;
  rec.value = msg.value;
  rec.headers.clear();
  for (const auto& h : msg.headers) rec.headers.emplace_back(h.key, h.value.value_or(std::string_view{}));
  return rec;
}

std::optional<decode::DecodeError> Pipeline::Impl::decode_record(const kafka::Message& msg, bool& failed) {
  failed = false;
  decode::KafkaRecord& rec = fill_record(msg);
  routed_ = nullptr;
  if (deps_.avro == nullptr) return decode_routed(decoder_, routing_, rec, change_, routed_);
  if (auto f = deps_.avro->to_json(rec, avro_record_)) {
    if (auto* bad = std::get_if<decode::DecodeError>(&*f)) return *bad;
    // A registry outage is not the record's fault: back off and read it again.
    fail(std::get<Error>(*f), "schema registry");
    failed = true;
    return std::nullopt;
  }
  return decode_routed(decoder_, routing_, avro_record_, change_, routed_);
}

void Pipeline::Impl::erase_position(const TopicPartition& tp, bool with_base) {
  pos_.erase(tp);
  if (with_base) base_.erase(tp);
  current_pos_ = current_base_ = nullptr;
}

void Pipeline::Impl::handle_change(const kafka::Message& msg, const Target& target) {
  if (!truncate_filters_.empty() && truncated_before(target, msg)) {
    deps_.metrics.add_truncated_rows_dropped(target.name(), change_.rows.size());
    return;
  }
  const uint64_t generation = rewind_generation_;
  const uint64_t types = column_types_version_;
  if (prepare_table(target, msg) != Prepared::Proceed) return;
  if (column_types_version_ != types && change_.row_schema == nullptr) {
    // The DDL this record asked for changed the table's columns, which type
    // its schemaless values: it is decoded again with them (a DATE column
    // added for an integer key takes days since 1970, which Doris refuses as
    // they came). Its rows were written already, so the record is read
    // again (rare: once per such DDL); routing remembers its source table,
    // and `target` lives in routing_ as long as the pipeline.
    bool failed = false;
    if (auto err = decode_record(msg, failed)) {
      bad_record(msg, *err);
      return;
    }
    if (failed) return;
  }
  if (row_renames_ != nullptr) rename_row_columns(*row_renames_);
  if (cfg_.check_rows && !rows_fit(target, msg)) return;
  if (change_.deletes_ignored != 0) {  // delete_mode ignore
    for (uint32_t i = 0; i < change_.deletes_ignored; ++i) deps_.metrics.add_skipped(SkipReason::DeleteIgnored);
    log_->debug("delete at {}/{}@{} for {} ignored (delete_mode ignore)", msg.topic, msg.partition, msg.offset,
                target.name());
  }
  if (change_.rows_filtered != 0) {  // routing.tables.*.filter
    for (uint32_t i = 0; i < change_.rows_filtered; ++i) deps_.metrics.add_skipped(SkipReason::Filtered);
    log_->trace("{} row(s) at {}/{}@{} for {} not matched by the table's filter", change_.rows_filtered, msg.topic,
                msg.partition, msg.offset, target.name());
  }
  const int64_t source_ms = change_.position.ts_ms.value_or(0);
  const std::optional<int64_t> seq = change_.position.sequence();
  for (const auto& row : change_.rows) {
    const KeyOnly k = key_only_delete(target, row);
    if (k == KeyOnly::Failed) return;
    if (k == KeyOnly::Skip) continue;
    OpenLoad* load = load_for(open_.loads, target, row, open_.epoch, /*may_end_epoch=*/true);
    if (load == nullptr || rewind_generation_ != generation || replay_) return;
    if (source_ms > load->newest_source_ms) load->newest_source_ms = source_ms;
    if (seq && (!load->newest_seq || *seq > *load->newest_seq)) load->newest_seq = seq;
    append_row(*load, row, msg);
    if (rewind_generation_ != generation) return;
    if (load->rows >= cfg_.epoch_max_rows || load->bytes >= cfg_.epoch_max_bytes) open_.end_requested = true;
  }
}

Pipeline::Impl::KeyOnly Pipeline::Impl::key_only_delete(const Target& target, const decode::Row& row) {
  if (!(row.is_delete() || row.soft_delete) || row.partial_columns.empty()) return KeyOnly::Load;
  // A delete known only by its key (a tombstone whose delete record this run
  // did not read: it began right after it; a delete without a before-image)
  // is a partial row, which Doris refuses for any table but a merge-on-write
  // UNIQUE one ("Only unique key merge on write support partial update",
  // fe NereidsStreamLoadPlanner) and would refuse on every retry. A
  // DUPLICATE KEY table keeps history and has no row to delete: skipped.
  // The same for a key-only soft delete (delete_mode soft): there is no
  // stored row to flag, and appending the key alone would refuse NOT NULL
  // columns; a soft delete with the whole before-image is appended as history.
  auto info = table_info(target, deps_.router.settings(target));
  if (!info) return KeyOnly::Failed;
  if (info->unique) return KeyOnly::Load;
  deps_.metrics.add_skipped(SkipReason::KeyOnlyDelete);
  return KeyOnly::Skip;
}

bool Pipeline::Impl::handled_before(std::string_view topic, int32_t partition, int64_t offset) const {
  auto it = handled_bad_.find(TopicPartition{std::string(topic), partition});
  return it != handled_bad_.end() && it->second.count(offset) > 0;
}

void Pipeline::Impl::note_handled(std::string_view topic, int32_t partition, int64_t offset) {
  handled_bad_[TopicPartition{std::string(topic), partition}].insert(offset);
}

void Pipeline::Impl::bad_record(const kafka::Message& msg, const decode::DecodeError& err) {
  if (cfg_.bad_record_policy != BadRecordPolicy::Fail && handled_before(msg.topic, msg.partition, msg.offset)) {
    log_->debug("bad record handled before, when its range was first read: {}", err.message());
    return;
  }
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
      note_handled(msg.topic, msg.partition, msg.offset);
      log_->warn("skipping bad record: {}", err.message());
      return;
    case BadRecordPolicy::DeadLetter:
      if (auto e = deps_.dead_letters->produce(cfg_.dead_letter_topic, msg, err.message())) {
        fail(*e, "dead-letter");
        return;
      }
      note_handled(msg.topic, msg.partition, msg.offset);
      open_.dead_letters = true;
      log_->warn("bad record sent to dead-letter topic {}: {}", cfg_.dead_letter_topic, err.message());
      return;
  }
}

}  // namespace cdc2doris::pipeline
