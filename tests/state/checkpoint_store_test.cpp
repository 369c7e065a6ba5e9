// Semantics every CheckpointStore must have; run against the RocksDB store and
// the in-memory fake so the fake stays faithful.
#include <catch2/catch.hpp>

#include "tests/state/store_fixtures.hpp"

using namespace cdc2doris::state;
using namespace cdc2doris::state::testing;
using Kind = StateError::Kind;

namespace {
Kind kind_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const StateError& e) {
    return e.kind();
  }
  FAIL("expected a StateError");
  return Kind::Io;
}
}  // namespace

TEMPLATE_TEST_CASE("empty store has nothing", "[state]", RocksFixture, MemoryFixture) {
  TestType f;
  CHECK_FALSE(f.store().latest());
  CHECK_FALSE(f.store().get(1));
  CHECK(f.store().list().empty());
  CHECK(f.store().committed_offsets().empty());
  CHECK(f.store().label_prefixes().empty());
  CHECK(f.store().table_epochs().empty());
}

TEMPLATE_TEST_CASE("put_epoch round-trips the whole record, sorted", "[state]", RocksFixture, MemoryFixture) {
  TestType f;
  EpochRecord r = make_epoch(7, {"zeta", "alpha"},
                             {{"t2", 3, 10, 20}, {"t1", 0, 0, 5}, {"t1", 12, 40, 40}});
  r.txns[0].db = "other";
  f.store().put_epoch(r);
  f.reopen();
  auto got = f.store().get(7);
  REQUIRE(got);
  CHECK(got->epoch == 7);
  CHECK(got->label_prefix == "pfx");
  CHECK(got->state == EpochState::Precommitted);
  CHECK(got->created_unix_ms == r.created_unix_ms);
  REQUIRE(got->txns.size() == 2);
  CHECK(got->txns[0].db == "db");
  CHECK(got->txns[0].table == "alpha");
  CHECK(got->txns[1] == r.txns[0]);
  REQUIRE(got->partitions.size() == 3);
  CHECK(got->partitions[0] == PartitionRange{"t1", 0, 0, 5});
  CHECK(got->partitions[1] == PartitionRange{"t1", 12, 40, 40});
  CHECK(got->partitions[2] == PartitionRange{"t2", 3, 10, 20});
  CHECK(f.store().latest() == got);
}

TEMPLATE_TEST_CASE("latest is the highest epoch and list is ascending", "[state]", RocksFixture, MemoryFixture) {
  TestType f;
  for (uint64_t e : {3u, 1u, 300u, 256u, 2u}) f.store().put_epoch(make_epoch(e));
  f.reopen();
  REQUIRE(f.store().latest());
  CHECK(f.store().latest()->epoch == 300);
  std::vector<uint64_t> epochs;
  for (const auto& r : f.store().list()) epochs.push_back(r.epoch);
  CHECK(epochs == std::vector<uint64_t>{1, 2, 3, 256, 300});
}

TEMPLATE_TEST_CASE("commit advances per-partition offsets, absent partitions keep theirs", "[state]", RocksFixture,
                   MemoryFixture) {
  TestType f;
  f.store().put_epoch(make_epoch(1, {"a"}, {{"orders", 0, 0, 100}, {"orders", 1, 0, 50}}));
  CHECK(f.store().committed_offsets().empty());  // precommitted only
  f.store().set_state(1, EpochState::Committed);
  f.store().put_epoch(make_epoch(2, {"a"}, {{"orders", 0, 100, 180}}));
  f.store().set_state(2, EpochState::Committed);
  f.reopen();
  auto off = f.store().committed_offsets();
  REQUIRE(off.size() == 2);
  CHECK(off[TopicPartition{"orders", 0}] == CommittedOffset{180, 2});
  CHECK(off[TopicPartition{"orders", 1}] == CommittedOffset{50, 1});
}

TEMPLATE_TEST_CASE("a late commit of an older epoch does not move offsets back", "[state]", RocksFixture,
                   MemoryFixture) {
  TestType f;
  f.store().put_epoch(make_epoch(1, {"a"}, {{"orders", 0, 0, 100}}));
  f.store().put_epoch(make_epoch(2, {"b"}, {{"orders", 0, 100, 200}}));
  f.store().set_state(2, EpochState::Committed);
  f.store().set_state(1, EpochState::Committed);
  CHECK(f.store().committed_offsets()[TopicPartition{"orders", 0}] == CommittedOffset{200, 2});
}

TEMPLATE_TEST_CASE("put_epoch with state Committed commits offsets in the same write", "[state]", RocksFixture,
                   MemoryFixture) {
  TestType f;
  EpochRecord r = make_epoch(4, {}, {{"orders", 2, 7, 9}});
  r.state = EpochState::Committed;
  f.store().put_epoch(r);
  f.reopen();
  CHECK(f.store().committed_offsets()[TopicPartition{"orders", 2}] == CommittedOffset{9, 4});
}

TEMPLATE_TEST_CASE("state transitions are validated", "[state]", RocksFixture, MemoryFixture) {
  TestType f;
  f.store().put_epoch(make_epoch(1));
  f.store().set_state(1, EpochState::Precommitted);  // same state: no-op
  f.store().set_state(1, EpochState::Committed);
  f.store().set_state(1, EpochState::Committed);  // idempotent
  CHECK(kind_of([&] { f.store().set_state(1, EpochState::Aborted); }) == Kind::InvalidTransition);
  CHECK(kind_of([&] { f.store().set_state(1, EpochState::Precommitted); }) == Kind::InvalidTransition);
  CHECK(kind_of([&] { f.store().put_epoch(make_epoch(1)); }) == Kind::InvalidTransition);
  CHECK(kind_of([&] { f.store().set_state(99, EpochState::Committed); }) == Kind::NotFound);

  f.store().put_epoch(make_epoch(2));
  f.store().set_state(2, EpochState::Aborted);
  CHECK(kind_of([&] { f.store().set_state(2, EpochState::Committed); }) == Kind::InvalidTransition);
  f.store().put_epoch(make_epoch(2));  // an aborted epoch may be written again (replay)
  f.reopen();
  CHECK(f.store().get(2)->state == EpochState::Precommitted);
  CHECK(f.store().get(1)->state == EpochState::Committed);
}

TEST_CASE("is_transition_valid table", "[state]") {
  using S = EpochState;
  auto [from, to, ok] = GENERATE(table<S, S, bool>({
      {S::Precommitted, S::Precommitted, true},
      {S::Precommitted, S::Committed, true},
      {S::Precommitted, S::Aborted, true},
      {S::Committed, S::Committed, true},
      {S::Committed, S::Precommitted, false},
      {S::Committed, S::Aborted, false},
      {S::Aborted, S::Aborted, true},
      {S::Aborted, S::Precommitted, true},
      {S::Aborted, S::Committed, false},
  }));
  CHECK(is_transition_valid(from, to) == ok);
}

TEMPLATE_TEST_CASE("mark_txn_committed flags one table", "[state]", RocksFixture, MemoryFixture) {
  TestType f;
  f.store().put_epoch(make_epoch(5, {"a", "b", "c"}));
  f.store().mark_txn_committed(5, "db", "b");
  f.store().mark_txn_committed(5, "db", "b");  // idempotent
  CHECK(kind_of([&] { f.store().mark_txn_committed(5, "db", "zzz"); }) == Kind::NotFound);
  CHECK(kind_of([&] { f.store().mark_txn_committed(6, "db", "a"); }) == Kind::NotFound);
  f.reopen();
  auto r = f.store().get(5);
  REQUIRE(r);
  REQUIRE(r->txns.size() == 3);
  CHECK_FALSE(r->txns[0].committed);
  CHECK(r->txns[1].committed);
  CHECK(r->txns[1].table == "b");
  CHECK_FALSE(r->txns[2].committed);
  CHECK(r->state == EpochState::Precommitted);
}

TEMPLATE_TEST_CASE("a table with several loads in one epoch keeps each part and marks it alone", "[state]",
                   RocksFixture, MemoryFixture) {
  TestType f;
  EpochRecord rec = make_epoch(9, {"bb", "a"});
  rec.txns.push_back({"db", "a", "pfx_db_a_9-2", 902, false, 2});
  rec.txns.push_back({"db", "a", "pfx_db_a_9-1", 901, false, 1});
  f.store().put_epoch(rec);
  CHECK_THROWS_AS(f.store().put_epoch([&] {
    EpochRecord dup = rec;
    dup.epoch = 10;
    dup.txns.push_back({"db", "a", "other", 1, false, 1});
    return dup;
  }()), std::invalid_argument);
  f.store().mark_txn_committed(9, "db", "a", 1);
  CHECK(kind_of([&] { f.store().mark_txn_committed(9, "db", "a", 3); }) == Kind::NotFound);
  f.reopen();
  auto r = f.store().get(9);
  REQUIRE(r);
  REQUIRE(r->txns.size() == 4);
  // (db, table, part) order, whatever the key layout sorts by.
  CHECK(r->txns[0].table == "a");
  CHECK(r->txns[0].part == 0);
  CHECK_FALSE(r->txns[0].committed);
  CHECK(r->txns[1].part == 1);
  CHECK(r->txns[1].label == "pfx_db_a_9-1");
  CHECK(r->txns[1].committed);
  CHECK(r->txns[2].part == 2);
  CHECK_FALSE(r->txns[2].committed);
  CHECK(r->txns[3].table == "bb");
}

TEMPLATE_TEST_CASE("rewriting a precommitted epoch replaces its tables (replay)", "[state]", RocksFixture,
                   MemoryFixture) {
  TestType f;
  f.store().put_epoch(make_epoch(8, {"a", "b", "c"}));
  f.store().mark_txn_committed(8, "db", "a");
  EpochRecord replay = make_epoch(8, {"b"});
  replay.txns[0].txn_id = 424242;
  f.store().put_epoch(replay);
  f.reopen();
  auto r = f.store().get(8);
  REQUIRE(r);
  REQUIRE(r->txns.size() == 1);
  CHECK(r->txns[0].table == "b");
  CHECK(r->txns[0].txn_id == 424242);
}

TEMPLATE_TEST_CASE("malformed records are rejected", "[state]", RocksFixture, MemoryFixture) {
  TestType f;
  EpochRecord dup = make_epoch(1, {"a", "a"});
  CHECK_THROWS_AS(f.store().put_epoch(dup), std::invalid_argument);
  EpochRecord dup_part = make_epoch(1, {"a"}, {{"t", 0, 0, 1}, {"t", 0, 1, 2}});
  CHECK_THROWS_AS(f.store().put_epoch(dup_part), std::invalid_argument);
  EpochRecord backwards = make_epoch(1, {"a"}, {{"t", 0, 10, 9}});
  CHECK_THROWS_AS(f.store().put_epoch(backwards), std::invalid_argument);
  CHECK_FALSE(f.store().latest());
}

TEMPLATE_TEST_CASE("label prefix history and per-table highest epoch", "[state]", RocksFixture, MemoryFixture) {
  TestType f;
  f.store().put_epoch(make_epoch(1, {"a", "b"}, {}, "old"));
  f.store().set_state(1, EpochState::Committed);
  f.store().put_epoch(make_epoch(2, {"a"}, {}, "old"));
  f.store().set_state(2, EpochState::Committed);
  f.store().put_epoch(make_epoch(3, {"a", "c"}, {}, "new"));
  f.reopen();
  auto prefixes = f.store().label_prefixes();
  REQUIRE(prefixes.size() == 2);
  CHECK(prefixes[0] == LabelPrefixUse{"new", 3, 3});
  CHECK(prefixes[1] == LabelPrefixUse{"old", 1, 2});
  auto tables = f.store().table_epochs();
  REQUIRE(tables.size() == 3);
  CHECK(tables[TableKey{"db", "a"}] == 3);
  CHECK(tables[TableKey{"db", "b"}] == 1);
  CHECK(tables[TableKey{"db", "c"}] == 3);
}

TEMPLATE_TEST_CASE("retention keeps the last N epochs but never an unresolved one", "[state]", RocksFixture,
                   MemoryFixture) {
  TestType f(3);
  f.store().put_epoch(make_epoch(1));  // left Precommitted: must survive pruning
  for (uint64_t e = 2; e <= 10; ++e) {
    f.store().put_epoch(make_epoch(e));
    f.store().set_state(e, e == 4 ? EpochState::Aborted : EpochState::Committed);
  }
  f.reopen();
  std::vector<uint64_t> epochs;
  for (const auto& r : f.store().list()) epochs.push_back(r.epoch);
  CHECK(epochs == std::vector<uint64_t>{1, 8, 9, 10});
  // Pruning drops epochs, not what they taught us.
  CHECK(f.store().table_epochs()[TableKey{"db", "a"}] == 10);
  CHECK(f.store().label_prefixes().size() == 1);
  CHECK(f.store().committed_offsets()[TopicPartition{"orders", 0}].epoch == 10);
  CHECK(f.store().get(1)->txns.size() == 2);
}

TEMPLATE_TEST_CASE("reset forgets everything and the store stays usable", "[state]", RocksFixture, MemoryFixture) {
  TestType f;
  f.store().put_epoch(make_epoch(1));
  f.store().set_state(1, EpochState::Committed);
  f.store().reset();
  f.reopen();
  CHECK_FALSE(f.store().latest());
  CHECK(f.store().committed_offsets().empty());
  CHECK(f.store().label_prefixes().empty());
  CHECK(f.store().table_epochs().empty());
  f.store().put_epoch(make_epoch(1));
  CHECK(f.store().latest()->epoch == 1);
}

TEST_CASE("memory store injects write failures without side effects", "[state]") {
  MemoryCheckpointStore s;
  s.put_epoch(make_epoch(1));
  s.fail_next_writes(2);
  CHECK_THROWS_AS(s.set_state(1, EpochState::Committed), StateError);
  CHECK_THROWS_AS(s.put_epoch(make_epoch(2)), StateError);
  CHECK(s.get(1)->state == EpochState::Precommitted);
  CHECK_FALSE(s.get(2));
  s.set_state(1, EpochState::Committed);
  CHECK(s.get(1)->state == EpochState::Committed);
  CHECK(s.write_count() == 2);
}

TEMPLATE_TEST_CASE("DDL records round-trip, one per table, the newest replacing the older", "[state][ddl]", RocksFixture,
                   MemoryFixture) {
  TestType f;
  CHECK(f.store().ddl_records().empty());
  DdlRecord r;
  r.db = "db";
  r.table = "orders";
  r.version = 1;
  r.epoch = 7;
  r.created_unix_ms = 1'700'000'000'000;
  r.steps.push_back({0, "note", "VARCHAR(200)", "ALTER TABLE `db`.`orders` ADD COLUMN `note` VARCHAR(200) NULL"});
  r.steps.push_back({2, "a", "b", "ALTER TABLE `db`.`orders` RENAME COLUMN `a` `b`"});
  f.store().put_ddl(r);
  DdlRecord other = r;
  other.table = "items";
  other.steps.clear();
  other.state = DdlState::Refused;
  other.error = "errCode = 2, detailMessage = Can not drop key column in Unique data model table";
  f.store().put_ddl(other);
  f.reopen();
  auto all = f.store().ddl_records();
  REQUIRE(all.size() == 2);
  CHECK(all[0] == other);
  CHECK(all[1] == r);
  r.state = DdlState::Done;
  r.version = 2;
  f.store().put_ddl(r);
  f.reopen();
  all = f.store().ddl_records();
  REQUIRE(all.size() == 2);
  CHECK(all[1] == r);
  f.store().reset();
  CHECK(f.store().ddl_records().empty());
}

TEMPLATE_TEST_CASE("DDL records keep the newest truncate (source position and Kafka record)", "[state][ddl][truncate]",
                   RocksFixture, MemoryFixture) {
  TestType f;
  DdlRecord r;
  r.db = "db";
  r.table = "orders";
  r.epoch = 3;
  r.steps.push_back({5, "", "pg.db.orders[2]@41", "TRUNCATE TABLE `db`.`orders`"});
  r.truncate_seq = 123456789012345;
  r.truncate_at = "pg.db.orders[2]@41";
  f.store().put_ddl(r);
  DdlRecord no_seq = r;
  no_seq.table = "items";
  no_seq.truncate_seq.reset();
  no_seq.truncate_at = "t[0]@0";
  f.store().put_ddl(no_seq);
  f.reopen();
  auto all = f.store().ddl_records();
  REQUIRE(all.size() == 2);
  CHECK(all[0] == no_seq);
  CHECK(all[1] == r);
}
