// Start-up recovery: roll a PRECOMMITTED epoch forward and abort txns lingering
// under labels no record knows.
#include "core/pipeline/pipeline_impl.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>
#include <variant>

#include "core/common/thread_name.hpp"
#include "core/doris/lingering_walk.hpp"

namespace cdc2doris::pipeline {

void Pipeline::Impl::recover() {
  for (const auto& [tp, off] : deps_.store.committed_offsets()) committed_[to_kafka(tp)] = off.offset;
  // Before a roll-forward: its replay drops rows as the epoch did (truncates).
  load_ddl_state();
  auto latest = deps_.store.latest();
  if (!latest) {
    open_.epoch = 1;
  } else if (latest->state == state::EpochState::Committed) {
    last_committed_epoch_ = latest->epoch;
    open_.epoch = latest->epoch + 1;
  } else if (latest->state == state::EpochState::Aborted) {
    // An aborted record committed nothing. Its number is not reused: its
    // pending metadata may have reached the consumer group (a commit that
    // timed out), and a label must never name two different ranges.
    open_.epoch = latest->epoch + 1;
    if (auto prev = latest->epoch > 1 ? deps_.store.get(latest->epoch - 1) : std::nullopt)
      last_committed_epoch_ = prev->epoch;
  } else if (!own_record_passed(*latest)) {
    // Recorded, but the crash came before the consumer group accepted it:
    // no member commits it; its records are re-read under the next number.
    log_->info("recovery: epoch {} is PRECOMMITTED but never reached the consumer group; aborting its {} txn(s)",
               latest->epoch, latest->txns.size());
    if (auto prev = latest->epoch > 1 ? deps_.store.get(latest->epoch - 1) : std::nullopt)
      last_committed_epoch_ = prev->epoch;
    abort_record(*latest);
  } else {
    open_.epoch = latest->epoch + 1;
    log_->info("recovery: epoch {} is PRECOMMITTED with {} txn(s); rolling it forward", latest->epoch,
               latest->txns.size());
    if (auto prev = latest->epoch > 1 ? deps_.store.get(latest->epoch - 1) : std::nullopt)
      last_committed_epoch_ = prev->epoch;
    closing_.emplace();
    closing_->record = *latest;
    start_commits(*closing_);
    publish_state();  // /status and a forced exit name the epoch being rolled forward
    // Commits run now; a txn Doris lost turns the epoch into a replay, which
    // the main loop finishes once the partitions are assigned.
    drive_closing(/*block=*/true);
    // With a range reader the replay needs no partition of the group, so it
    // ends here; a restart never waits for an assignment that may not come
    // (issue 31: the partitions of its range may be another member's now).
    while (replay_ && replay_->by_range) {
      replay_by_range();
      drive_closing(/*block=*/true);
    }
  }
  abort_lingering();
  resume_ddl();
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
  struct Held {
    Target target;
    std::string label;
    int64_t txn_id;
  };
  std::vector<Held> held;  // aborted once every walk is done and none stopped the start
  // Refuses the start (the first refusal wins), naming the label and its txn.
  auto refuse = [&](const Target& target, const doris::LabelInUse& in_use, const std::string& why) {
    std::lock_guard lk(mu);
    ErrorContext ctx;
    ctx.table = target.name();
    ctx.label = in_use.label;
    ctx.txn_id = in_use.state.txn_id;
    if (!fatal) fatal = Error(Disposition::Fatal, "label " + in_use.label + why, ctx);
    return doris::WalkNext::Stop;
  };
  auto worker = [&] {
    for (size_t i = next++; i < work.size(); i = next++) {
      const auto& [walk, target] = work[i];
      doris::LabelWalk lw;
      lw.prefix = walk.prefix;
      lw.db = target.db;
      lw.table = target.table;
      lw.sequence_col = deps_.router.settings(target).sequence_col;
      lw.first_epoch = walk.first_epoch;
      lw.max_probes = cfg_.probe_max_labels;
      auto walked = doris::walk_labels(deps_.doris, lw, [&](const doris::LabelInUse& in_use) {
        if (in_use.state.state == doris::LabelState::Finished)
          return refuse(target, in_use,
                        " is already FINISHED in Doris but the checkpoint state does not know it: the state "
                        "directory was reset or belongs to another pipeline; set a new delivery.label_prefix");
        if (in_use.epoch > walk.first_epoch) {
          // This state uses no epoch number before the previous one is
          // recorded, so what it left behind is at first_epoch only. A live
          // txn further on is another writer's under the same label prefix
          // (a copy of this configuration with its own state; issue 31):
          // aborting it would break that writer's epoch, so the start is
          // refused instead, before any txn is touched.
          return refuse(target, in_use,
                        std::string(" is held by a ") + doris::to_string(in_use.state.state) +
                            " txn beyond any epoch this state could have left open (epoch " +
                            std::to_string(walk.first_epoch) +
                            "): another cdc2doris writes under the same label prefix; give each instance its own "
                            "delivery.label_prefix");
        }
        if (in_use.state.txn_id) {
          std::lock_guard lk(mu);
          held.push_back({target, in_use.label, *in_use.state.txn_id});
        }
        return doris::WalkNext::Continue;
      });
      if (!walked) {
        auto& err = walked.error();
        std::lock_guard lk(mu);
        if (!fatal) fatal = err;
      }
    }
  };
  {
    std::vector<std::jthread> workers;
    int n = std::clamp<int>(cfg_.probe_parallelism, 1, static_cast<int>(work.size()));
    for (int i = 0; i < n; ++i)
      workers.emplace_back([&worker] {
        name_this_thread("txn-probe");
        worker();
      });
  }
  if (fatal) throw FatalStop{*fatal};
  for (const auto& h : held) {
    auto r = deps_.doris.abort(h.target.db, h.txn_id);
    if (!r) throw FatalStop{r.error()};
    ++deps_.metrics.lingering_txns_aborted;
    log_->info("recovery: aborted lingering txn {} (label {}, table {})", h.txn_id, h.label, h.target.name());
  }
}

}  // namespace cdc2doris::pipeline
