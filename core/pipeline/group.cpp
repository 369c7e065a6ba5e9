// Multi-instance operation on the Kafka consumer group (docs/architecture.md,
// "Multi-instance protocol"): the fenced commit point of an epoch, where a
// newly assigned partition starts, and resolving an epoch another member (or
// an earlier run of this one) left pending in the group's metadata.
#include "core/pipeline/pipeline_impl.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <thread>
#include <variant>

#include "core/common/crash_point.hpp"
#include "core/doris/label.hpp"

namespace cdc2doris::pipeline {

namespace {

constexpr auto kGroupTimeout = std::chrono::seconds(10);
// How long the commit point and the group reads retry a coordinator that does
// not answer (a broker restart) before the daemon stops for a restart.
constexpr auto kGroupRetryFor = std::chrono::seconds(60);

std::vector<state::EpochTable> epoch_tables(const state::EpochRecord& rec) {
  // Per table its txns in commit order (TableTxn::part), each a label.
  std::map<std::pair<std::string, std::string>, std::map<uint32_t, std::string>> parts;
  for (const auto& t : rec.txns) parts[{t.db, t.table}][t.part] = t.label;
  std::vector<state::EpochTable> out;
  for (const auto& [k, labels] : parts) {
    state::EpochTable et{k.first, k.second, labels.empty() ? 1 : labels.rbegin()->first + 1, {}};
    // A resolver only knows labels: where the commit order is not the
    // labels' part order (sequence mode), the metadata spells it out.
    bool identity = true;
    std::vector<uint32_t> order;
    for (const auto& [part, label] : labels) {
      uint32_t label_part = part;
      for (uint32_t n = 0; n < et.parts; ++n)
        if (doris::make_label(rec.label_prefix, k.first, k.second, rec.epoch, n) == label) label_part = n;
      identity = identity && label_part == part;
      order.push_back(label_part);
    }
    if (!identity && order.size() == et.parts) et.order = std::move(order);
    out.push_back(std::move(et));
  }
  return out;
}

std::vector<TopicPartition> record_partitions(const state::EpochRecord& rec) {
  std::vector<TopicPartition> out;
  for (const auto& p : rec.partitions) out.push_back({p.topic, p.partition});
  return out;
}

bool names_epoch(const kafka::GroupOffsetMap& got, const std::string& prefix, uint64_t epoch) {
  return std::any_of(got.begin(), got.end(), [&](const auto& kv) {
    auto m = state::decode_group_meta(kv.second.metadata);
    return m.kind == state::GroupMeta::Kind::Pending && m.label_prefix == prefix && m.epoch == epoch;
  });
}

}  // namespace

std::variant<kafka::GroupOffsetMap, Error> Pipeline::Impl::read_group(const std::vector<TopicPartition>& tps) {
  const auto until = Clock::now() + kGroupRetryFor;
  for (int attempt = 0;; ++attempt) {
    auto r = deps_.source.committed_group(tps, kGroupTimeout);
    if (std::holds_alternative<kafka::GroupOffsetMap>(r)) return r;
    const Error& e = std::get<Error>(r);
    if (e.disposition() == Disposition::Fatal || Clock::now() >= until || stop_.load()) return e;
    log_->warn("reading the consumer group's offsets failed, will retry: {}", e.what());
    sleep_backoff(attempt);
  }
}

Event Pipeline::Impl::commit_group_point(const state::EpochRecord& rec) {
  if (rec.partitions.empty()) return Event::GroupCommitted;
  const auto tables = epoch_tables(rec);
  kafka::GroupOffsetMap offsets;
  for (const auto& p : rec.partitions)
    offsets[{p.topic, p.partition}] = {p.start_offset,
                                       state::encode_pending(rec.epoch, p.end_offset, rec.label_prefix, tables)};
  const auto until = Clock::now() + kGroupRetryFor;
  for (int attempt = 0;; ++attempt) {
    kafka::CommitResult r = deps_.source.commit_group(offsets);
    if (r.status == kafka::CommitStatus::Committed) {
      CDC2DORIS_CRASH_POINT("after_group_commit");
      return Event::GroupCommitted;
    }
    const std::string why = r.error ? r.error->what() : "?";
    if (r.status == kafka::CommitStatus::Fenced) {
      log_->warn("epoch {}: the consumer group refused this member's generation: {}", rec.epoch, why);
      break;
    }
    log_->warn("epoch {}: committing the pending epoch to the consumer group failed, will retry: {}", rec.epoch, why);
    if (Clock::now() >= until || stop_deadline_passed()) break;
    sleep_backoff(attempt);
  }
  // An attempt that timed out may still have been written: the group itself
  // says whether the commit point passed.
  auto got = read_group(record_partitions(rec));
  if (auto* err = std::get_if<Error>(&got)) {
    failure_ = Error(Disposition::Retry,
                     "epoch " + std::to_string(rec.epoch) +
                         ": cannot tell whether the consumer group accepted it (" + err->what() +
                         "); its record stays PRECOMMITTED and the next start asks the group again");
    // Its txns may be past the commit point: the stop must not abort them
    // (run() aborts what the open epoch still holds).
    open_.loads.clear();
    return Event::LoadFailedFatal;
  }
  if (names_epoch(std::get<kafka::GroupOffsetMap>(got), rec.label_prefix, rec.epoch)) {
    log_->info("epoch {}: an earlier attempt reached the consumer group; committing it", rec.epoch);
    return Event::GroupCommitted;
  }
  failure_ = Error(Disposition::Retry, "epoch " + std::to_string(rec.epoch) + " fenced by the consumer group");
  failure_reason_ = "fenced";
  ++deps_.metrics.epochs_fenced;
  return Event::Fenced;
}

void Pipeline::Impl::abort_record(const state::EpochRecord& rec) {
  // Nothing of the epoch reached the group, so no other member commits its
  // txns — unless an attempt that timed out was written after all and a new
  // owner resolved it meanwhile: then Doris answers "already committed".
  bool committed_elsewhere = false;
  for (const auto& t : rec.txns) {
    auto r = deps_.doris.abort(t.db, t.txn_id);
    if (auto* err = std::get_if<doris::DorisError>(&r)) {
      if (err->kind() == doris::ErrorKind::AlreadyCommitted) committed_elsewhere = true;
      else log_->warn("epoch {}: aborting txn {} (label {}) failed: {}", rec.epoch, t.txn_id, t.label, err->what());
    }
  }
  deps_.store.set_state(rec.epoch, committed_elsewhere ? state::EpochState::Committed : state::EpochState::Aborted);
  if (committed_elsewhere) {
    // Its rows are in Doris: the rewind that follows starts the partitions
    // still held after the epoch, and nothing is left to abort.
    for (const auto& p : rec.partitions) {
      const TopicPartition tp{p.topic, p.partition};
      committed_[tp] = p.end_offset;
      if (auto b = base_.find(tp); b != base_.end()) b->second = p.end_offset;
    }
    open_.loads.clear();
    last_committed_epoch_ = rec.epoch;
    log_->warn("epoch {}: another member committed it after this one was fenced; its records are not re-read here",
               rec.epoch);
  } else {
    log_->warn("epoch {}: fenced by the consumer group; its txns are aborted and its records re-read", rec.epoch);
  }
  // The number is not reused: a new owner may have seen it pending.
  open_.epoch = rec.epoch + 1;
  open_.record = {};
  deps_.metrics.set_epochs(open_.epoch, last_committed_epoch_);
}

bool Pipeline::Impl::own_record_passed(const state::EpochRecord& rec) {
  if (rec.partitions.empty()) return true;
  auto got = read_group(record_partitions(rec));
  if (auto* err = std::get_if<Error>(&got))
    throw FatalStop{Error(Disposition::Retry, "recovery: epoch " + std::to_string(rec.epoch) +
                                                  " is PRECOMMITTED and the consumer group cannot be asked whether "
                                                  "it passed its commit point: " +
                                                  err->what())};
  if (names_epoch(std::get<kafka::GroupOffsetMap>(got), rec.label_prefix, rec.epoch)) return true;
  // Not (or no longer) named: a member that resolved it committed every
  // txn, so one finished label means it passed.
  for (const auto& t : rec.txns) {
    doris::LoadSpec spec;
    spec.db = t.db;
    spec.table = t.table;
    spec.label = t.label;
    spec.sequence_col = deps_.router.settings({t.db, t.table}).sequence_col;
    auto probed = deps_.doris.probe_label(spec);
    if (auto* err = std::get_if<doris::DorisError>(&probed)) {
      if (err->kind() == doris::ErrorKind::UnknownTable) continue;
      throw FatalStop{*err};
    }
    if (std::get<doris::LabelState>(probed).state == doris::LabelState::Finished) return true;
  }
  return false;
}

Pipeline::Impl::PendingFate Pipeline::Impl::resolve_pending(const state::GroupMeta& m) {
  const std::pair<std::string, uint64_t> key{m.label_prefix, m.epoch};
  if (auto it = resolved_.find(key); it != resolved_.end()) return it->second;
  // This instance's own epoch: its record knows.
  if (m.label_prefix == cfg_.label_prefix) {
    if (auto rec = deps_.store.get(m.epoch)) {
      if (rec->state == state::EpochState::Committed) return resolved_[key] = PendingFate::Committed;
      if (rec->state == state::EpochState::Aborted) return resolved_[key] = PendingFate::Aborted;
    }
  }
  struct Probe {
    Target target;
    std::string label;
    doris::LabelState state;
  };
  std::vector<Probe> probes;
  auto probe = [&](const Target& t, const std::string& label) -> std::optional<doris::LabelState> {
    doris::LoadSpec spec;
    spec.db = t.db;
    spec.table = t.table;
    spec.label = label;
    spec.sequence_col = deps_.router.settings(t).sequence_col;
    for (int attempt = 0;; ++attempt) {
      auto probed = deps_.doris.probe_label(spec);
      if (auto* ls = std::get_if<doris::LabelState>(&probed)) return *ls;
      const auto& err = std::get<doris::DorisError>(probed);
      if (err.kind() == doris::ErrorKind::UnknownTable) return std::nullopt;  // a dropped table holds nothing
      if (err.disposition() != Disposition::Retry || attempt >= 8 || stop_.load()) throw FatalStop{err};
      sleep_backoff(attempt);
    }
  };
  if (m.tables_listed) {
    // In commit order: the commits below go one after the other in it.
    for (const auto& t : m.tables)
      for (uint32_t i = 0; i < t.parts; ++i) {
        const uint32_t part = t.order.empty() ? i : t.order[i];
        const std::string label = doris::make_label(m.label_prefix, t.db, t.table, m.epoch, part);
        if (auto ls = probe({t.db, t.table}, label)) probes.push_back({{t.db, t.table}, label, *ls});
      }
  } else {
    // The list did not fit into the metadata: walk the labels of every table
    // this instance knows (docs/architecture.md says what this misses).
    std::set<Target> tables;
    for (const auto& [t, e] : deps_.store.table_epochs()) tables.insert({t.db, t.table});
    for (const auto& t : deps_.router.known_targets()) tables.insert(t);
    for (const auto& t : tables)
      for (uint32_t part = 0; part < 64; ++part) {
        const std::string label = doris::make_label(m.label_prefix, t.db, t.table, m.epoch, part);
        auto ls = probe(t, label);
        if (!ls || ls->state == doris::LabelState::Unused) break;
        probes.push_back({t, label, *ls});
      }
  }
  size_t finished = 0, precommitted = 0;
  std::vector<std::string> lost, running;
  for (const auto& p : probes) {
    if (p.state.state == doris::LabelState::Finished) ++finished;
    else if (p.state.state == doris::LabelState::Precommitted) ++precommitted;
    else if (p.state.state == doris::LabelState::Running) running.push_back(p.label);
    else if (m.tables_listed) lost.push_back(p.label);  // aborted and forgotten
  }
  const std::string name = "epoch " + std::to_string(m.epoch) + " of label prefix '" + m.label_prefix + "'";
  // A load runs under a label of an epoch past its commit point only when
  // its owner replays it (issue 31): re-reading the range here as well
  // would load it twice. Decided again at the next start.
  if (!running.empty())
    throw FatalStop{Error(Disposition::Retry,
                          name + " is pending in the consumer group and label " + running.front() +
                              " is held by a running load (its owner is replaying the epoch, or a replay of it was "
                              "interrupted): not resolved by this member now; retried at the next start")};
  if (finished > 0 && !lost.empty())
    throw FatalStop{Error(Disposition::Retry,
                          name + " is pending in the consumer group and partly committed in Doris, but label " +
                              lost.front() + " (and " + std::to_string(lost.size() - 1) +
                              " more) is neither committed nor pre-committed (its pre-commit expired?): only the "
                              "instance that wrote it can replay it from its state; start it, or see "
                              "docs/operations.md")};
  if (!lost.empty() || (finished == 0 && precommitted == 0)) {
    // Nothing of it is visible: abort what is still pre-committed, re-read the range.
    for (const auto& p : probes)
      if (p.state.state == doris::LabelState::Precommitted && p.state.txn_id) {
        auto r = deps_.doris.abort(p.target.db, *p.state.txn_id);
        if (auto* err = std::get_if<doris::DorisError>(&r)) throw FatalStop{*err};
      }
    log_->warn("{} was pending in the consumer group and nothing of it is in Doris: its range is re-read", name);
    ++deps_.metrics.pending_epochs_resolved;
    return resolved_[key] = PendingFate::Aborted;
  }
  // Past its commit point: commit what is still pre-committed.
  for (const auto& p : probes) {
    if (p.state.state != doris::LabelState::Precommitted || !p.state.txn_id) continue;
    for (int attempt = 0;; ++attempt) {
      auto r = deps_.doris.commit(p.target.db, *p.state.txn_id);
      if (auto* err = std::get_if<doris::DorisError>(&r)) {
        if (err->disposition() != Disposition::Retry || attempt >= 8 || stop_.load()) throw FatalStop{*err};
        sleep_backoff(attempt);
        continue;
      }
      if (const auto o = std::get<doris::TxnOutcome>(r);
          o == doris::TxnOutcome::NotFoundOrAborted || o == doris::TxnOutcome::Aborted) {
        auto again = probe(p.target, p.label);
        if (!again || again->state != doris::LabelState::Finished)
          throw FatalStop{Error(Disposition::Retry, name + ": txn " + std::to_string(*p.state.txn_id) + " (label " +
                                                        p.label + ") vanished while it was being committed")};
      }
      break;
    }
    log_->info("{}: committed txn {} (label {}) left pre-committed by its owner", name, *p.state.txn_id, p.label);
  }
  log_->info("{} was pending in the consumer group and is committed in Doris: its partitions start after it", name);
  ++deps_.metrics.pending_epochs_resolved;
  return resolved_[key] = PendingFate::Committed;
}

// The broker checks an OffsetCommit's generation, not which partitions the
// member owns. An epoch that was past its commit point when its partition was
// lost still commits (the new owner resolves it the same way), and by then
// this member may have rejoined under a new generation: its end offset would
// be accepted. The new owner may have loaded the partition further since, so
// writing the older end would move the group back over rows already in Doris,
// and whoever owns the partition next would load them twice. Likewise an epoch
// rolled forward at startup, for a partition the group had moved past while
// this member was down. So an end offset goes out only for a partition owned
// now, and only if it is not behind where that ownership began.
bool Pipeline::Impl::may_commit_end(const TopicPartition& tp, int64_t end) const {
  auto it = owned_from_.find(tp);
  return it != owned_from_.end() && end >= it->second;
}

kafka::OffsetMap Pipeline::Impl::group_starts(const std::vector<TopicPartition>& tps) {
  kafka::OffsetMap out;
  if (tps.empty()) return out;
  auto got = read_group(tps);
  if (auto* err = std::get_if<Error>(&got))
    throw FatalStop{Error(Disposition::Retry, std::string("cannot read where the consumer group's partitions start: ") +
                                                  err->what())};
  const auto& group = std::get<kafka::GroupOffsetMap>(got);
  for (const auto& tp : tps) {
    auto local = committed_.find(tp);
    auto g = group.find(tp);
    if (g == group.end()) {
      // Never committed to this group (or its offsets expired): this
      // instance's own record is all there is; else auto.offset.reset.
      if (local != committed_.end()) out[tp] = local->second;
      continue;
    }
    const auto m = state::decode_group_meta(g->second.metadata);
    switch (m.kind) {
      case state::GroupMeta::Kind::Committed: out[tp] = g->second.offset; break;
      case state::GroupMeta::Kind::Legacy:
        // Written by a single-instance cdc2doris before this protocol: its
        // advisory commit may trail its own record by an epoch.
        out[tp] = local != committed_.end() ? std::max(local->second, g->second.offset) : g->second.offset;
        break;
      case state::GroupMeta::Kind::Pending:
        if (resolve_pending(m) == PendingFate::Committed) {
          out[tp] = m.end_offset;
          // Recorded in the group as soon as the partition is ours, so the
          // next owner does not resolve it again.
          group_offsets_pending_[tp] = {m.end_offset, state::encode_committed(m.epoch, m.label_prefix)};
        } else {
          out[tp] = g->second.offset;
          // Written at once: the epoch's owner, if it comes back (a zombie)
          // and still means to replay, finds the group moved past it.
          group_offsets_pending_[tp] = {g->second.offset, state::encode_committed(last_committed_epoch_,
                                                                                  cfg_.label_prefix)};
        }
        break;
    }
  }
  return out;
}

}  // namespace cdc2doris::pipeline
