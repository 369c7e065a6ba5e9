// The multi-instance protocol against the fakes (docs/architecture.md,
// "Multi-instance protocol"): where an assigned partition starts, the fenced
// commit point, and pending epochs another member left in the group.
// Several "instances" are pipelines with their own store and label prefix
// over the same fake Kafka group and fake Doris, run one after the other.
#include "tests/pipeline/unit_env.hpp"

#include "state/group_meta.hpp"

namespace {

pipeline::PipelineConfig instance(const Env& env, const std::string& prefix) {
  auto c = env.config();
  c.label_prefix = prefix;
  return c;
}

// Leaves `prefix`'s latest epoch PRECOMMITTED in `store` and pending in the
// group: its commits fail until the shutdown deadline passes.
state::EpochRecord leave_pending(Env& env, state::CheckpointStore& store, const std::string& prefix) {
  auto cfg = instance(env, prefix);
  cfg.shutdown_deadline = 100ms;
  Runner run(env, cfg, false, &store);
  env.doris.fail_all_commits(derr(doris::ErrorKind::ServerError, Disposition::Retry, "FE unavailable"));
  env.produce(80);
  REQUIRE(run.wait_for([&] {
    auto l = store.latest();
    return l && l->state == state::EpochState::Precommitted;
  }));
  auto r = run.stop();
  REQUIRE(r.error);
  env.doris.heal();
  auto rec = *store.latest();
  REQUIRE(rec.state == state::EpochState::Precommitted);
  return rec;
}

// `rec` is COMMITTED and the group holds its end offsets, except on `tp`.
bool committed_except(Env& env, const state::EpochRecord& rec, const kafka::TopicPartition& tp) {
  auto g = env.source.group_committed();
  for (const auto& p : rec.partitions)
    if (kafka::TopicPartition{p.topic, p.partition} != tp && g[{p.topic, p.partition}] < p.end_offset) return false;
  return env.store.get(rec.epoch)->state == state::EpochState::Committed;
}

}  // namespace

TEST_CASE("group: a partition starts where the group is, not where this instance's own state was",
          "[pipeline][unit][group]") {
  Env env;
  state::MemoryCheckpointStore store_b;
  env.produce(100);
  {
    Runner a(env, instance(env, "a"));
    REQUIRE(a.wait_for([&] { return env.caught_up(); }));
    CHECK_FALSE(a.stop().error);
  }
  // Meanwhile another member owned the partitions and loaded more.
  env.produce(100);
  {
    Runner b(env, instance(env, "b"), false, &store_b);
    REQUIRE(b.wait_for([&] { return env.source.group_committed() == env.end_offsets(); }));
    CHECK_FALSE(b.stop().error);
  }
  env.produce(100);
  Runner a(env, instance(env, "a"));
  REQUIRE(a.wait_for([&] { return env.caught_up(); }));
  CHECK_FALSE(a.stop().error);
  check_doris_matches(env, env.end_offsets());
  check_txns_clean(env);
}

TEST_CASE("group: a member fenced at the commit point aborts its epoch and re-reads it under a new number",
          "[pipeline][unit][group]") {
  Env env;
  env.produce(100);
  Runner run(env, env.config());
  REQUIRE(run.wait_for([&] { return env.caught_up(); }));
  const uint64_t before = env.store.latest()->epoch;
  env.source.fence_next_group_commits(1);
  env.produce(100);
  REQUIRE(run.wait_for([&] { return env.caught_up() && run.metrics.epochs_fenced == 1; }));
  CHECK_FALSE(run.stop().error);
  // The fenced epoch is ABORTED, its number never reused.
  bool aborted = false;
  for (const auto& rec : env.store.list())
    if (rec.epoch > before && rec.state == state::EpochState::Aborted) aborted = true;
  CHECK(aborted);
  check_doris_matches(env, env.end_offsets());
  check_txns_clean(env);
}

TEST_CASE("group: a fenced epoch another member committed meanwhile is not re-read", "[pipeline][unit][group]") {
  Env env;
  env.produce(100);
  Runner run(env, env.config());
  REQUIRE(run.wait_for([&] { return env.caught_up(); }));
  // An earlier attempt of the commit point reached the group after all, and
  // a new owner resolved the epoch (committed its txns and moved the group
  // on) before this member heard "fenced" and read the group back.
  env.source.fence_next_group_commits(1, [&] {
    for (const auto& t : env.doris.txns())
      if (t.state == TxnState::Precommitted) REQUIRE(std::holds_alternative<doris::TxnOutcome>(env.doris.commit("shop", t.id)));
  });
  env.produce(100);
  REQUIRE(run.wait_for([&] { return run.metrics.epochs_fenced == 1; }));
  // (The new owner moved the group past the epoch; the next epoch does it here.)
  env.produce(50);
  REQUIRE(run.wait_for([&] { return env.caught_up(); }));
  CHECK_FALSE(run.stop().error);
  check_doris_matches(env, env.end_offsets());
  check_txns_clean(env);
}

TEST_CASE("group: a pending epoch another member left pre-committed is committed by the next owner",
          "[pipeline][unit][group]") {
  Env env;
  state::MemoryCheckpointStore store_b;
  env.produce(60);
  const auto rec = leave_pending(env, store_b, "b");
  for (const auto& t : rec.txns) REQUIRE(env.doris.txn_by_label("shop", t.label)->state == TxnState::Precommitted);
  // Its group metadata names the epoch.
  bool pending = false;
  for (const auto& [tp, go] : env.source.group_committed_with_metadata())
    if (state::decode_group_meta(go.metadata).kind == state::GroupMeta::Kind::Pending) pending = true;
  REQUIRE(pending);

  env.produce(50);
  Runner a(env, instance(env, "a"));
  REQUIRE(a.wait_for([&] { return env.caught_up(); }));
  CHECK_FALSE(a.stop().error);
  CHECK(a.metrics.pending_epochs_resolved >= 1);
  for (const auto& t : rec.txns) CHECK(env.doris.txn_by_label("shop", t.label)->state == TxnState::Committed);
  check_doris_matches(env, env.end_offsets());
  check_txns_clean(env);
}

TEST_CASE("group: a pending epoch whose txns Doris aborted is re-read by the next owner", "[pipeline][unit][group]") {
  Env env;
  state::MemoryCheckpointStore store_b;
  env.produce(60);
  const auto rec = leave_pending(env, store_b, "b");
  for (const auto& t : rec.txns) env.doris.expire_txn(t.txn_id);
  env.produce(50);
  Runner a(env, instance(env, "a"));
  REQUIRE(a.wait_for([&] { return env.caught_up(); }));
  CHECK_FALSE(a.stop().error);
  CHECK(a.metrics.pending_epochs_resolved >= 1);
  check_doris_matches(env, env.end_offsets());
  check_txns_clean(env);
}

TEST_CASE("group: a restart whose recorded epoch never reached the group aborts it instead of rolling it forward",
          "[pipeline][unit][group]") {
  Env env;
  env.produce(60);
  const auto rec = leave_pending(env, env.store, "t");
  // As if the crash came between the record and the group commit: the
  // group still names the epoch before, and another member re-read the range.
  for (const auto& p : rec.partitions)
    env.source.set_group_offset({p.topic, p.partition}, {p.start_offset, state::encode_committed(rec.epoch - 1, "t")});
  Runner run(env, env.config());
  REQUIRE(run.wait_for([&] { return env.caught_up(); }));
  CHECK_FALSE(run.stop().error);
  CHECK(env.store.get(rec.epoch)->state == state::EpochState::Aborted);
  for (const auto& t : rec.txns) CHECK(env.doris.txn_by_label("shop", t.label)->state == TxnState::Aborted);
  check_doris_matches(env, env.end_offsets());
  check_txns_clean(env);
}

TEST_CASE("group: an epoch that commits after its partition was lost does not move the group's offset back",
          "[pipeline][unit][group]") {
  Env env;
  env.produce(60);
  Runner run(env, env.config());
  REQUIRE(run.wait_for([&] { return env.caught_up(); }));
  // The next epoch passes its commit point, then Doris stops answering commits.
  env.doris.fail_all_commits(derr(doris::ErrorKind::ServerError, Disposition::Retry, "FE unavailable"));
  env.produce(60);
  REQUIRE(run.wait_for([&] {
    auto l = env.store.latest();
    return l && l->state == state::EpochState::Precommitted;
  }));
  const auto rec = *env.store.latest();
  REQUIRE_FALSE(rec.partitions.empty());
  const auto& lost = rec.partitions.front();
  const kafka::TopicPartition tp{lost.topic, lost.partition};
  // Meanwhile the partition is lost (this member was a zombie); its new owner
  // committed the pending epoch and loaded further.
  env.source.schedule_revoke({tp}, /*lost=*/true, 0, /*reassign_after_polls=*/-1);
  REQUIRE(run.wait_for([&] { return env.source.stats().revokes >= 1; }));
  const int64_t moved_on = lost.end_offset + 10;
  env.source.set_group_offset(tp, {moved_on, state::encode_committed(7, "other")});
  env.doris.heal();
  // The epoch commits and its other partitions get their end offsets.
  REQUIRE(run.wait_for([&] { return committed_except(env, rec, tp); }));
  CHECK(env.source.group_committed()[tp] == moved_on);
  CHECK_FALSE(run.stop().error);
}

TEST_CASE("group: an epoch rolled forward at startup leaves a partition the group moved past alone",
          "[pipeline][unit][group]") {
  Env env;
  env.produce(60);
  const auto rec = leave_pending(env, env.store, "t");
  // While this instance was down, another member took one of the epoch's
  // partitions, committed the epoch and loaded further.
  const auto& taken = rec.partitions.front();
  const kafka::TopicPartition tp{taken.topic, taken.partition};
  const int64_t moved_on = taken.end_offset + 5;
  env.source.set_group_offset(tp, {moved_on, state::encode_committed(7, "other")});
  const size_t commits_before = env.source.group_commits(tp).size();
  Runner run(env, instance(env, "t"));
  // The restart rolls the epoch forward (the group still names it on the
  // other partitions), and those get its end offsets.
  REQUIRE(run.wait_for([&] { return committed_except(env, rec, tp); }));
  CHECK_FALSE(run.stop().error);
  const auto commits = env.source.group_commits(tp);
  for (size_t i = commits_before; i < commits.size(); ++i) CHECK(commits[i] >= moved_on);
  CHECK(env.source.group_committed()[tp] >= moved_on);
}

// Issue 31 (7): a replay waited for every partition of its range to be
// assigned to it. When the group had given one to another member (a join
// during the replay, a restart into a bigger group), it waited forever, and
// every restart re-entered the wait. The replay now reads its range on a
// handle of its own, whoever owns the partitions.
TEST_CASE("group: a replay reads its whole range even when the group gave one of its partitions to another member",
          "[pipeline][unit][group]") {
  Env env;
  env.produce(60);
  const auto rec = leave_pending(env, env.store, "t");
  // Doris aborted the pre-committed txns (their pre-commit timed out) while the member was down.
  for (const auto& t : rec.txns) env.doris.expire_txn(t.txn_id);
  // Another member holds one of the epoch's partitions now: revoked at the
  // first poll and never given back.
  REQUIRE_FALSE(rec.partitions.empty());
  const TopicPartition other{rec.partitions.front().topic, rec.partitions.front().partition};
  env.source.schedule_revoke({other}, /*lost=*/false, /*after_polls=*/0, /*reassign_after_polls=*/-1);
  Runner run(env, instance(env, "t"));
  auto upto = env.end_offsets();
  upto[other] = rec.partitions.front().end_offset;
  REQUIRE(run.wait_for([&] {
    auto group = env.source.group_committed();
    for (const auto& [tp, end] : upto)
      if (tp != other && group[tp] != end) return false;
    return env.store.get(rec.epoch)->state == state::EpochState::Committed;
  }));
  CHECK_FALSE(run.stop().error);
  CHECK(run.metrics.epochs_replayed == 1);
  CHECK(env.source.range_reads() > 0);
  check_doris_matches(env, upto);
  check_txns_clean(env);
}

// Issue 31 (6, 7): a member paused past its session (a zombie) found its
// epoch's txns lost and replayed it, although the group had moved past it
// meanwhile (a new owner re-read the range): its rows were loaded twice.
TEST_CASE("group: a member never replays an epoch the group has moved past", "[pipeline][unit][group]") {
  Env env;
  env.produce(60);
  Runner run(env, instance(env, "t"));
  REQUIRE(run.wait_for([&] { return env.caught_up(); }));
  const uint64_t before = env.store.latest()->epoch;
  env.doris.fail_all_commits(derr(doris::ErrorKind::ServerError, Disposition::Retry, "FE unavailable"));
  env.produce(80);
  REQUIRE(run.wait_for([&] {
    auto l = env.store.latest();
    return l && l->epoch > before && l->state == state::EpochState::Precommitted;
  }));
  const auto rec = *env.store.latest();
  REQUIRE_FALSE(rec.partitions.empty());
  // Meanwhile a new owner of one partition found nothing of the epoch in
  // Doris and re-read it: the group no longer names the epoch there.
  const auto& moved = rec.partitions.front();
  env.source.set_group_offset({moved.topic, moved.partition},
                              {moved.start_offset, state::encode_committed(3, "other")});
  for (const auto& t : rec.txns) env.doris.expire_txn(t.txn_id);
  env.doris.fail_all_commits(std::nullopt);
  REQUIRE(run.wait_for([&] { return env.store.get(rec.epoch)->state != state::EpochState::Precommitted; }));
  CHECK(env.store.get(rec.epoch)->state == state::EpochState::Aborted);
  CHECK_FALSE(run.stop().error);
  // None of its labels holds a committed txn: nothing of it was replayed.
  for (const auto& t : rec.txns) {
    auto d = env.doris.txn_by_label("shop", t.label);
    CHECK((!d || d->state != TxnState::Committed));
  }
}

TEST_CASE("group metadata: round trip, escaping, and the table list dropped when it would not fit",
          "[pipeline][unit][group]") {
  std::vector<state::EpochTable> tables{{"shop", "orders", 1, {}}, {"shop", "a b,c", 3, {}}, {"x:y", "t;1", 1, {}}};
  auto s = state::encode_pending(42, 1234, "pod-0", tables);
  auto m = state::decode_group_meta(s);
  CHECK(m.kind == state::GroupMeta::Kind::Pending);
  CHECK(m.epoch == 42);
  CHECK(m.end_offset == 1234);
  CHECK(m.label_prefix == "pod-0");
  CHECK(m.tables_listed);
  std::sort(tables.begin(), tables.end(),
            [](const auto& a, const auto& b) { return std::tie(a.db, a.table) < std::tie(b.db, b.table); });
  CHECK(m.tables == tables);
  CHECK(s.find("a%20b%2Cc*3") != std::string::npos);

  // A commit order other than the labels' part order (sequence mode) travels with the list.
  std::vector<state::EpochTable> seq{{"d", "seqt", 5, {0, 3, 1, 2, 4}}};
  auto so = state::encode_pending(1, 2, "p", seq);
  CHECK(so.find("seqt*5/0.3.1.2.4") != std::string::npos);
  CHECK(state::decode_group_meta(so).tables == seq);
  CHECK(state::decode_group_meta("c2d1 P 1 2 p d:t*3/0.0.1").kind == state::GroupMeta::Kind::Legacy);
  CHECK(state::decode_group_meta("c2d1 P 1 2 p d:t*3/0.1").kind == state::GroupMeta::Kind::Legacy);

  std::vector<state::EpochTable> many;
  for (int i = 0; i < 2000; ++i) many.push_back({"db", "table_" + std::to_string(i), 1, {}});
  auto big = state::encode_pending(7, 9, "p", many);
  CHECK(big.size() <= state::kMaxMetadataBytes);
  auto mb = state::decode_group_meta(big);
  CHECK(mb.kind == state::GroupMeta::Kind::Pending);
  CHECK_FALSE(mb.tables_listed);

  auto c = state::decode_group_meta(state::encode_committed(5, "p"));
  CHECK(c.kind == state::GroupMeta::Kind::Committed);
  CHECK(c.epoch == 5);
  CHECK(state::decode_group_meta("cdc2doris epoch 5").kind == state::GroupMeta::Kind::Legacy);
  CHECK(state::decode_group_meta("c2d1 P 1 2 p").kind == state::GroupMeta::Kind::Legacy);
  CHECK(state::decode_group_meta("c2d1 P x 2 p ?").kind == state::GroupMeta::Kind::Legacy);
  CHECK(state::decode_group_meta("c2d1 C 3 p%2").kind == state::GroupMeta::Kind::Legacy);
}
