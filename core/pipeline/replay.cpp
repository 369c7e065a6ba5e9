// Replaying a recorded epoch whose txns Doris lost, from Kafka.
#include "core/pipeline/pipeline_impl.hpp"

#include <spdlog/spdlog.h>

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

}  // namespace cdc2doris::pipeline
