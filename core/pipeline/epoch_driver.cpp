// The epoch driver: feeds events to the pure transition() of epoch_machine.hpp
// and performs the actions it returns; commits of the closing epoch.
#include "core/pipeline/epoch_ranges.hpp"
#include "core/pipeline/pipeline_impl.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <thread>
#include <variant>

#include "core/common/crash_point.hpp"

namespace cdc2doris::pipeline {

state::EpochRecord Pipeline::Impl::make_record(uint64_t epoch, std::vector<state::TableTxn> txns,
                                                int64_t precommit_floor_ms) const {
  state::EpochRecord rec;
  rec.epoch = epoch;
  rec.label_prefix = cfg_.label_prefix;
  rec.state = state::EpochState::Precommitted;
  rec.txns = std::move(txns);
  rec.created_unix_ms = precommit_floor_ms;
  rec.partitions = epoch_ranges(pos_, base_, committed_);
  return rec;
}

std::optional<Error> Pipeline::Impl::finish_loads(LoadMap& loads, std::vector<state::TableTxn>& txns) {
  const size_t had = txns.size();
  const bool replaying = replay_ && &loads == &replay_->loads;
  // Bodies first, answers after: every BE works on its loads in parallel, and
  // ending 1,000 loads costs one round trip, not 1,000 (issue 18). A failure
  // here or below aborts the epoch by label, bodies ended or not.
  for (auto& [target, tl] : loads)
    for (auto& load : tl.loads)
      if (!load.skip && !load.isolated) {
        if (auto err = flush_pending(load)) return isolate_after(target, *err).value_or(*err);
        if (auto ended = load.stream->end_body(); !ended) {
          auto failed = load_failed(load, std::move(ended.error()));
          return isolate_after(target, failed).value_or(failed);
        }
      }
  // Isolated tables' bodies are sent now, while the others' are with Doris.
  std::vector<Target> isolated;
  for (auto& [target, tl] : loads)
    if (std::any_of(tl.loads.begin(), tl.loads.end(), [](const OpenLoad& l) { return l.isolated != nullptr; })) {
      if (auto err = finish_isolated(target, tl, replaying)) return err;
      isolated.push_back(target);
    }
  for (auto& [target, tl] : loads) {
    uint32_t part = 0;  // commit order within the table
    for (auto& load : tl.loads) {
      if (load.skip) continue;
      doris::LoadResult r;
      if (load.isolated) {
        r = *load.isolated->result;
      } else {
        auto res = load.stream->finish();
        if (!res) {
          auto failed = load_failed(load, std::move(res.error()));
          return isolate_after(target, failed).value_or(failed);
        }
        r = *res;
      }
      if (r.filtered_rows > 0)
        log_->warn("table {}: {} row(s) filtered by Doris within max_filter_ratio (label {}, txn {}, {})",
                   target.name(), r.filtered_rows, load.spec.label, r.txn_id, r.error_url);
      deps_.metrics.add_table_load(target.name(), load.rows, load.bytes, unix_ms());
      txns.push_back({target.db, target.table, load.spec.label, r.txn_id, false, part++});
    }
  }
  // The rejected records are out of this range: the table streams again.
  for (const auto& t : isolated) isolate_.erase(t);
  // Only a load Doris pre-committed now ends a failure streak: a replay
  // whose parts were all committed before loaded nothing.
  if (txns.size() > had) deps_.metrics.load_succeeded();
  return std::nullopt;
}

void Pipeline::Impl::end_open_epoch(const char* reason) {
  // The previous epoch must be fully committed first: at most one PRECOMMITTED
  // record exists at any time, and a table's txns commit in epoch order.
  drive_closing(/*block=*/true);
  if (replay_) return;  // the closing epoch turned into a replay; the open one was aborted
  if (closing_) return;  // stopping and the shutdown deadline passed first: shutdown() reports it
  if (!open_epoch_progressed()) {
    open_.started = Clock::now();
    open_.end_requested = false;
    deps_.metrics.advanced();  // idle: nothing waits for Doris
    return;
  }
  log_->debug("ending epoch {} ({}): {} table(s)", open_.epoch, reason, open_.loads.size());
  const std::string_view why = reason;
  if (why != "interval" && why != "shutdown") deps_.metrics.add_epoch_ended_early(reason);
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
    if (who != Who::Closing) publish_state();
    for (Action action : t.actions) {
      switch (action) {
        case Action::FinishLoads: {
          CDC2DORIS_CRASH_POINT("before_precommit");
          // Before the first body ends, so before any txn of the epoch is pre-committed.
          const int64_t precommit_floor_ms = unix_ms();
          std::vector<state::TableTxn> txns;
          std::optional<Error> err = finish_loads(open_.loads, txns);
          if (!err && open_.dead_letters) {
            err = deps_.dead_letters->flush(std::chrono::seconds(30));
            // Letters handed over may not have arrived: the re-read sends them again.
            if (err) handled_bad_.clear();
          }
          if (err) {
            log_->warn("epoch {}: pre-commit failed: {}", open_.epoch, err->what());
            failure_ = *err;
            failure_reason_ = "pre-commit";
            next = err->disposition() == Disposition::Retry ? Event::LoadFailedRetry : Event::LoadFailedFatal;
            has_next = true;
            break;
          }
          open_.dead_letters = false;
          open_.newest_source_ms.clear();
          open_.newest_seq.clear();
          for (const auto& [target, tl] : open_.loads) {
            int64_t& newest = open_.newest_source_ms[target.name()];
            for (const auto& load : tl.loads) {
              newest = std::max(newest, load.newest_source_ms);
              if (load.newest_seq) {
                auto [it, fresh] = open_.newest_seq.emplace(target, *load.newest_seq);
                if (!fresh) it->second = std::max(it->second, *load.newest_seq);
              }
            }
          }
          CDC2DORIS_CRASH_POINT("after_precommit");
          open_.record = make_record(open_.epoch, std::move(txns), precommit_floor_ms);
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
        case Action::CommitGroup:
          // A replayed epoch passed its commit point when it was first recorded.
          next = who == Who::Open ? commit_group_point(open_.record) : Event::GroupCommitted;
          has_next = true;
          break;
        case Action::AbortRecord:
          try {
            abort_record(open_.record);
          } catch (const state::StateError& e) {
            failure_ = e.to_error();
            next = Event::LoadFailedFatal;
            has_next = true;
          }
          break;
        case Action::CommitTxns:
          if (who == Who::Closing) {
            start_commits(*closing_);
          } else {
            // The recorded epoch becomes the closing one; consumption goes on
            // into the next epoch while its txns commit.
            state::EpochRecord record = who == Who::Open ? std::move(open_.record) : std::move(replay_->record);
            closing_.emplace();
            closing_->record = std::move(record);
            if (who == Who::Open) {
              closing_->newest_source_ms = std::move(open_.newest_source_ms);
              closing_->newest_seq = std::move(open_.newest_seq);
            }
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
  // Tables commit in parallel; the loads of one table one after the other,
  // in part order (txns are sorted by db, table, part), so Doris applies
  // them as the source did. A lost part holds back the table's later parts:
  // the replay replaces them all.
  const state::TableTxn* prev = nullptr;
  for (size_t i = 0; i < closing.record.txns.size(); ++i) {
    const auto& txn = closing.record.txns[i];
    const bool same_table = prev && prev->db == txn.db && prev->table == txn.table;
    if (same_table && !prev->committed) continue;  // the table's first uncommitted part is handled
    prev = &txn;
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
        deps_.metrics.beat();
      }
      c.retry_at = {};
      start_commits(c);
    }
    if (block && stop_.load()) {
      // Stopping: a commit hanging in Doris is waited for no longer than the
      // shutdown deadline. Checked before any result is taken, so a failure
      // in this round cannot be dropped on the way out.
      for (auto& f : c.inflight)
        if (f.second.wait_until(stop_deadline()) != std::future_status::ready) return;
    }
    bool retry = false;
    bool next_parts = false;  // a committed part may let the table's next one go
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
      if (!res) {
        auto* err = &res.error();
        auto& ctx = err->context();
        if (ctx.table.empty()) ctx.table = txn.db + "." + txn.table;
        if (ctx.label.empty()) ctx.label = txn.label;
        if (!ctx.txn_id) ctx.txn_id = txn.txn_id;
        deps_.metrics.add_doris_error(doris::to_string(err->kind()));
        deps_.metrics.commit_failed(err->what());
        deps_.metrics.note_error("commit", err->what());
        deps_.metrics.set_table_error(txn.db + "." + txn.table, err->what());
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
      if (const auto outcome = *res;
          outcome == doris::TxnOutcome::NotFoundOrAborted || outcome == doris::TxnOutcome::Aborted) {
        switch (classify_lost(txn, c.record, outcome == doris::TxnOutcome::Aborted)) {
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
      deps_.store.mark_txn_committed(c.record.epoch, txn.db, txn.table, txn.part);
      const bool more_parts = idx + 1 < c.record.txns.size() && c.record.txns[idx + 1].db == txn.db &&
                              c.record.txns[idx + 1].table == txn.table;
      if (more_parts) {
        next_parts = true;
        CDC2DORIS_CRASH_POINT("between_load_commits");
      }
      CDC2DORIS_CRASH_POINT("between_table_commits");
    }
    if (next_parts && !retry && c.retry_at == Clock::time_point{}) start_commits(c);
    if (!c.inflight.empty()) {
      if (!block) return;  // non-blocking, still running
      continue;
    }
    // A failure collected by an earlier non-blocking round that returned
    // while other commits were still running left its txn uncommitted: the
    // epoch is not done until it (and every part behind it) commits. Parts
    // held back by a lost part of their table are the replay's.
    std::set<std::pair<std::string, std::string>> lost_tables;
    for (size_t i : c.lost) lost_tables.insert({c.record.txns[i].db, c.record.txns[i].table});
    for (size_t i = 0; i < c.record.txns.size() && !retry; ++i) {
      const auto& t = c.record.txns[i];
      if (!t.committed && !c.lost.count(i) && !lost_tables.count({t.db, t.table})) retry = true;
    }
    if (retry) {
      step(Who::Closing, Event::CommitRetry);
      if (!block) return;
      continue;
    }
    step(Who::Closing, c.lost.empty() ? Event::AllCommitted : Event::TxnLost);
  }
}

std::optional<bool> Pipeline::Impl::unique_key(const Target& t) {
  if (auto it = table_info_cache_.find(t); it != table_info_cache_.end()) return it->second.unique;
  if (auto s = deps_.router.settings(t).unique_key) return *s;
  auto schema = deps_.doris.schema(t.db, t.table);
  if (!schema.has_value()) return std::nullopt;
  return schema->keys_type == "UNIQUE_KEYS";
}

Pipeline::Impl::LostCheck Pipeline::Impl::classify_lost(const state::TableTxn& txn, const state::EpochRecord& rec,
                                                         bool known_aborted) {
  const uint64_t epoch = rec.epoch;
  // "not found" is ambiguous once Doris forgot a finished label: the label's
  // own state tells a committed txn from a lost one.
  doris::LoadSpec spec;
  spec.db = txn.db;
  spec.table = txn.table;
  spec.label = txn.label;
  // A table with a (hidden) sequence column refuses a load that does not name it.
  spec.sequence_col = deps_.router.settings({txn.db, txn.table}).sequence_col;
  auto probed = deps_.doris.probe_label(spec);
  if (!probed) {
    auto* err = &probed.error();
    if (err->disposition() == Disposition::Retry) return LostCheck::Retry;
    failure_ = *err;
    step(Who::Closing, Event::CommitFatal);
    return LostCheck::Retry;  // not reached: CommitFatal stops
  }
  const auto& ls = *probed;
  if (ls.state == doris::LabelState::Finished) return LostCheck::Committed;
  if (ls.state != doris::LabelState::Unused && ls.txn_id) {
    // Someone (an earlier replay attempt) holds the label: free it for the replay.
    auto r = deps_.doris.abort(txn.db, *ls.txn_id);
    if (!r.has_value()) return LostCheck::Retry;
  }
  if (known_aborted) return LostCheck::Lost;
  // Pre-committed less than Doris' pre-commit timeout ago, the txn cannot
  // have expired: Doris committed it (a commit whose answer was lost) and
  // forgot the label since (group.cpp, forget_window).
  if (forget_window(rec.created_unix_ms) == ForgetWindow::Young) {
    log_->info("epoch {}: txn {} of {}.{} (label {}) is no longer known to Doris within the pre-commit timeout: "
               "committed, and forgotten by Doris",
               epoch, txn.txn_id, txn.db, txn.table, txn.label);
    return LostCheck::Committed;
  }
  // Doris knows neither the txn nor a finished label: it may have committed
  // and then been forgotten (FE Config label_num_threshold: the oldest
  // finished txns beyond 2000 per database; label_keep_max_second /
  // streaming_label_keep_max_second by age), e.g. a commit whose answer was
  // lost and whose retry came after that. A UNIQUE KEY table takes the same
  // rows again to the same state; any other table would hold them twice.
  if (unproven_verdict(cfg_.label_prefix, epoch)) {
    log_->warn("epoch {}: txn {} of {}.{} (label {}) is unknown to Doris; the operator set delivery.unproven_epoch "
               "to '{}:{}'",
               epoch, txn.txn_id, txn.db, txn.table, txn.label, epoch,
               cfg_.unproven_epoch_committed ? "committed" : "replay");
    return cfg_.unproven_epoch_committed ? LostCheck::Committed : LostCheck::Lost;
  }
  const auto unique = unique_key({txn.db, txn.table});
  if (!unique) return LostCheck::Retry;
  if (*unique) return LostCheck::Lost;
  ErrorContext ctx;
  ctx.table = txn.db + "." + txn.table;
  ctx.label = txn.label;
  ctx.txn_id = txn.txn_id;
  failure_ = Error(Disposition::Fatal,
                   "epoch " + std::to_string(epoch) + ": Doris no longer knows txn " + std::to_string(txn.txn_id) +
                       " (label " + txn.label + ") of " + ctx.table +
                       ", which is not a UNIQUE KEY table: its commit may have gone through before Doris forgot "
                       "the label (label_num_threshold, label_keep_max_second), so whether the epoch's rows are "
                       "in the table cannot be proven, and replaying them could load them twice. Look for the "
                       "epoch's rows (`cdc2doris state show` gives its offsets), then set delivery.unproven_epoch: '" +
                       std::to_string(epoch) + ":committed' if they are there or '" + std::to_string(epoch) +
                       ":replay' if not, and restart (docs/operations.md, \"An epoch Doris forgot\")",
                   ctx);
  step(Who::Closing, Event::CommitFatal);
  return LostCheck::Retry;  // not reached: CommitFatal stops
}

void Pipeline::Impl::mark_committed(ClosingEpoch& c) {
  last_committed_epoch_ = c.record.epoch;
  ++deps_.metrics.epochs_committed;
  deps_.metrics.commit_succeeded();
  deps_.metrics.advanced();
  const int64_t now = unix_ms();
  for (const auto& txn : c.record.txns) {
    const std::string table = txn.db + "." + txn.table;
    auto newest = c.newest_source_ms.find(table);
    deps_.metrics.table_committed(table, newest == c.newest_source_ms.end() ? 0 : newest->second, now);
  }
  for (const auto& [t, seq] : c.newest_seq) {
    auto [it, fresh] = committed_newest_seq_.emplace(t, seq);
    if (!fresh) it->second = std::max(it->second, seq);
  }
  deps_.metrics.observe_commit_latency(std::chrono::duration<double>(Clock::now() - c.committing_since).count());
  for (const auto& p : c.record.partitions) {
    committed_[{p.topic, p.partition}] = p.end_offset;
    if (auto h = handled_bad_.find({p.topic, p.partition}); h != handled_bad_.end()) {
      h->second.erase(h->second.begin(), h->second.lower_bound(p.end_offset));
      if (h->second.empty()) handled_bad_.erase(h);
    }
  }
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
    for (const auto& [tp, off] : offsets)
      group_offsets_pending_[tp] = {off, state::encode_committed(c.record.epoch, c.record.label_prefix)};
  } else if (!offsets.empty()) {
    kafka::GroupOffsetMap g;
    for (const auto& [tp, off] : offsets) {
      if (may_commit_end(tp, off))
        g[tp] = {off, state::encode_committed(c.record.epoch, c.record.label_prefix)};
      else
        log_->info("epoch {}: {} changed owner since the epoch read it; its end offset {} is left to the group",
                   c.record.epoch, kafka::to_string(tp), off);
    }
    // Past the commit point a refusal changes nothing: the group's pending
    // metadata names this epoch, and whoever owns the partitions now finds
    // its txns committed and starts after it.
    if (!g.empty()) {
      if (auto r = deps_.source.commit_group(g); r.status != kafka::CommitStatus::Committed)
        log_->warn("committing end offsets of epoch {} to the consumer group failed: {}", c.record.epoch,
                   r.error ? r.error->what() : "?");
    }
  }
  CDC2DORIS_CRASH_POINT("after_offset_commit");
  publish_partitions();
}

}  // namespace cdc2doris::pipeline
