// Source TRUNCATE (docs/schema-evolution.md, "TRUNCATE"): the pipeline
// against the Doris emulator through the real client, a fake Kafka and an
// in-memory checkpoint store. The rows before a truncate commit before it,
// it runs once, the rows after it load after it; the policy per table; a
// restart at each step (the states the crash points leave) converges without
// losing rows loaded after it or running it twice; and several partitions,
// ordered by the source position.
#include <catch2/catch.hpp>

#include "tests/pipeline/ddl_world.hpp"

using namespace cdc2doris;
using namespace std::chrono_literals;
using namespace cdc2doris::test::ddl;

namespace {

const char* kUnique = "CREATE TABLE t (id BIGINT NOT NULL, a INT NULL) UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1";
const char* kDuplicate =
    "CREATE TABLE t (id BIGINT NOT NULL, a INT NULL) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1";

// Schemaless Debezium PostgreSQL records of d.t, source position `lsn`.
void row(World& w, int64_t id, int a, int64_t lsn, int32_t partition = 0) {
  w.source.produce("pg.d.t", partition, "{\"id\":" + std::to_string(id) + "}",
                   plain("t", 'c', "{\"id\":" + std::to_string(id) + ",\"a\":" + std::to_string(a) + "}", lsn));
}
// Debezium's truncate event: no key, no before/after.
int64_t truncate(World& w, int64_t lsn, int32_t partition = 0) {
  return w.source.produce("pg.d.t", partition, std::nullopt,
                          R"({"before":null,"after":null,"source":{"connector":"postgresql","db":"d","schema":"public",)"
                          R"("table":"t","lsn":)" + std::to_string(lsn) + R"(},"op":"t","ts_ms":1})");
}

std::string r(int64_t id, int a) { return "{\"id\":" + std::to_string(id) + ",\"a\":" + std::to_string(a) + "}"; }

uint64_t truncates(World& w, const std::string& action) {
  auto s = w.metrics.snapshot();
  auto it = s.truncates.find("d.t|" + action);
  return it == s.truncates.end() ? 0 : it->second;
}

// A truncate record as the daemon writes it before TRUNCATE runs (after the
// epoch before it committed): what a crash at after_truncate_record leaves.
state::DdlRecord pending_truncate(int64_t offset, int64_t lsn) {
  state::DdlRecord rec;
  rec.db = "d";
  rec.table = "t";
  rec.version = 0;
  rec.epoch = 2;
  rec.state = state::DdlState::Pending;
  rec.steps.push_back({5, "", "pg.d.t[0]@" + std::to_string(offset), "TRUNCATE TABLE `d`.`t`"});
  rec.truncate_seq = lsn;
  rec.truncate_at = "pg.d.t[0]@" + std::to_string(offset);
  return rec;
}

}  // namespace

TEST_CASE("truncate (ddl): rows before it commit before it, it runs once, rows after it load after it",
          "[pipeline][ddl][truncate]") {
  World w;
  w.table(kUnique);
  w.topic("t");
  row(w, 1, 10, 100);
  row(w, 2, 20, 110);
  const int64_t at = truncate(w, 120);  // offset 2
  row(w, 3, 30, 130);
  row(w, 1, 11, 140);
  REQUIRE_FALSE(w.run(5).error);

  CHECK(w.emu.rows("d", "t") == std::vector<std::string>{r(1, 11), r(3, 30)});
  auto rec = w.ddl_record("t");
  REQUIRE(rec);
  CHECK(rec->state == state::DdlState::Done);
  CHECK(rec->version == 0);  // no schema change
  CHECK(rec->truncate_at == "pg.d.t[0]@2");
  CHECK(rec->truncate_seq == 120);
  REQUIRE(rec->steps.size() == 1);
  CHECK(rec->steps[0].statement == "TRUNCATE TABLE `d`.`t`");
  // The epochs before it end exactly at the truncate and are committed.
  for (const auto& e : w.store.list()) {
    CHECK(e.state == state::EpochState::Committed);
    for (const auto& p : e.partitions) {
      if (e.epoch < rec->epoch) CHECK(p.end_offset <= at);
      else CHECK(p.start_offset >= at);
    }
  }
  auto s = w.metrics.snapshot();
  CHECK(s.epochs_ended_early["truncate"] == 1);
  CHECK(truncates(w, "applied") == 1);
  CHECK(s.tables["d.t"].schema_version == 0);
  CHECK(w.ddl_count("t", "truncate") == 0);  // not counted as a schema change
}

TEST_CASE("truncate (ddl): the policy — the default by key model, ignore, fail naming the record, apply on DUPLICATE KEY",
          "[pipeline][ddl][truncate]") {
  SECTION("default on a DUPLICATE KEY table: ignored, the history stays") {
    World w;
    w.table(kDuplicate);
    w.topic("t");
    row(w, 1, 10, 100);
    truncate(w, 110);
    row(w, 2, 20, 120);
    REQUIRE_FALSE(w.run(3).error);
    CHECK(w.emu.rows("d", "t").size() == 2);
    CHECK(truncates(w, "ignored") == 1);
    CHECK(w.metrics.skipped(pipeline::SkipReason::Truncate) == 1);
    CHECK_FALSE(w.ddl_record("t"));
  }
  SECTION("apply configured on a DUPLICATE KEY table") {
    World w;
    w.table(kDuplicate);
    w.topic("t");
    w.set("t").truncate = pipeline::TruncatePolicy::Apply;
    row(w, 1, 10, 100);
    truncate(w, 110);
    row(w, 2, 20, 120);
    REQUIRE_FALSE(w.run(3).error);
    CHECK(w.emu.rows("d", "t") == std::vector<std::string>{r(2, 20)});
    CHECK(truncates(w, "applied") == 1);
  }
  SECTION("ignore configured on a UNIQUE KEY table") {
    World w;
    w.table(kUnique);
    w.topic("t");
    w.set("t").truncate = pipeline::TruncatePolicy::Ignore;
    row(w, 1, 10, 100);
    truncate(w, 110);
    row(w, 2, 20, 120);
    REQUIRE_FALSE(w.run(3).error);
    CHECK(w.emu.rows("d", "t") == std::vector<std::string>{r(1, 10), r(2, 20)});
    CHECK(truncates(w, "ignored") == 1);
  }
  SECTION("fail: stops naming the topic, partition, offset and table; nothing from it on is committed") {
    World w;
    w.table(kUnique);
    w.topic("t");
    w.set("t").truncate = pipeline::TruncatePolicy::Fail;
    row(w, 1, 10, 100);
    truncate(w, 110);
    row(w, 2, 20, 120);
    auto res = w.run(3);
    REQUIRE(res.error);
    CHECK(res.error->disposition() == Disposition::Fatal);
    CHECK_THAT(res.error->what(), Catch::Contains("d.t") && Catch::Contains("pg.d.t[0]@1") &&
                                      Catch::Contains("truncate policy is fail"));
    CHECK(res.error->context().topic == "pg.d.t");
    CHECK(res.error->context().partition == std::optional<int32_t>(0));
    CHECK(res.error->context().offset == std::optional<int64_t>(1));
    CHECK(w.emu.rows("d", "t").empty());  // the open epoch held row 1: aborted, re-read at the next start
    CHECK(truncates(w, "failed") == 1);
  }
}

TEST_CASE("truncate (ddl): a restart at each step neither loses rows loaded after it nor runs it twice",
          "[pipeline][ddl][truncate][recovery]") {
  World w;
  w.table(kUnique);
  w.topic("t");
  row(w, 1, 10, 100);
  row(w, 2, 20, 110);
  REQUIRE_FALSE(w.run(2).error);  // committed: the epoch before the truncate
  REQUIRE(w.emu.rows("d", "t").size() == 2);
  const int64_t at = truncate(w, 120);
  row(w, 3, 30, 130);

  SECTION("before the record (before_truncate_record): the truncate is read again and runs") {
    REQUIRE_FALSE(w.run(2).error);
    CHECK(truncates(w, "applied") == 1);
  }
  SECTION("after the record, before TRUNCATE ran (after_truncate_record): recovery runs it") {
    w.store.put_ddl(pending_truncate(at, 120));
    REQUIRE_FALSE(w.run(2).error);
    CHECK(truncates(w, "applied") == 1);          // by recovery
    CHECK(truncates(w, "already_applied") == 1);  // the record read again
  }
  SECTION("after TRUNCATE ran, before done (after_truncate_statement): recovery runs it again, harmless") {
    w.store.put_ddl(pending_truncate(at, 120));
    w.emu.sql("d", "TRUNCATE TABLE `d`.`t`");
    REQUIRE_FALSE(w.run(2).error);
    CHECK(truncates(w, "already_applied") == 1);
  }
  SECTION("after done (after_truncate_done), rows after it re-read: not run again") {
    auto rec = pending_truncate(at, 120);
    rec.state = state::DdlState::Done;
    w.store.put_ddl(rec);
    w.emu.sql("d", "TRUNCATE TABLE `d`.`t`");
    REQUIRE_FALSE(w.run(2).error);
    CHECK(truncates(w, "applied") == 0);
    CHECK(truncates(w, "already_applied") == 1);
  }
  CHECK(w.emu.rows("d", "t") == std::vector<std::string>{r(3, 30)});
  CHECK(w.ddl_record("t")->state == state::DdlState::Done);

  // Rows after it committed; the truncate record read once more (the
  // offsets are rewound by hand: what a replay or a lagging re-read does)
  // must not empty the table again.
  row(w, 4, 40, 140);
  REQUIRE_FALSE(w.run(1).error);
  truncate(w, 120);  // the same truncate again (same source position), on another offset
  row(w, 5, 50, 150);
  REQUIRE_FALSE(w.run(2).error);
  CHECK(w.emu.rows("d", "t") == std::vector<std::string>{r(3, 30), r(4, 40), r(5, 50)});
}

TEST_CASE("truncate (ddl): a later schema change keeps the truncate known (it is not run again)",
          "[pipeline][ddl][truncate][recovery]") {
  World w;
  w.table(kUnique);
  w.topic("t");
  row(w, 1, 10, 100);
  truncate(w, 110);
  row(w, 2, 20, 120);
  w.source.produce("pg.d.t", 0, "{\"id\":3}", plain("t", 'c', R"({"id":3,"a":30,"b":"x"})", 130));
  w.set("t").new_column_type = "STRING";
  REQUIRE_FALSE(w.run(4).error);
  auto rec = w.ddl_record("t");
  REQUIRE(rec);
  CHECK(rec->version == 1);  // the ADD COLUMN
  CHECK(rec->truncate_at == "pg.d.t[0]@1");
  CHECK(rec->truncate_seq == 110);
}

TEST_CASE("truncate (ddl), several partitions: rows another partition delivers later but before it in source order are "
          "dropped",
          "[pipeline][ddl][truncate][partitions]") {
  World w;
  w.table(kUnique);
  w.topic("t", 2);
  row(w, 99, 990, 5, 1);  // before the stream
  REQUIRE_FALSE(w.run(1).error);
  w.source.set_chunk_per_partition(1000);
  // Source order: 1 (lsn 10), 2 (20), TRUNCATE (30), 3 (40), 4 (50). The
  // truncate went to partition 0, which is read first; partition 1 lags.
  truncate(w, 30, 0);
  row(w, 3, 30, 40, 0);
  row(w, 1, 10, 10, 1);
  row(w, 2, 20, 20, 1);
  row(w, 4, 40, 50, 1);
  REQUIRE_FALSE(w.run(5).error);
  CHECK(w.emu.rows("d", "t") == std::vector<std::string>{r(3, 30), r(4, 40)});
  CHECK(w.metrics.snapshot().truncated_rows_dropped["d.t"] == 2);
  CHECK(truncates(w, "applied") == 1);

  // A restart re-reads nothing of it, and a row of partition 1 after the
  // truncate is loaded.
  row(w, 5, 50, 60, 1);
  REQUIRE_FALSE(w.run(1).error);
  CHECK(w.emu.rows("d", "t") == std::vector<std::string>{r(3, 30), r(4, 40), r(5, 50)});
}

TEST_CASE("truncate (ddl), several partitions: rows after it that another partition delivered first are loaded after it",
          "[pipeline][ddl][truncate][partitions]") {
  World w;
  w.table(kUnique);
  w.topic("t", 2);
  w.source.set_chunk_per_partition(1000);
  // Source order: 1 (lsn 10), 2 (20), TRUNCATE (30), 3 (40), 4 (50), 1' (60).
  // Partition 0 (read first) is ahead: it holds 1, 3 and 1'; the truncate,
  // 2 and 4 are on partition 1.
  row(w, 1, 10, 10, 0);
  row(w, 3, 30, 40, 0);
  row(w, 1, 11, 60, 0);
  row(w, 2, 20, 20, 1);
  truncate(w, 30, 1);
  row(w, 4, 40, 50, 1);
  // Five records up to the truncate, then all six again after it ran.
  const uint64_t want = 5 + 6;
  REQUIRE_FALSE(w.run(want).error);
  // Source truth: the truncate removed 1 and 2; then 3, 4 and 1'.
  CHECK(w.emu.rows("d", "t") == std::vector<std::string>{r(1, 11), r(3, 30), r(4, 40)});
  auto s = w.metrics.snapshot();
  CHECK(s.rewinds_by_reason["truncate"] == 1);
  CHECK(truncates(w, "applied") == 1);
  CHECK(truncates(w, "already_applied") == 1);
  CHECK(s.truncated_rows_dropped["d.t"] == 2);  // 1 (lsn 10) from partition 0, 2 from partition 1
}

TEST_CASE("truncate (ddl), several partitions: a row after it committed in an earlier epoch is emptied, and said so",
          "[pipeline][ddl][truncate][partitions]") {
  // Not covered by the rule (docs/schema-evolution.md): a partition ahead by
  // more than an epoch. The daemon cannot undo a committed epoch; it reports it.
  World w;
  w.table(kUnique);
  w.topic("t", 2);
  w.source.set_chunk_per_partition(1);
  row(w, 3, 30, 40, 0);  // after the truncate in source order, read first
  truncate(w, 30, 1);
  row(w, 4, 40, 50, 1);
  auto cfg = w.config();
  cfg.poll_max_messages = 1;
  cfg.epoch_max_rows = 1;  // row 3's epoch ends (and commits) before the truncate is read
  REQUIRE_FALSE(w.run_until([&] { return w.metrics.records_consumed.load() >= 3; }, cfg).error);
  CHECK(truncates(w, "applied") == 1);
  CHECK(truncates(w, "emptied_later_rows") == 1);
  CHECK(w.metrics.snapshot().tables["d.t"].last_error_unix_ms > 0);  // the error was shown (cleared by row 4's commit)
  CHECK(w.emu.rows("d", "t") == std::vector<std::string>{r(4, 40)});
}
