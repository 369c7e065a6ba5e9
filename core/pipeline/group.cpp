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
// Re-probes of a label another member's probe holds for a moment (resolve_pending).
// A probe holds a label for two round trips; these waits add up to 1.5 s.
constexpr int kProbeSettleAttempts = 5;
constexpr auto kProbeSettleStep = std::chrono::milliseconds(100);

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
    return (m.kind == state::GroupMeta::Kind::Pending || m.kind == state::GroupMeta::Kind::Reference) &&
           m.label_prefix == prefix && m.epoch == epoch;
  });
}

// The commit point's OffsetCommit (issue 31): only the partitions with
// records in the epoch, the table list once (on the first of them, the
// anchor), a reference to it on the others. Idle partitions keep what the
// group holds (their previous epoch's end, or an older pending epoch their
// next owner resolves as before). So the request grows with the active
// partitions by a few dozen bytes each, never by the table count: 500
// partitions and 200 tables were ~1.2 MB when every partition carried the
// list, more than the broker's message.max.bytes (1 MiB) for
// __consumer_offsets.
kafka::GroupOffsetMap commit_point_offsets(const state::EpochRecord& rec) {
  const auto tables = epoch_tables(rec);
  std::vector<const state::PartitionRange*> active;
  for (const auto& p : rec.partitions)
    if (p.end_offset > p.start_offset) active.push_back(&p);
  if (active.empty())
    for (const auto& p : rec.partitions) active.push_back(&p);
  kafka::GroupOffsetMap offsets;
  if (active.empty()) return offsets;
  const auto* anchor = active.front();
  const state::EpochTable witness = tables.empty() ? state::EpochTable{"", "", 1, {}} : tables.front();
  for (const auto* p : active)
    offsets[{p->topic, p->partition}] = {
        p->start_offset,
        p == anchor ? state::encode_pending(rec.epoch, p->end_offset, rec.label_prefix, tables, rec.created_unix_ms)
                    : state::encode_reference(rec.epoch, p->end_offset, rec.label_prefix, anchor->topic,
                                              anchor->partition, witness, rec.created_unix_ms)};
  return offsets;
}

}  // namespace

RetryPolicy Pipeline::Impl::group_retry() const {
  return RetryPolicy{backoff_, 0, kGroupRetryFor, Disposition::Fail};
}

std::variant<kafka::GroupOffsetMap, Error> Pipeline::Impl::read_group(const std::vector<TopicPartition>& tps) {
  return retry_blocking(group_retry(), retry_hooks([&](const Error& e, int) {
                          log_->warn("reading the consumer group's offsets failed, will retry: {}", e.what());
                        }),
                        [&](int) { return deps_.source.committed_group(tps, kGroupTimeout); });
}

Event Pipeline::Impl::commit_group_point(const state::EpochRecord& rec) {
  if (rec.partitions.empty()) return Event::GroupCommitted;
  const kafka::GroupOffsetMap offsets = commit_point_offsets(rec);
  kafka::CommitResult r;
  // Retried while the commit fails, not when it is fenced; until the stop's
  // deadline, not the stop request (the epoch is past its pre-commits).
  retry_blocking(group_retry(),
                 retry_hooks({}, [this] { return stop_deadline_passed(); }),
                 [&](int) -> std::optional<Error> {
                   r = deps_.source.commit_group(offsets);
                   if (r.status != kafka::CommitStatus::Failed) return std::nullopt;
                   if (r.error && r.error->disposition() == Disposition::Fatal) return r.error;
                   log_->warn("epoch {}: committing the pending epoch to the consumer group failed, will retry: {}",
                              rec.epoch, r.error ? r.error->what() : "?");
                   return r.error ? *r.error : Error(Disposition::Retry, "?");
                 });
  if (r.status == kafka::CommitStatus::Committed) {
    CDC2DORIS_CRASH_POINT("after_group_commit");
    return Event::GroupCommitted;
  }
  {
    const std::string why = r.error ? r.error->what() : "?";
    if (r.status == kafka::CommitStatus::Fenced)
      log_->warn("epoch {}: the consumer group refused this member's generation: {}", rec.epoch, why);
    else if (r.error && r.error->disposition() == Disposition::Fatal) {
      // Refused for its size (kafka_source.cpp): not a fence, and retrying
      // cannot help. Per-partition refusals may have let others through, so
      // the record stays PRECOMMITTED and the next start asks the group.
      failure_ = Error(Disposition::Fatal,
                       "epoch " + std::to_string(rec.epoch) + ": the consumer group refused the commit point (" + why +
                           "); raise the broker's offset.metadata.max.bytes / message.max.bytes, or use shorter "
                           "label prefixes and table names; the record stays PRECOMMITTED and the next start asks "
                           "the group whether it passed");
      open_.loads.clear();
      return Event::LoadFailedFatal;
    }
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
  fenced_wait_until_ = Clock::now() + kFencedWaitFor;
  rebalanced_since_fence_ = false;
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
    if (!r) {
      auto& err = r.error();
      if (err.kind() == doris::ErrorKind::AlreadyCommitted) committed_elsewhere = true;
      else log_->warn("epoch {}: aborting txn {} (label {}) failed: {}", rec.epoch, t.txn_id, t.label, err.what());
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
    if (!probed) {
      auto& err = probed.error();
      if (err.kind() == doris::ErrorKind::UnknownTable) continue;
      throw FatalStop{err};
    }
    if (probed->state == doris::LabelState::Finished) return true;
  }
  return false;
}

// A pending epoch's fate when it is already known: resolved before, or this
// instance's own epoch whose record says.
std::optional<Pipeline::Impl::PendingFate> Pipeline::Impl::known_fate(const state::GroupMeta& m) {
  const std::pair<std::string, uint64_t> key{m.label_prefix, m.epoch};
  if (auto it = resolved_.find(key); it != resolved_.end()) return it->second;
  if (m.label_prefix == cfg_.label_prefix) {
    if (auto rec = deps_.store.get(m.epoch)) {
      if (rec->state == state::EpochState::Committed) return resolved_[key] = PendingFate::Committed;
      if (rec->state == state::EpochState::Aborted) return resolved_[key] = PendingFate::Aborted;
    }
  }
  return std::nullopt;
}

Pipeline::Impl::ForgetWindow Pipeline::Impl::forget_window(int64_t floor_ms) const {
  if (floor_ms <= 0) return ForgetWindow::Expired;  // an older daemon's metadata: no floor
  const int64_t now = unix_ms();
  if (now < floor_ms + cfg_.precommit_timeout_ms - cfg_.clock_skew_allowance_ms) return ForgetWindow::Young;
  if (now < floor_ms + cfg_.precommit_timeout_ms + cfg_.clock_skew_allowance_ms) return ForgetWindow::Unsure;
  return ForgetWindow::Expired;
}

std::optional<bool> Pipeline::Impl::unproven_verdict(const std::string& prefix, uint64_t epoch) const {
  if (cfg_.unproven_epoch == 0 || epoch != cfg_.unproven_epoch) return std::nullopt;
  if ((cfg_.unproven_epoch_prefix.empty() ? cfg_.label_prefix : cfg_.unproven_epoch_prefix) != prefix)
    return std::nullopt;
  return cfg_.unproven_epoch_committed;
}

Pipeline::Impl::PendingFate Pipeline::Impl::resolve_pending(const state::GroupMeta& m) {
  const std::pair<std::string, uint64_t> key{m.label_prefix, m.epoch};
  if (auto fate = known_fate(m)) return *fate;
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
    auto probed = retry_blocking(resolve_retry(), retry_hooks(), [&](int) { return deps_.doris.probe_label(spec); });
    if (probed) return *probed;
    const auto& err = probed.error();
    if (err.kind() == doris::ErrorKind::UnknownTable) return std::nullopt;  // a dropped table holds nothing
    throw FatalStop{err};
  };
  // Another member resolving the same epoch probes the same labels, and a
  // probe of a free label holds it for a moment under a txn of its own
  // (Core::probe begins and aborts one): a label seen running is asked
  // again after a short wait before it counts as a running load.
  // `own`: the txn committed under the label; another pre-committed txn
  // there is such a probe, too.
  auto settled = [&](const Target& t, const std::string& label, std::optional<doris::LabelState> ls,
                     std::optional<int64_t> own = std::nullopt) {
    auto passing = [&] {
      return ls && (ls->state == doris::LabelState::Running ||
                    (own && ls->state == doris::LabelState::Precommitted && ls->txn_id != own));
    };
    for (int attempt = 0; passing() && attempt < kProbeSettleAttempts; ++attempt) {
      std::this_thread::sleep_for(kProbeSettleStep * (attempt + 1));
      ls = probe(t, label);
    }
    return ls;
  };
  if (m.tables_listed) {
    // In commit order: the commits below go one after the other in it.
    for (const auto& t : m.tables)
      for (uint32_t i = 0; i < t.parts; ++i) {
        const uint32_t part = t.order.empty() ? i : t.order[i];
        const std::string label = doris::make_label(m.label_prefix, t.db, t.table, m.epoch, part);
        if (auto ls = settled({t.db, t.table}, label, probe({t.db, t.table}, label)))
          probes.push_back({{t.db, t.table}, label, *ls});
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
  std::vector<const Probe*> lost;
  std::vector<std::string> running;
  for (const auto& p : probes) {
    if (p.state.state == doris::LabelState::Finished) ++finished;
    else if (p.state.state == doris::LabelState::Precommitted) ++precommitted;
    else if (p.state.state == doris::LabelState::Running) running.push_back(p.label);
    else if (m.tables_listed) lost.push_back(&p);  // aborted, or committed and forgotten
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
  // Every label of the epoch was pre-committed before its commit point. A
  // label Doris no longer knows within the pre-commit timeout cannot have
  // expired: it was committed, and Doris forgot it (label_num_threshold).
  const ForgetWindow window = forget_window(m.precommit_floor_ms);
  if (!lost.empty() && window == ForgetWindow::Young) {
    log_->info("{}: label {} (and {} more) is no longer known to Doris, {} s after the epoch's pre-commits (less "
               "than the pre-commit timeout): committed, and forgotten by Doris",
               name, lost.front()->label, lost.size() - 1, (unix_ms() - m.precommit_floor_ms) / 1000);
    finished += lost.size();
    lost.clear();
  }
  if (!lost.empty() && window == ForgetWindow::Unsure)
    throw FatalStop{Error(Disposition::Retry,
                          name + " is pending in the consumer group and label " + lost.front()->label +
                              " is no longer known to Doris right at its pre-commit timeout: committed and "
                              "forgotten, or expired, cannot be told yet; decided again at the next start")};
  if (!lost.empty()) {
    if (auto verdict = unproven_verdict(m.label_prefix, m.epoch)) {
      log_->warn("{}: {} label(s) unknown to Doris; the operator set delivery.unproven_epoch to '{}'", name,
                 lost.size(), *verdict ? "committed" : "replay");
      if (*verdict) {
        finished += lost.size();
        lost.clear();
      }
    } else {
      // Re-reading the range loads the rows of a lost label again: the same
      // state for a UNIQUE KEY table, twice in any other if it had committed.
      std::vector<std::string> unsafe;
      for (const auto* p : lost) {
        const auto unique = unique_key(p->target);
        if (!unique)
          throw FatalStop{Error(Disposition::Retry, name + ": cannot read the key type of " + p->target.name())};
        if (!*unique) unsafe.push_back(p->label);
      }
      if (!unsafe.empty())
        throw FatalStop{Error(
            Disposition::Fatal,
            name + " is pending in the consumer group and Doris no longer knows label " + unsafe.front() + " (and " +
                std::to_string(unsafe.size() - 1) +
                " more of tables that are not UNIQUE KEY), more than the pre-commit timeout after the epoch's "
                "pre-commits: committed and then forgotten, or expired, cannot be proven, and re-reading the range "
                "could load its rows twice. Start the instance that wrote it (its state knows), or look for the "
                "epoch's rows and set delivery.unproven_epoch: '" +
                m.label_prefix + ":" + std::to_string(m.epoch) + ":committed' if they are there or '" +
                m.label_prefix + ":" + std::to_string(m.epoch) +
                ":replay' if not, and restart (docs/operations.md, \"An epoch Doris forgot\")")};
    }
  }
  if (finished > 0 && !lost.empty())
    throw FatalStop{Error(Disposition::Retry,
                          name + " is pending in the consumer group and partly committed in Doris, but label " +
                              lost.front()->label + " (and " + std::to_string(lost.size() - 1) +
                              " more) is neither committed nor pre-committed (its pre-commit expired?): only the "
                              "instance that wrote it can replay it from its state; start it, or see "
                              "docs/operations.md")};
  if (!lost.empty() || (finished == 0 && precommitted == 0)) {
    // Nothing of it is visible: abort what is still pre-committed, re-read the range.
    for (const auto& p : probes)
      if (p.state.state == doris::LabelState::Precommitted && p.state.txn_id) {
        auto r = deps_.doris.abort(p.target.db, *p.state.txn_id);
        if (!r) throw FatalStop{r.error()};
      }
    log_->warn("{} was pending in the consumer group and nothing of it is in Doris: its range is re-read", name);
    ++deps_.metrics.pending_epochs_resolved;
    return resolved_[key] = PendingFate::Aborted;
  }
  // Past its commit point: commit what is still pre-committed.
  for (const auto& p : probes) {
    if (p.state.state != doris::LabelState::Precommitted || !p.state.txn_id) continue;
    auto r = retry_blocking(resolve_retry(), retry_hooks(),
                            [&](int) { return deps_.doris.commit(p.target.db, *p.state.txn_id); });
    if (!r) throw FatalStop{r.error()};
    if (const auto o = *r;
        o == doris::TxnOutcome::NotFoundOrAborted || o == doris::TxnOutcome::Aborted) {
      // Committed by someone else meanwhile (its owner, another resolver)
      // and forgotten since, as above, or really gone. The txn seen may
      // also have been another resolver's probe (settled above), which
      // that resolver aborted: the label was free for it, so within the
      // pre-commit timeout the epoch's own txn was committed and forgotten.
      auto again = settled(p.target, p.label, probe(p.target, p.label), p.state.txn_id);
      const bool forgotten = again && again->state == doris::LabelState::Unused && window == ForgetWindow::Young;
      if (!forgotten && (!again || again->state != doris::LabelState::Finished))
        throw FatalStop{Error(Disposition::Retry, name + ": txn " + std::to_string(*p.state.txn_id) + " (label " +
                                                      p.label + ") vanished while it was being committed")};
    }
    log_->info("{}: committed txn {} (label {}) left pre-committed by its owner", name, *p.state.txn_id, p.label);
  }
  log_->info("{} was pending in the consumer group and is committed in Doris: its partitions start after it", name);
  ++deps_.metrics.pending_epochs_resolved;
  return resolved_[key] = PendingFate::Committed;
}

Pipeline::Impl::PendingFate Pipeline::Impl::resolve_reference(const state::GroupMeta& m,
                                                              const kafka::GroupOffsetMap& known) {
  const std::pair<std::string, uint64_t> key{m.label_prefix, m.epoch};
  if (auto fate = known_fate(m)) return *fate;
  const std::string name = "epoch " + std::to_string(m.epoch) + " of label prefix '" + m.label_prefix + "'";
  const TopicPartition anchor{m.anchor_topic, m.anchor_partition};
  std::optional<kafka::GroupOffset> at;
  if (auto it = known.find(anchor); it != known.end()) {
    at = it->second;
  } else {
    auto got = read_group({anchor});
    if (auto* err = std::get_if<Error>(&got))
      throw FatalStop{Error(Disposition::Retry, name + ": cannot read its table list from the consumer group (" +
                                                    kafka::to_string(anchor) + "): " + err->what())};
    const auto& g = std::get<kafka::GroupOffsetMap>(got);
    if (auto it = g.find(anchor); it != g.end()) at = it->second;
  }
  if (at) {
    const auto am = state::decode_group_meta(at->metadata);
    if (am.kind == state::GroupMeta::Kind::Pending && am.label_prefix == m.label_prefix && am.epoch == m.epoch)
      return resolve_pending(am);
    if (am.kind == state::GroupMeta::Kind::Committed && am.label_prefix == m.label_prefix && am.epoch == m.epoch)
      return resolved_[key] = PendingFate::Committed;
  }
  // The anchor moved on, so whoever owned it resolved the epoch: every txn
  // committed, or nothing of it visible. One label tells which.
  ++deps_.metrics.pending_epochs_resolved;
  if (m.witness.table.empty()) return resolved_[key] = PendingFate::Committed;  // it loaded nothing
  const Target t{m.witness.db, m.witness.table};
  doris::LoadSpec spec;
  spec.db = t.db;
  spec.table = t.table;
  spec.label = doris::make_label(m.label_prefix, t.db, t.table, m.epoch, 0);
  spec.sequence_col = deps_.router.settings(t).sequence_col;
  auto probed = retry_blocking(resolve_retry(), retry_hooks(), [&](int) { return deps_.doris.probe_label(spec); });
  if (!probed)
    throw FatalStop{Error(Disposition::Retry, name + ": probing label " + spec.label + " failed: " + probed.error().what())};
  const doris::LabelState& ls = *probed;
  if (ls.state == doris::LabelState::Finished) {
    log_->info("{} was pending in the consumer group, its table list partition {} moved on and label {} is "
               "committed: its partitions start after it",
               name, kafka::to_string(anchor), spec.label);
    return resolved_[key] = PendingFate::Committed;
  }
  if (ls.state == doris::LabelState::Precommitted)
    throw FatalStop{Error(Disposition::Retry,
                          name + " is pending in the consumer group, the partition holding its table list (" +
                              kafka::to_string(anchor) + ") moved on, and label " + spec.label +
                              " is still pre-committed: its fate cannot be told; retried at the next start")};
  // Not known to Doris: aborted, or committed and forgotten. Within the
  // pre-commit timeout only the latter (resolve_pending).
  switch (forget_window(m.precommit_floor_ms)) {
    case ForgetWindow::Young:
      log_->info("{} was pending in the consumer group, its table list partition {} moved on and label {} is "
                 "no longer known to Doris within the pre-commit timeout: committed and forgotten; its "
                 "partitions start after it",
                 name, kafka::to_string(anchor), spec.label);
      return resolved_[key] = PendingFate::Committed;
    case ForgetWindow::Unsure:
      throw FatalStop{Error(Disposition::Retry,
                            name + ": label " + spec.label +
                                " is no longer known to Doris right at its pre-commit timeout: decided again at "
                                "the next start")};
    case ForgetWindow::Expired: break;
  }
  if (auto verdict = unproven_verdict(m.label_prefix, m.epoch)) {
    log_->warn("{}: label {} unknown to Doris; the operator set delivery.unproven_epoch to '{}'", name,
               spec.label, *verdict ? "committed" : "replay");
    return resolved_[key] = *verdict ? PendingFate::Committed : PendingFate::Aborted;
  }
  // Its resolver aborted it, or committed it and Doris forgot since:
  // the epoch's other tables are not known here, so only an operator
  // can say whether re-reading would load rows twice.
  throw FatalStop{Error(
      Disposition::Fatal,
      name + " is pending in the consumer group, the partition holding its table list (" +
          kafka::to_string(anchor) + ") moved on, and Doris no longer knows label " + spec.label +
          ", more than the pre-commit timeout after the epoch's pre-commits: whether it was committed cannot be "
          "proven. Look for the epoch's rows and set delivery.unproven_epoch: '" +
          m.label_prefix + ":" + std::to_string(m.epoch) + ":committed' if they are there or '" + m.label_prefix +
          ":" + std::to_string(m.epoch) + ":replay' if not, and restart (docs/operations.md, \"An epoch Doris "
          "forgot\")")};
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

// Before a partition starts (or a replay seeks) at an offset, the offset
// must still be in the log (issue 31). Below the log start, retention
// deleted records nobody loaded: stop with the gap named, or continue at the
// log start under kafka.on_offset_gap: skip — never in a replay, whose
// replacement loads would then commit part of the epoch. Above the high
// watermark, the offset belongs to an older incarnation of the topic (the
// group's offsets vanish with a deleted topic, and this instance's stored
// offset is then all there is): the new topic is read from its start.
// librdkafka 2.0 (Debian 12) exposes no topic ids, so a re-created topic
// that already holds more records than the old offset is not told apart.
void Pipeline::Impl::check_start_offsets(kafka::OffsetMap& starts, bool replaying,
                                         const std::set<TopicPartition>& store_only) {
  std::vector<TopicPartition> tps;
  for (const auto& [tp, off] : starts)
    if (off >= 0) tps.push_back(tp);
  if (tps.empty()) return;
  // Any failure is retried, for as long as the group reads are.
  auto got = retry_blocking(RetryPolicy{backoff_, 0, kGroupRetryFor, Disposition::Fatal},
                            retry_hooks([&](const Error& e, int) {
                              log_->warn("reading the partitions' watermarks failed, will retry: {}", e.what());
                            }),
                            [&](int) { return deps_.source.watermarks(tps, kGroupTimeout); });
  if (auto* e = std::get_if<Error>(&got))
    throw FatalStop{Error(Disposition::Retry, "cannot check that the start offsets are still in the log: " +
                                                  std::string(e->what()))};
  const auto& marks = std::get<kafka::WatermarkMap>(got);
  for (auto& [tp, off] : starts) {
    auto w = marks.find(tp);
    if (w == marks.end() || off < 0) continue;
    const auto [low, high] = w->second;
    if (off < low) {
      if (replaying || !cfg_.skip_offset_gaps) {
        std::string msg = kafka::offset_gap_message(tp, off, low);
        if (replaying)
          msg += ". This is a replay of a recorded epoch whose range is gone: its lost tables cannot be "
                 "reloaded exactly; kafka.on_offset_gap does not apply";
        throw FatalStop{Error(Disposition::Fatal, msg)};
      }
      log_->warn("{}: the next offset {} was deleted (log start {}): continuing at the log start "
                 "(kafka.on_offset_gap: skip); records {}..{} are not loaded",
                 kafka::to_string(tp), off, low, off, low - 1);
      ++deps_.metrics.offset_gaps_skipped;
      off = low;
    } else if (off > high) {
      if (replaying)
        throw FatalStop{Error(Disposition::Fatal,
                              "Kafka: " + kafka::to_string(tp) + ": replaying from offset " + std::to_string(off) +
                                  ", above the partition's high watermark " + std::to_string(high) +
                                  ": the topic was deleted and re-created; the recorded epoch cannot be replayed")};
      log_->warn("{}: the offset to start at, {}, is above the high watermark {}: the topic was deleted and "
                 "re-created (or truncated); reading it from its log start {}",
                 kafka::to_string(tp), off, high, low);
      ++deps_.metrics.topics_recreated;
      off = low;
    } else if (store_only.count(tp) && off > low) {  // at the log start nothing can be skipped
      using L = PipelineConfig::LostGroupOffsets;
      if (cfg_.on_group_offsets_lost == L::Fail)
        throw FatalStop{Error(
            Disposition::Fatal,
            "Kafka: " + kafka::to_string(tp) + ": the consumer group has no offset for this partition, but this "
                "instance loaded it up to offset " + std::to_string(off) + " (log start " + std::to_string(low) +
                ", high watermark " + std::to_string(high) +
                "). Either the topic was deleted and re-created (its new records from offset " +
                std::to_string(low) + " on were never loaded: set kafka.on_group_offsets_lost: beginning), or the "
                "group's offsets expired (offsets.retention.minutes) or kafka.group_id changed (set "
                "kafka.on_group_offsets_lost: stored to continue at offset " + std::to_string(off) +
                "); remove the setting after the restart (docs/kafka-source.md, \"Offset gaps\")")};
      if (cfg_.on_group_offsets_lost == L::Beginning) {
        log_->warn("{}: the consumer group has no offset for it; reading it from its log start {} instead of "
                   "this instance's offset {} (kafka.on_group_offsets_lost: beginning)",
                   kafka::to_string(tp), low, off);
        ++deps_.metrics.topics_recreated;
        off = low;
      } else {
        log_->warn("{}: the consumer group has no offset for it; starting at this instance's offset {} "
                   "(kafka.on_group_offsets_lost: stored)",
                   kafka::to_string(tp), off);
      }
    }
  }
}

kafka::OffsetMap Pipeline::Impl::group_starts(const std::vector<TopicPartition>& tps) {
  kafka::OffsetMap out;
  if (tps.empty()) return out;
  auto got = read_group(tps);
  if (auto* err = std::get_if<Error>(&got))
    throw FatalStop{Error(Disposition::Retry, std::string("cannot read where the consumer group's partitions start: ") +
                                                  err->what())};
  const auto& group = std::get<kafka::GroupOffsetMap>(got);
  std::set<TopicPartition> store_only;
  for (const auto& tp : tps) {
    auto local = committed_.find(tp);
    auto g = group.find(tp);
    if (g == group.end()) {
      // Never committed to this group, its offsets expired, or the topic
      // was re-created: this instance's own record is all there is (checked
      // below); else auto.offset.reset.
      if (local != committed_.end()) {
        out[tp] = local->second;
        store_only.insert(tp);
      }
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
      case state::GroupMeta::Kind::Reference:
        if ((m.kind == state::GroupMeta::Kind::Pending ? resolve_pending(m) : resolve_reference(m, group)) ==
            PendingFate::Committed) {
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
  check_start_offsets(out, /*replaying=*/false, store_only);
  return out;
}

}  // namespace cdc2doris::pipeline
