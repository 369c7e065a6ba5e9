// Replaying a recorded epoch whose txns Doris lost, from Kafka.
#include "core/pipeline/pipeline_impl.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>
#include <variant>

namespace cdc2doris::pipeline {

void Pipeline::Impl::begin_replay() {
  // Replay is stop-the-world: the open epoch is aborted (it is re-read after
  // the replayed one) and the closing epoch becomes the replay.
  abort_open_epoch_for_replay();
  ++deps_.metrics.epochs_replayed;
  Replay r;
  r.record = std::move(closing_->record);
  for (size_t i : closing_->lost) r.tables.insert({r.record.txns[i].db, r.record.txns[i].table});
  for (const auto& p : r.record.partitions) r.ranges[{p.topic, p.partition}] = {p.start_offset, p.end_offset};
  for (size_t i = 0; i < r.record.txns.size(); ++i) {
    const auto& txn = r.record.txns[i];
    if (!r.tables.count({txn.db, txn.table})) continue;
    if (txn.committed) {
      // Parts commit in order: those before the lost one are in Doris. The
      // replay splits the range as before and drops their rows.
      r.committed_labels.insert(txn.label);
    } else if (!closing_->lost.count(i)) {
      // A later part of a lost table, still pre-committed: it must follow the
      // replayed part, so it is replayed too and its label freed now.
      auto res = deps_.doris.abort(txn.db, txn.txn_id);
      if (!res)
        log_->warn("epoch {}: aborting txn {} (label {}) before its replay failed: {}", r.record.epoch, txn.txn_id,
                   txn.label, res.error().what());
    }
  }
  closing_.reset();
  r.by_range = deps_.source.can_read_range();
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
  // Before subscribe (recovery) on_assign positions and checks the
  // partitions, unless the range is read on its own (replay_by_range).
  if (!r.by_range && !subscribed_) return;
  kafka::OffsetMap starts;
  for (const auto& [tp, range] : r.ranges)
    if (range.second > range.first) starts[tp] = range.first;
  // A range retention deleted stops the replay before anything loads.
  check_start_offsets(starts, /*replaying=*/true);
  // Read by replay_by_range(): the consumer's positions stay where they are.
  if (r.by_range) return;
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
  // The record decoded before (it is inside a recorded epoch), so an error
  // now was already handled by the policy then: skip it the same way.
  bool failed = false;
  if (decode_record(msg, failed) || failed || change_.kind != decode::Kind::Change) return;
  if (routed_ == nullptr || routed_->target == nullptr || !replay_->tables.count(*routed_->target)) return;
  const Target& target = *routed_->target;
  // As when the epoch was first read (a replayed epoch follows every
  // truncate applied: a truncate runs only once no epoch is committing).
  if (!truncate_filters_.empty() && truncated_before(target, msg)) return;
  if (const auto* renames = replay_renames(target)) rename_row_columns(*renames);
  if (cfg_.check_rows && !rows_fit_quietly(target)) return;  // a bad record when first read
  const uint64_t generation = rewind_generation_;
  for (const auto& row : change_.rows) {
    const KeyOnly k = key_only_delete(target, row);  // as when first read
    if (k == KeyOnly::Failed) return;
    if (k == KeyOnly::Skip) continue;
    OpenLoad* load = load_for(replay_->loads, target, row, replay_->record.epoch, /*may_end_epoch=*/false);
    if (load == nullptr || rewind_generation_ != generation) return;  // the attempt failed and restarts
    append_row(*load, row, msg);
    if (rewind_generation_ != generation) return;
  }
}

void Pipeline::Impl::finish_replay() {
  Replay& r = *replay_;
  // An uncommitted part whose rows are gone from the range (a routing
  // change) still needs its txn replaced: an empty load under its label
  // pre-commits an empty txn.
  std::set<std::string> built;
  for (const auto& [t, tl] : r.loads)
    for (const auto& l : tl.loads) built.insert(l.spec.label);
  for (const auto& txn : r.record.txns) {
    const Target t{txn.db, txn.table};
    if (txn.committed || !r.tables.count(t) || built.count(txn.label)) continue;
    auto info = table_info(t, deps_.router.settings(t));
    if (!info) return;  // failed: the replay restarts
    OpenLoad load;
    load.target = t;
    load.spec.db = t.db;
    load.spec.table = t.table;
    load.spec.label = txn.label;
    load.spec.unique_key = info->unique;
    if (info->mode == LoadMode::Flexible)
      load.spec.flexible_partial_update = true;
    else
      load.spec.sequence_col = deps_.router.settings(t).sequence_col;
    load.stream = deps_.doris.open_load(load.spec);
    r.loads[t].loads.push_back(std::move(load));
  }
  std::vector<state::TableTxn> txns;
  if (auto err = finish_loads(r.loads, txns)) {
    fail(*err, "replay pre-commit");
    return;
  }
  // The replacements are pre-committed, nothing of them recorded: a member
  // that was paused meanwhile (a zombie) may find the group resolved the
  // epoch without it. Then they are aborted rather than committed.
  if (!replay_still_owned()) return;
  // A table none of whose parts committed takes the parts the replay built,
  // in their commit order, whatever the recorded split was: nothing of the
  // range is in Doris, and every recorded label not built again was
  // replaced by an empty load above. The split differs when the range
  // changed since it was recorded: the log cleaner compacted it (a
  // tombstone whose delete is gone deletes by key alone, a row of another
  // column set). A built label beyond the recorded ones that a crash leaves
  // pre-committed but unrecorded is refused as "Label Already Exists" at the
  // next attempt, which aborts it by label.
  std::set<Target> resplit;
  for (const auto& t : r.tables)
    if (std::none_of(r.record.txns.begin(), r.record.txns.end(), [&](const state::TableTxn& x) {
          return x.committed && x.db == t.db && x.table == t.table;
        }))
      resplit.insert(t);
  if (!resplit.empty()) {
    std::vector<state::TableTxn> merged;
    std::set<Target> placed;
    for (const auto& old : r.record.txns) {
      const Target t{old.db, old.table};
      if (!resplit.count(t)) {
        merged.push_back(old);
        continue;
      }
      if (!placed.insert(t).second) continue;
      for (const auto& fresh : txns)
        if (fresh.db == t.db && fresh.table == t.table) merged.push_back(fresh);
    }
    r.record.txns = std::move(merged);
  }
  for (const auto& fresh : txns) {
    if (resplit.count({fresh.db, fresh.table})) continue;
    auto it = std::find_if(r.record.txns.begin(), r.record.txns.end(),
                           [&](const state::TableTxn& t) { return t.label == fresh.label; });
    if (it == r.record.txns.end() || it->committed) {
      // The range split differently than when it was recorded (the table's
      // mode or delivery.max_loads_per_table changed): committing it could
      // apply rows twice or out of order.
      abort_loads(r.loads);
      failure_ = Error(Disposition::Fatal, "replay of epoch " + std::to_string(r.record.epoch) + " built load " +
                                               fresh.label + " for " + fresh.db + "." + fresh.table +
                                               ", which the recorded epoch does not hold as uncommitted; restore the "
                                               "configuration the epoch was recorded with");
      step(Who::Replay, Event::LoadFailedFatal);
      return;
    }
    it->txn_id = fresh.txn_id;
    it->committed = false;
  }
  r.loads.clear();
  step(Who::Replay, Event::LoadsPrecommitted);
}

void Pipeline::Impl::replay_by_range() {
  if (!replay_still_owned()) return;
  while (replay_) {
    if (stop_.load())
      throw FatalStop{Error(Disposition::Retry, "stopping while epoch " + std::to_string(replay_->record.epoch) +
                                                    " was being replayed; the next start replays it")};
    const uint64_t generation = rewind_generation_;
    // Bounded like a commit inside a revocation: past it the attempt is
    // retried (a Retry error) after a backoff.
    auto err = deps_.source.read_range(replay_->ranges, [&](const kafka::Message& msg) {
      if (replay_ && rewind_generation_ == generation) process_replay(msg);
    }, std::chrono::minutes(10));
    deps_.metrics.beat();
    if (!replay_) return;  // not reached: a fatal failure unwinds
    if (err) {
      if (err->disposition() == Disposition::Fatal) throw FatalStop{*err};
      // The attempt restarts: its loads are aborted, the range read again.
      if (rewind_generation_ == generation) fail(*err, "replay read");
      continue;
    }
    if (rewind_generation_ != generation) continue;  // a load failed: the attempt restarted
    finish_replay();
    // Recorded and committing (replay_ is gone), or an attempt that failed and restarts.
  }
}

bool Pipeline::Impl::replay_still_owned() {
  Replay& r = *replay_;
  std::vector<TopicPartition> tps;
  for (const auto& p : r.record.partitions) tps.push_back({p.topic, p.partition});
  if (tps.empty()) return true;
  auto got = read_group(tps);
  if (auto* err = std::get_if<Error>(&got)) {
    if (!subscribed_)
      throw FatalStop{Error(Disposition::Retry, "recovery: replay of epoch " + std::to_string(r.record.epoch) +
                                                    ": cannot read the consumer group: " + err->what())};
    // Nobody can tell now; the replay waits (the attempt restarts after a backoff).
    abort_loads(r.loads);
    fail(Error(Disposition::Retry, "replay of epoch " + std::to_string(r.record.epoch) +
                                       ": cannot read the consumer group: " + err->what()),
         "replay group check");
    return false;
  }
  const auto& group = std::get<kafka::GroupOffsetMap>(got);
  bool committed_elsewhere = false;
  std::vector<TopicPartition> moved;
  // The commit point wrote only the partitions with records in the epoch
  // (group.cpp, commit_point_offsets), unless it had none at all.
  const bool all_idle = std::none_of(r.record.partitions.begin(), r.record.partitions.end(),
                                     [](const state::PartitionRange& p) { return p.end_offset > p.start_offset; });
  for (const auto& p : r.record.partitions) {
    const TopicPartition tp{p.topic, p.partition};
    auto g = group.find(tp);
    if (g == group.end()) continue;  // expired offsets: nobody resolved anything there
    const auto m = state::decode_group_meta(g->second.metadata);
    if (m.label_prefix == r.record.label_prefix && m.epoch == r.record.epoch) {
      if (m.kind == state::GroupMeta::Kind::Committed) committed_elsewhere = true;
      if (m.kind != state::GroupMeta::Kind::Legacy) continue;
    }
    // An idle partition holds nothing of the epoch (the commit point left it
    // out): what its owners did there since, loading past it included,
    // cannot meet the epoch's rows (found by the group campaign with real
    // expiries: a new owner loaded past one, and the writer stopped).
    if (!all_idle && p.end_offset == p.start_offset) continue;
    moved.push_back(tp);
  }
  if (!committed_elsewhere && moved.empty()) return true;
  const uint64_t epoch = r.record.epoch;
  abort_loads(r.loads);
  const bool any_committed = std::any_of(r.record.txns.begin(), r.record.txns.end(),
                                         [](const state::TableTxn& t) { return t.committed; });
  if (committed_elsewhere) {
    // A new owner found every txn pre-committed and committed them; a
    // "lost" answer here came from Doris forgetting them since.
    log_->warn("epoch {}: the consumer group shows it committed by another member; it is not replayed", epoch);
    deps_.store.set_state(epoch, state::EpochState::Committed);
    last_committed_epoch_ = std::max(last_committed_epoch_, epoch);
    for (const auto& p : r.record.partitions) committed_[{p.topic, p.partition}] = p.end_offset;
    replay_.reset();
    resume_after_replay();
    return false;
  }
  if (any_committed) {
    failure_ = Error(Disposition::Fatal,
                     "epoch " + std::to_string(epoch) + " is partly committed in Doris, but the consumer group moved "
                     "past it on " + kafka::to_string(moved.front()) + " (another member resolved it without this "
                     "member's state): replaying it could load rows twice; see docs/operations.md");
    step(Who::Replay, Event::LoadFailedFatal);
    return false;
  }
  // Nothing of it is visible and the owners of the moved partitions re-read
  // them (resolve_pending): so does this member for the partitions that
  // still name it, under a new epoch number.
  log_->warn("epoch {}: the consumer group moved past it on {} partition(s) (it was resolved while this member was "
             "away): it is not replayed; its records are re-read",
             epoch, moved.size());
  deps_.store.set_state(epoch, state::EpochState::Aborted);
  ++deps_.metrics.epochs_aborted;
  for (const auto& p : r.record.partitions) {
    const TopicPartition tp{p.topic, p.partition};
    if (std::find(moved.begin(), moved.end(), tp) != moved.end()) continue;
    if (auto b = base_.find(tp); b != base_.end()) b->second = p.start_offset;
  }
  replay_.reset();
  resume_after_replay();
  return false;
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

}  // namespace cdc2doris::pipeline
