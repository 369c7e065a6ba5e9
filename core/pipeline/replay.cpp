// Replaying a recorded epoch whose txns Doris lost, from Kafka.
#include "core/pipeline/pipeline_impl.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
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
      if (auto* err = std::get_if<doris::DorisError>(&res))
        log_->warn("epoch {}: aborting txn {} (label {}) before its replay failed: {}", r.record.epoch, txn.txn_id,
                   txn.label, err->what());
    }
  }
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
  kafka::OffsetMap starts;
  for (const auto& [tp, range] : r.ranges)
    if (range.second > range.first) starts[tp] = range.first;
  check_start_offsets(starts, /*replaying=*/true);
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
  if (decoder_.decode(fill_record(msg), change_) || change_.kind != decode::Kind::Change) return;
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
  for (const auto& fresh : txns) {
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
