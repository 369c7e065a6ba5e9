// Partition assignment and revocation (librdkafka rebalance callbacks).
#include "core/pipeline/pipeline_impl.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <limits>

namespace cdc2doris::pipeline {

// The rebalance callbacks run inside librdkafka's C frames (source.poll()):
// nothing may unwind through them. A stop raised inside is kept and re-thrown
// by the run loop once poll() returned.
kafka::OffsetMap Pipeline::Impl::on_assign(const std::vector<TopicPartition>& added) {
  rebalanced_since_fence_ = true;
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
  rebalanced_since_fence_ = true;
  try {
    revoke_partitions(revoked, lost);
  } catch (const FatalStop& f) {
    if (!deferred_stop_) deferred_stop_ = f.error;
  } catch (const state::StateError& e) {
    if (!deferred_stop_) deferred_stop_ = e.to_error();
  }
}

void Pipeline::Impl::on_rebalance() { rebalanced_since_fence_ = true; }

kafka::OffsetMap Pipeline::Impl::assign_partitions(const std::vector<TopicPartition>& added) {
  kafka::OffsetMap out;
  std::vector<TopicPartition> from_group;
  for (const auto& tp : added) {
    if (replay_) {
      if (auto it = replay_->ranges.find(tp); it != replay_->ranges.end()) {
        out[tp] = it->second.first;
        pos_[tp] = it->second.second;
        base_[tp] = it->second.second;
        continue;
      }
    }
    from_group.push_back(tp);
  }
  {
    // The replay's ranges must still be in the log (an empty one reads nothing).
    kafka::OffsetMap replayed;
    for (const auto& [tp, off] : out)
      if (replay_->ranges.at(tp).second > off) replayed[tp] = off;
    check_start_offsets(replayed, /*replaying=*/true);
  }
  // The group decides where a partition starts, never this instance's own
  // record of an earlier ownership period: another member may have loaded
  // it since (docs/architecture.md, "Multi-instance protocol").
  for (const auto& [tp, off] : group_starts(from_group)) {
    out[tp] = off;
    pos_[tp] = off;
    base_[tp] = off;
  }
  for (const auto& tp : added) {
    auto it = out.find(tp);
    owned_from_[tp] = it != out.end() ? it->second : std::numeric_limits<int64_t>::min();
  }
  // A partition left out starts per auto.offset.reset; the first record seen
  // fixes the epoch's start for it.
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
    erase_position(tp, /*with_base=*/true);
    owned_from_.erase(tp);
    deps_.metrics.erase_partition(kafka::to_string(tp));
  }
  if (lost && !replay_) {
    // Someone else owns them already: committing their rows now could race
    // the new owner. The rest is re-read.
    abort_open_epoch_for_replay();
    rewind("partitions lost");
  }
}

}  // namespace cdc2doris::pipeline
