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
#include "core/doris/label.hpp"

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
  // Probes one label and notes a txn holding it; Stop when the walk has to
  // stop (an unknown table, a fatal error).
  enum class Probe { Unused, Held, Stop };
  auto probe = [&](const Target& target, const std::string& label, uint64_t epoch, uint64_t first_epoch) {
    doris::LoadSpec spec;
    spec.db = target.db;
    spec.table = target.table;
    spec.label = label;
    // A table with a (hidden) sequence column refuses a load that does not name it.
    spec.sequence_col = deps_.router.settings(target).sequence_col;
    auto probed = deps_.doris.probe_label(spec);
    if (auto* err = std::get_if<doris::DorisError>(&probed)) {
      // A table that does not exist (any more) cannot hold txns of ours.
      if (err->kind() == doris::ErrorKind::UnknownTable) return Probe::Stop;
      std::lock_guard lk(mu);
      if (!fatal) fatal = *err;
      return Probe::Stop;
    }
    const auto& st = std::get<doris::LabelState>(probed);
    if (st.state == doris::LabelState::Unused) return Probe::Unused;
    // Refuses the start (the first refusal wins), naming the label and its txn.
    auto refuse = [&](const std::string& why) {
      std::lock_guard lk(mu);
      ErrorContext ctx;
      ctx.table = target.name();
      ctx.label = spec.label;
      ctx.txn_id = st.txn_id;
      if (!fatal) fatal = Error(Disposition::Fatal, "label " + spec.label + why, ctx);
      return Probe::Stop;
    };
    if (st.state == doris::LabelState::Finished)
      return refuse(" is already FINISHED in Doris but the checkpoint state does not know it: the state "
                    "directory was reset or belongs to another pipeline; set a new delivery.label_prefix");
    if (epoch > first_epoch) {
      // This state uses no epoch number before the previous one is
      // recorded, so what it left behind is at first_epoch only. A live txn
      // further on is another writer's under the same label prefix (a copy
      // of this configuration with its own state; issue 31): aborting it
      // would break that writer's epoch, so the start is refused instead,
      // before any txn is touched.
      return refuse(std::string(" is held by a ") + doris::to_string(st.state) +
                    " txn beyond any epoch this state could have left open (epoch " + std::to_string(first_epoch) +
                    "): another cdc2doris writes under the same label prefix; give each instance its own "
                    "delivery.label_prefix");
    }
    if (st.txn_id) {
      std::lock_guard lk(mu);
      held.push_back({target, spec.label, *st.txn_id});
    }
    return Probe::Held;
  };
  auto worker = [&] {
    for (size_t i = next++; i < work.size(); i = next++) {
      const auto& [walk, target] = work[i];
      int budget = cfg_.probe_max_labels;
      for (uint64_t e = walk.first_epoch; budget > 0; ++e) {
        const std::string first = doris::make_label(walk.prefix, target.db, target.table, e);
        --budget;
        const Probe p0 = probe(target, first, e, walk.first_epoch);
        if (p0 == Probe::Stop) break;
        // A table's later loads of the epoch (part n begins after part n-1,
        // but a stream's first bytes may still reach Doris in another
        // order): walk them until one is unused, also when part 0 is.
        bool stop = false;
        for (uint32_t part = 1; budget > 0; ++part) {
          --budget;
          const Probe p = probe(target, doris::make_label(walk.prefix, target.db, target.table, e, part), e,
                                walk.first_epoch);
          if (p == Probe::Stop) stop = true;
          if (p != Probe::Held) break;
        }
        if (stop || p0 == Probe::Unused) break;
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
    if (auto* err = std::get_if<doris::DorisError>(&r)) throw FatalStop{*err};
    ++deps_.metrics.lingering_txns_aborted;
    log_->info("recovery: aborted lingering txn {} (label {}, table {})", h.txn_id, h.label, h.target.name());
  }
}

}  // namespace cdc2doris::pipeline
