// Table creation and schema evolution (docs/schema-evolution.md): the
// pipeline against the Doris emulator (which applies DDL as Doris does)
// through the real client, a fake Kafka and an in-memory checkpoint store.
// Rows of the old shape must be committed in epochs before the DDL, rows of
// the new shape land in the new columns, refusals end under the bad-record
// policy, and a restart with a recorded DDL converges.
#include <catch2/catch.hpp>

#include <boost/json.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <optional>
#include <thread>

#include "core/pipeline/pipeline.hpp"
#include "core/schema/types.hpp"
#include "state/memory_store.hpp"
#include "tests/pipeline/ddl_world.hpp"
#include "tools/doris_emulator/launcher.hpp"
#include "tests/pipeline/fakes.hpp"

using namespace cdc2doris;
using namespace std::chrono_literals;
using cdc2doris::test::Emulator;
using cdc2doris::test::FakeSource;
using namespace cdc2doris::test::ddl;

namespace {

const std::vector<Field> kV1{{"id", kInt64}, {"a", kInt32}};
const std::vector<Field> kV2{{"id", kInt64}, {"a", kInt32}, {"b", kString}};

}  // namespace

TEST_CASE("schema evolution add: rows before the DDL commit before it, rows after land in the new column",
          "[pipeline][ddl]") {
  World w;
  w.table("CREATE TABLE t (id BIGINT NOT NULL, a INT NULL) UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1");
  w.topic("t");
  w.produce("t", kV1, 1, R"({"id":1,"a":10})");
  w.produce("t", kV1, 2, R"({"id":2,"a":20})");
  w.produce("t", kV1, 3, R"({"id":3,"a":30})");
  w.produce("t", kV2, 4, R"({"id":4,"a":40,"b":"four"})");  // offset 3: the first row of the new shape
  w.produce("t", kV2, 1, R"({"id":1,"a":11,"b":"one"})", 'u');
  w.produce("t", kV1, 5, R"({"id":5,"a":50})");  // an old-shape row after the change (schemas interleave)
  auto res = w.run(6);
  REQUIRE_FALSE(res.error);

  CHECK(w.desc("t") == std::vector<std::string>{"id BIGINT", "a INT", "b STRING"});
  CHECK(w.emu.rows("d", "t") == std::vector<std::string>{R"({"id":1,"a":11,"b":"one"})", R"({"id":2,"a":20,"b":null})",
                                                         R"({"id":3,"a":30,"b":null})", R"({"id":4,"a":40,"b":"four"})",
                                                         R"({"id":5,"a":50,"b":null})"});
  auto rec = w.ddl_record("t");
  REQUIRE(rec);
  CHECK(rec->state == state::DdlState::Done);
  CHECK(rec->version == 1);
  REQUIRE(rec->steps.size() == 1);
  CHECK(rec->steps[0].statement == "ALTER TABLE `d`.`t` ADD COLUMN `b` STRING NULL");
  // The epochs before the DDL's end exactly at the first new-shape record
  // and are committed; everything after is in the DDL's epoch or later.
  for (const auto& e : w.store.list()) {
    CHECK(e.state == state::EpochState::Committed);
    for (const auto& p : e.partitions) {
      if (e.epoch < rec->epoch) CHECK(p.end_offset <= 3);
      else CHECK(p.start_offset >= 3);
    }
  }
  auto s = w.metrics.snapshot();
  CHECK(s.epochs_ended_early["schema change"] == 1);
  CHECK(w.ddl_count("t", "add") == 1);
  CHECK(s.tables["d.t"].schema_version == 1);
}

TEST_CASE("schema evolution add: a column with a default gives the rows already in Doris that default",
          "[pipeline][ddl]") {
  World w;
  w.table("CREATE TABLE t (id BIGINT NOT NULL, a INT NULL) UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1");
  w.topic("t");
  w.produce("t", kV1, 1, R"({"id":1,"a":10})");
  const std::vector<Field> v2{{"id", kInt64}, {"a", kInt32}, {"q", R"({"type":"int32","optional":true,"default":7})"}};
  w.produce("t", v2, 2, R"({"id":2,"a":20,"q":3})");
  REQUIRE_FALSE(w.run(2).error);
  CHECK(w.ddl_record("t")->steps.at(0).statement == "ALTER TABLE `d`.`t` ADD COLUMN `q` INT NULL DEFAULT '7'");
  CHECK(w.emu.rows("d", "t") ==
        std::vector<std::string>{R"({"id":1,"a":10,"q":7})", R"({"id":2,"a":20,"q":3})"});
}

TEST_CASE("schema evolution off: the table is left alone, the missing column is counted and not loaded",
          "[pipeline][ddl]") {
  World w;
  w.table("CREATE TABLE t (id BIGINT NOT NULL, a INT NULL) UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1");
  w.set("t").schema_evolution = schema::Policy::Off;
  w.topic("t");
  w.produce("t", kV2, 1, R"({"id":1,"a":10,"b":"x"})");
  w.produce("t", kV2, 2, R"({"id":2,"a":20,"b":"y"})");
  REQUIRE_FALSE(w.run(2).error);
  CHECK(w.desc("t") == std::vector<std::string>{"id BIGINT", "a INT"});
  CHECK(w.emu.rows("d", "t") == std::vector<std::string>{R"({"id":1,"a":10})", R"({"id":2,"a":20})"});
  auto s = w.metrics.snapshot();
  CHECK(s.tables["d.t"].columns_not_loaded == 1);
  CHECK(s.ddl.empty());
  CHECK_FALSE(w.ddl_record("t"));
}

TEST_CASE("schema evolution full: rename, widen int to bigint and varchar, drop", "[pipeline][ddl]") {
  World w;
  w.table("CREATE TABLE t (id BIGINT NOT NULL, a INT NULL, b VARCHAR(20) NULL, c STRING NULL, g INT NULL) "
          "UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1");
  w.set("t").schema_evolution = schema::Policy::Full;
  w.topic("t");
  const std::vector<Field> v1{{"id", kInt64}, {"a", kInt32}, {"b", varchar(5)}, {"c", kString}, {"g", kInt32}};
  const std::vector<Field> v2{{"id", kInt64},
                              {"a", R"({"type":"int64","optional":true})"},
                              {"b", varchar(50)},
                              {"c2", kString},
                              {"g", kInt32}};
  const std::vector<Field> v3{{"id", kInt64}, {"a", R"({"type":"int64","optional":true})"}, {"b", varchar(50)}, {"c2", kString}};
  w.produce("t", v1, 1, R"({"id":1,"a":1,"b":"abc","c":"keep","g":5})");
  w.produce("t", v2, 2, R"({"id":2,"a":5000000000,"b":"a longer value than twenty bytes","c2":"two","g":6})");
  w.produce("t", v3, 3, R"({"id":3,"a":3,"b":"x","c2":"three"})");
  REQUIRE_FALSE(w.run(3).error);
  CHECK(w.desc("t") == std::vector<std::string>{"id BIGINT", "a BIGINT", "b VARCHAR(200)", "c2 STRING"});
  // The renamed column kept the value written before the rename.
  CHECK(w.emu.rows("d", "t") == std::vector<std::string>{R"({"id":1,"a":1,"b":"abc","c2":"keep"})",
                                                         R"({"id":2,"a":5000000000,"b":"a longer value than twenty bytes","c2":"two"})",
                                                         R"({"id":3,"a":3,"b":"x","c2":"three"})"});
  CHECK(w.ddl_count("t", "rename") == 1);
  CHECK(w.ddl_count("t", "modify") == 2);
  CHECK(w.ddl_count("t", "drop") == 1);
  auto rec = w.ddl_record("t");
  REQUIRE(rec);
  CHECK(rec->version == 2);
  CHECK(rec->steps.at(0).statement == "ALTER TABLE `d`.`t` DROP COLUMN `g`");
  CHECK(w.metrics.snapshot().tables["d.t"].schema_version == 2);
}

// Issue 33 (8): a record of the shape before a rename, from a partition
// lagging behind the one that asked for it, was loaded with the old column
// name: Doris ignored it and the renamed column was NULL (or, read as a
// rename back, the column flipped).
TEST_CASE("schema evolution full: an old-shape record after a rename loads its value under the new name",
          "[pipeline][ddl]") {
  World w;
  w.table("CREATE TABLE t (id BIGINT NOT NULL, a INT NULL, c STRING NULL) "
          "UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1");
  w.set("t").schema_evolution = schema::Policy::Full;
  w.topic("t", 2);
  const std::vector<Field> v1{{"id", kInt64}, {"a", kInt32}, {"c", kString}};
  const std::vector<Field> v2{{"id", kInt64}, {"a", kInt32}, {"c2", kString}};
  w.produce("t", v1, 1, R"({"id":1,"a":1,"c":"one"})", 'c', 0);
  w.produce("t", v2, 2, R"({"id":2,"a":2,"c2":"two"})", 'c', 0);
  // Partition 1 lags: its records still have the old shape.
  w.produce("t", v1, 3, R"({"id":3,"a":3,"c":"three"})", 'c', 1);
  REQUIRE_FALSE(w.run(3).error);
  // And after a restart (the rename known from the DDL record).
  w.produce("t", v1, 4, R"({"id":4,"a":4,"c":"four"})", 'c', 1);
  w.produce("t", v2, 5, R"({"id":5,"a":5,"c2":"five"})", 'c', 0);
  REQUIRE_FALSE(w.run(2).error);
  CHECK(w.desc("t") == std::vector<std::string>{"id BIGINT", "a INT", "c2 STRING"});
  CHECK(w.emu.rows("d", "t") == std::vector<std::string>{R"({"id":1,"a":1,"c2":"one"})", R"({"id":2,"a":2,"c2":"two"})",
                                                         R"({"id":3,"a":3,"c2":"three"})",
                                                         R"({"id":4,"a":4,"c2":"four"})",
                                                         R"({"id":5,"a":5,"c2":"five"})"});
  CHECK(w.ddl_count("t", "rename") == 1);
  CHECK(w.metrics.snapshot().tables["d.t"].schema_version == 1);
}

TEST_CASE("schema evolution add (the default): a source int -> bigint and a longer varchar widen the columns",
          "[pipeline][ddl]") {
  World w;
  w.table("CREATE TABLE t (id BIGINT NOT NULL, a INT NULL, b VARCHAR(20) NULL) "
          "UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1");
  w.topic("t");
  const std::vector<Field> v1{{"id", kInt64}, {"a", kInt32}, {"b", varchar(5)}};
  const std::vector<Field> v2{{"id", kInt64}, {"a", R"({"type":"int64","optional":true})"}, {"b", varchar(50)}};
  w.produce("t", v1, 1, R"({"id":1,"a":1,"b":"abc"})");
  w.produce("t", v2, 2, R"({"id":2,"a":5000000000,"b":"a longer value than twenty bytes"})");
  // INT -> BIGINT is a heavy change (a Doris job): run until it is done and row 2 is in.
  auto cfg = w.config();
  cfg.epoch_interval = 200ms;  // row 2's epoch commits without the stop
  auto res = w.run_until([&] { return w.emu.rows("d", "t").size() == 2; }, cfg);
  INFO((res.error ? res.error->what() : std::string()));
  REQUIRE_FALSE(res.error);
  CHECK(w.desc("t") == std::vector<std::string>{"id BIGINT", "a BIGINT", "b VARCHAR(200)"});
  CHECK(w.emu.rows("d", "t") == std::vector<std::string>{R"({"id":1,"a":1,"b":"abc"})",
                                                         R"({"id":2,"a":5000000000,"b":"a longer value than twenty bytes"})"});
  CHECK(w.ddl_count("t", "modify") == 2);
}

TEST_CASE("schema evolution: a refused DDL stops under policy fail with table, statement and Doris' message",
          "[pipeline][ddl]") {
  World w;
  // `s` is the table's sequence mapping: Doris refuses to drop it.
  w.table("CREATE TABLE t (id BIGINT NOT NULL, a INT NULL, s BIGINT NULL) UNIQUE KEY(id) DISTRIBUTED BY HASH(id) "
          "BUCKETS 1 PROPERTIES (\"function_column.sequence_col\" = \"s\")");
  w.set("t").schema_evolution = schema::Policy::Full;
  w.topic("t");
  const std::vector<Field> v1{{"id", kInt64}, {"a", kInt32}, {"s", R"({"type":"int64","optional":true})"}};
  w.produce("t", v1, 1, R"({"id":1,"a":1,"s":1})");
  w.produce("t", kV1, 2, R"({"id":2,"a":2})");
  SECTION("fail") {
    auto res = w.run(2);
    REQUIRE(res.error);
    CHECK_THAT(res.error->what(), Catch::Contains("table d.t: schema change refused"));
    CHECK_THAT(res.error->what(), Catch::Contains("ALTER TABLE `d`.`t` DROP COLUMN `s`"));
    CHECK_THAT(res.error->what(), Catch::Contains("Can not drop sequence mapping column"));
    // The row before it is committed; the record that asked for it is not.
    CHECK(w.emu.rows("d", "t") == std::vector<std::string>{R"({"id":1,"a":1,"s":1})"});
    CHECK(w.store.committed_offsets().begin()->second.offset == 1);
    CHECK(w.ddl_record("t")->state == state::DdlState::Refused);
  }
  SECTION("skip") {
    auto cfg = w.config();
    cfg.bad_record_policy = pipeline::BadRecordPolicy::Skip;
    REQUIRE_FALSE(w.run(2, cfg).error);
    CHECK(w.metrics.snapshot().bad_records["ddl_refused|skip"] == 1);
    CHECK(w.desc("t") == std::vector<std::string>{"id BIGINT", "a INT", "s BIGINT"});
    CHECK(w.emu.rows("d", "t").size() == 2);
  }
}

TEST_CASE("schema evolution: a running schema change is waited out", "[pipeline][ddl]") {
  World w;
  w.table("CREATE TABLE t (id BIGINT NOT NULL, a INT NULL) UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1");
  w.topic("t");
  w.emu.fault(R"({"type":"schema_change_running","count":3})");
  w.produce("t", kV2, 1, R"({"id":1,"a":10,"b":"x"})");
  REQUIRE_FALSE(w.run(1).error);
  CHECK(w.emu.rows("d", "t") == std::vector<std::string>{R"({"id":1,"a":10,"b":"x"})"});
  CHECK(w.ddl_count("t", "add") == 1);
}

namespace {
std::vector<std::string> alter_job_states(World& w) {
  auto res = boost::json::parse(w.emu.query("d", "SHOW ALTER TABLE COLUMN FROM d")).as_object();
  std::vector<std::string> out;
  for (const auto& r : res["data"].as_object()["data"].as_array()) out.emplace_back(r.as_array()[9].as_string());
  return out;
}
}  // namespace

TEST_CASE("schema evolution: a heavy schema change (a Doris job) is waited out, no row loads without the new column",
          "[pipeline][ddl]") {
  // Without light schema change Doris runs ADD COLUMN as an asynchronous job
  // (fe SchemaChangeHandler / SchemaChangeJobV2): the ALTER answers at once,
  // DESC shows the new column only when the job has finished.
  cdc2doris::test::EmulatorOptions o;
  o.alter_job_ms = 1500;
  World w(o);
  w.table("CREATE TABLE t (id BIGINT NOT NULL, a INT NULL) UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1 "
          "PROPERTIES (\"light_schema_change\" = \"false\")");
  w.topic("t");
  w.produce("t", kV1, 1, R"({"id":1,"a":1})");
  w.produce("t", kV2, 2, R"({"id":2,"a":2,"b":"new"})");
  bool saw_waiting = false;
  const uint64_t want = w.metrics.records_consumed.load() + 2;
  auto res = w.run_until(
      [&] {
        const auto snap = w.metrics.snapshot();
        auto it = snap.tables.find("d.t");
        if (it != snap.tables.end() && it->second.schema_change.find("schema-change job") != std::string::npos)
          saw_waiting = true;
        // The rows commit at the stop (one epoch per run): stop once the DDL is done.
        auto rec = w.ddl_record("t");
        return w.metrics.records_consumed.load() >= want && rec && rec->state == state::DdlState::Done;
      },
      w.config());
  REQUIRE_FALSE(res.error);
  CHECK(saw_waiting);  // /status showed the table waiting on the job
  CHECK(alter_job_states(w) == std::vector<std::string>{"FINISHED"});
  CHECK(w.emu.rows("d", "t") ==
        std::vector<std::string>{R"({"id":1,"a":1,"b":null})", R"({"id":2,"a":2,"b":"new"})"});
  CHECK(w.ddl_count("t", "add") == 1);
  CHECK(w.metrics.snapshot().tables["d.t"].schema_change.empty());
  CHECK(w.ddl_record("t")->state == state::DdlState::Done);
}

TEST_CASE("schema evolution: an ALTER refused because another job runs waits for that job, then applies",
          "[pipeline][ddl]") {
  cdc2doris::test::EmulatorOptions o;
  o.alter_job_ms = 3000;
  World w(o);
  w.table("CREATE TABLE t (id BIGINT NOT NULL, a INT NULL) UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1");
  w.emu.sql("d", "ALTER TABLE t MODIFY COLUMN a BIGINT NULL");  // someone else's heavy change, still running
  w.topic("t");
  w.produce("t", kV2, 1, R"({"id":1,"a":10,"b":"x"})");
  REQUIRE_FALSE(w.run_until(
                    [&] {
                      auto rec = w.ddl_record("t");
                      return rec && rec->state == state::DdlState::Done;
                    },
                    w.config())
                    .error);
  CHECK(w.desc("t") == std::vector<std::string>{"id BIGINT", "a BIGINT", "b STRING"});
  CHECK(w.emu.rows("d", "t") == std::vector<std::string>{R"({"id":1,"a":10,"b":"x"})"});
  CHECK(alter_job_states(w) == std::vector<std::string>{"FINISHED"});
}

// A table to create from the record's schema (kV1), whose DESC meets `fault`.
void missing_table_with_desc_fault(World& w, const std::string& fault) {
  w.topic("n");
  auto& s = w.set("n");
  s.auto_create = true;
  s.create.properties["replication_num"] = "1";
  w.emu.fault(fault);
  w.produce("n", kV1, 1, R"({"id":1,"a":10})");
}

TEST_CASE("auto_create: a DESC failing for another reason than a missing table stops the daemon with its cause",
          "[pipeline][ddl][auto_create]") {
  World w;
  std::string fault, doris_says;
  SECTION("access denied (ResponseBody code 1)") {
    doris_says = "Access denied; you need (at least one of) the SELECT_PRIV privilege(s) for table 'n'";
    fault = R"({"type":"fail_query","match":"DESC `d`.`n`","count":-1,"code":1,"status":"Error","message":"errCode = 2, detailMessage = )" +
            doris_says + "\"}";
  }
  SECTION("HTTP 401") {
    doris_says = "http_status=401";
    fault = R"({"type":"fail_query","match":"DESC","count":-1,"http_status":401,"message":"bad credentials"})";
  }
  SECTION("HTTP 404: an FE without the query API") {
    doris_says = "http_status=404";
    fault = R"({"type":"fail_query","match":"DESC","count":-1,"http_status":404,"code":404,"message":"Not Found"})";
  }
  missing_table_with_desc_fault(w, fault);
  auto res = w.run(1);
  REQUIRE(res.error);
  INFO(res.error->what());
  CHECK(res.error->disposition() != Disposition::Retry);
  CHECK_THAT(res.error->what(), Catch::Contains("table d.n: its columns cannot be read (statement: DESC `d`.`n`)"));
  CHECK_THAT(res.error->what(), Catch::Contains(doris_says));
  // Not the symptom the daemon used to stop with, one load later.
  CHECK_THAT(res.error->what(), !Catch::Contains("unknown", Catch::CaseSensitive::No));
  CHECK(w.ddl_count("n", "create") == 0);
  CHECK(w.store.committed_offsets().empty());
}

TEST_CASE("auto_create: a DESC failing transiently is retried with the pipeline's backoff, then the table is created",
          "[pipeline][ddl][auto_create]") {
  World w;
  // More failures than the client's own attempts (4): the pipeline rewinds and asks again.
  SECTION("HTTP 503") {
    missing_table_with_desc_fault(w, R"({"type":"fail_query","match":"DESC","count":5,"http_status":503})");
  }
  SECTION("FE error (ResponseBody code 500)") {
    missing_table_with_desc_fault(w, R"({"type":"fail_query","match":"DESC","count":5})");
  }
  SECTION("connection reset") {
    missing_table_with_desc_fault(w, R"({"type":"fail_query","match":"DESC","count":5,"reset":true})");
  }
  SECTION("malformed answer") {
    missing_table_with_desc_fault(w, R"({"type":"fail_query","match":"DESC","count":2,"raw":true,"message":"{\"msg\":\"success\",\"code\":0,\"data\":null}"})");
  }
  SECTION("timeout") {
    doris::ClientConfig cc;
    cc.fe_urls = {w.emu.fe()};
    cc.user = "root";
    cc.timeouts.request = 200ms;
    cc.retry.max_attempts = 1;
    w.client = doris::make_client(cc);
    missing_table_with_desc_fault(w, R"({"type":"delay_query","match":"DESC","count":2,"ms":1000})");
  }
  // A record consumed once is not enough: it must come round again after the rewind.
  REQUIRE_FALSE(w.run_until([&] { return w.ddl_count("n", "create") == 1; }, w.config()).error);
  CHECK(w.metrics.snapshot().rewinds_by_reason["schema lookup"] >= 1);
  CHECK(w.desc("n") == std::vector<std::string>{"id BIGINT", "a INT"});
  CHECK(w.emu.rows("d", "n") == std::vector<std::string>{R"({"id":1,"a":10})"});
  CHECK(w.ddl_count("n", "create") == 1);
}

TEST_CASE("auto_create: a missing database is created first, with routing.create_database_properties",
          "[pipeline][ddl][auto_create]") {
  World w({}, /*create_database=*/false);
  w.topic("n");
  auto& s = w.set("n");
  s.auto_create = true;
  s.create.properties["replication_num"] = "1";
  s.create.database_properties["replication_allocation"] = "tag.location.default: 1";
  w.produce("n", kV1, 1, R"({"id":1,"a":10})");
  w.produce("n", kV1, 2, R"({"id":2,"a":20})");
  auto res = w.run(2);
  INFO((res.error ? res.error->what() : std::string()));
  REQUIRE_FALSE(res.error);
  CHECK(w.ddl_count("n", "create_database") == 1);
  CHECK(w.ddl_count("n", "create") == 1);
  CHECK(w.desc("n") == std::vector<std::string>{"id BIGINT", "a INT"});
  CHECK(w.emu.rows("d", "n") == std::vector<std::string>{R"({"id":1,"a":10})", R"({"id":2,"a":20})"});
  auto shown = boost::json::parse(w.emu.query("information_schema", "SHOW CREATE DATABASE d")).as_object();
  CHECK(boost::json::serialize(shown["data"].as_object()["data"]) ==
        R"x([["d","CREATE DATABASE `d`\nPROPERTIES (\n\"replication_allocation\" = \"tag.location.default: 1\"\n)"]])x");
}

TEST_CASE("auto_create: a database Doris refuses to create is a refused schema change naming the privilege",
          "[pipeline][ddl][auto_create]") {
  World w({}, /*create_database=*/false);
  w.topic("n");
  w.set("n").auto_create = true;
  w.emu.fault(R"({"type":"fail_query","match":"CREATE DATABASE","count":-1,"code":1,"status":"Error","message":"errCode = 2, detailMessage = Access denied; you need (at least one of) the CREATE privilege(s) for this operation"})");
  w.produce("n", kV1, 1, R"({"id":1,"a":10})");
  auto res = w.run(1);
  REQUIRE(res.error);
  INFO(res.error->what());
  CHECK_THAT(res.error->what(), Catch::Contains("table d.n: schema change refused (statement: CREATE DATABASE IF NOT EXISTS `d`)"));
  CHECK_THAT(res.error->what(), Catch::Contains("Access denied"));
  CHECK_THAT(res.error->what(), Catch::Contains("GRANT CREATE_PRIV ON d.*"));
  CHECK(w.ddl_count("n", "create") == 0);
  CHECK(w.store.committed_offsets().empty());
}

TEST_CASE("schema evolution: schemaless keys the table lacks are added as new_column_type, or refused",
          "[pipeline][ddl]") {
  World w;
  w.table("CREATE TABLE t (id BIGINT NOT NULL, a INT NULL) UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1");
  w.topic("t");
  w.produce_plain("t", 1, R"({"id":1,"a":10})");
  w.produce_plain("t", 2, R"({"id":2,"a":20,"extra":"e"})");
  SECTION("added") {
    w.set("t").new_column_type = "VARCHAR(100)";
    REQUIRE_FALSE(w.run(2).error);
    CHECK(w.desc("t") == std::vector<std::string>{"id BIGINT", "a INT", "extra VARCHAR(100)"});
    CHECK(w.emu.rows("d", "t") ==
          std::vector<std::string>{R"({"id":1,"a":10,"extra":null})", R"({"id":2,"a":20,"extra":"e"})"});
  }
  SECTION("refused") {
    auto res = w.run(2);
    REQUIRE(res.error);
    CHECK_THAT(res.error->what(), Catch::Contains("'extra'"));
    CHECK_THAT(res.error->what(), Catch::Contains("new_column_type"));
    // As for any bad record under fail: nothing from the epoch holding it is
    // committed (the row before it is read again at the next start).
    CHECK(w.emu.rows("d", "t").empty());
    CHECK(w.store.committed_offsets().empty());
  }
}

TEST_CASE("schema evolution: the record that adds a schemaless column is typed by it, as are those after it",
          "[pipeline][ddl]") {
  World w;
  w.table("CREATE TABLE t (id BIGINT NOT NULL, a INT NULL) UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1");
  w.topic("t");
  w.set("t").new_column_type = "DATE";
  // From the 151st record on, a key the table lacks: days since 1970, as
  // io.debezium.time.Date sends them. The record that adds the column was
  // decoded before the column existed.
  std::vector<std::string> want;
  for (int id = 1; id <= 300; ++id) {
    const std::string row = "{\"id\":" + std::to_string(id) + ",\"a\":" + std::to_string(id);
    w.produce_plain("t", id, row + (id <= 150 ? "}" : ",\"d\":19700}"));
    want.push_back(row + (id <= 150 ? ",\"d\":null}" : ",\"d\":\"2023-12-09\"}"));
  }
  REQUIRE_FALSE(w.run(300).error);
  CHECK(w.desc("t") == std::vector<std::string>{"id BIGINT", "a INT", "d DATE"});
  auto rows = w.emu.rows("d", "t");
  std::sort(rows.begin(), rows.end());
  std::sort(want.begin(), want.end());
  CHECK(rows == want);
  CHECK(w.ddl_count("t", "add") == 1);
}

TEST_CASE("schema evolution: a schemaless value the added column cannot take is a bad record at its offset",
          "[pipeline][ddl]") {
  World w;
  w.table("CREATE TABLE t (id BIGINT NOT NULL, a INT NULL) UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1");
  w.topic("t");
  w.set("t").new_column_type = "DATE";
  w.produce_plain("t", 1, R"({"id":1,"a":1})");
  w.produce_plain("t", 2, R"({"id":2,"a":2,"d":"yesterday"})");
  w.produce_plain("t", 3, R"({"id":3,"a":3,"d":19700})");
  auto cfg = w.config();
  cfg.bad_record_policy = pipeline::BadRecordPolicy::Skip;
  REQUIRE_FALSE(w.run(3, cfg).error);
  CHECK(w.desc("t") == std::vector<std::string>{"id BIGINT", "a INT", "d DATE"});
  CHECK(w.metrics.snapshot().bad_records["type_mismatch|skip"] == 1);
  CHECK(w.emu.rows("d", "t") == std::vector<std::string>{R"({"id":1,"a":1,"d":null})",
                                                         R"({"id":3,"a":3,"d":"2023-12-09"})"});
}

TEST_CASE("auto_create: 100 tables from a Debezium snapshot, each column typed by the mapping table",
          "[pipeline][ddl][auto_create]") {
  World w;
  // Field schemas as Debezium sends them (with column.propagate.source.type
  // where the source type decides) and the Doris type docs/decoding.md recommends.
  struct Typed {
    std::string schema;
    std::string doris;
  };
  auto src = [](const char* type, const char* len, const char* base) {
    std::string b = base;
    std::string p = std::string(R"("parameters":{"__debezium.source.column.type":")") + type + "\"" +
                    (*len ? std::string(R"(,"__debezium.source.column.length":")") + len + "\"" : std::string()) + "}";
    return b.substr(0, b.size() - 1) + "," + p + "}";
  };
  const std::vector<Typed> catalogue = {
      {R"({"type":"int16","optional":true})", "SMALLINT"},
      {R"({"type":"int32","optional":true})", "INT"},
      {R"({"type":"int64","optional":true})", "BIGINT"},
      {R"({"type":"float","optional":true})", "FLOAT"},
      {R"({"type":"double","optional":true})", "DOUBLE"},
      {R"({"type":"boolean","optional":true})", "BOOLEAN"},
      {R"({"type":"bytes","optional":true,"name":"org.apache.kafka.connect.data.Decimal","parameters":{"scale":"2","connect.decimal.precision":"10"}})", "DECIMAL(10,2)"},
      {R"({"type":"struct","optional":true,"name":"io.debezium.data.VariableScaleDecimal","fields":[{"type":"int32","field":"scale"},{"type":"bytes","field":"value"}]})", "DECIMAL(38,10)"},
      {src("VARCHAR", "50", R"({"type":"string","optional":true})"), "VARCHAR(200)"},
      {src("BPCHAR", "5", R"({"type":"string","optional":true})"), "CHAR(20)"},
      {src("TEXT", "", R"({"type":"string","optional":true})"), "STRING"},
      {R"({"type":"bytes","optional":true})", "STRING"},
      {R"({"type":"int32","optional":true,"name":"io.debezium.time.Date"})", "DATE"},
      {R"({"type":"int64","optional":true,"name":"io.debezium.time.MicroTime"})", "STRING"},
      {R"({"type":"int64","optional":true,"name":"io.debezium.time.MicroTimestamp"})", "DATETIME(6)"},
      {R"({"type":"int64","optional":true,"name":"io.debezium.time.Timestamp"})", "DATETIME(3)"},
      {R"({"type":"string","optional":true,"name":"io.debezium.time.ZonedTimestamp"})", "DATETIME(6)"},
      {R"({"type":"int64","optional":true,"name":"io.debezium.time.MicroDuration"})", "BIGINT"},
      {R"({"type":"string","optional":true,"name":"io.debezium.data.Uuid"})", "VARCHAR(36)"},
      {R"({"type":"string","optional":true,"name":"io.debezium.data.Json"})", "JSON"},
      {src("INET", "", R"({"type":"string","optional":true})"), "VARCHAR(64)"},
      {src("MACADDR", "", R"({"type":"string","optional":true})"), "VARCHAR(17)"},
      {src("TINYINT UNSIGNED", "", R"({"type":"int16","optional":true})"), "SMALLINT"},
      {src("BIGINT UNSIGNED", "20", R"({"type":"bytes","optional":true,"name":"org.apache.kafka.connect.data.Decimal","parameters":{"scale":"0"}})"), "LARGEINT"},
      {R"({"type":"int32","optional":true,"name":"io.debezium.time.Year"})", "SMALLINT"},
      {R"({"type":"string","optional":true,"name":"io.debezium.data.EnumSet","parameters":{"allowed":"a,b"}})", "VARCHAR(12)"},
      {R"({"type":"array","optional":true,"items":{"type":"int32","optional":true}})", "JSON"},
  };
  w.decoding.envelope = decode::Envelope::Schema;
  const int kTables = 100;
  std::vector<std::vector<std::string>> expected(kTables);
  for (int t = 0; t < kTables; ++t) {
    const std::string name = "s" + std::to_string(t);
    w.topic(name);
    auto& s = w.set(name);
    s.auto_create = true;
    s.create.properties["replication_num"] = "1";
    std::vector<Field> fields{{"id", kInt64}};
    expected[t].push_back("id BIGINT");
    for (int k = 0; k < 4; ++k) {
      const Typed& ty = catalogue[static_cast<size_t>(t * 4 + k) % catalogue.size()];
      fields.push_back({"c" + std::to_string(k), ty.schema});
      expected[t].push_back("c" + std::to_string(k) + " " + ty.doris);
    }
    w.produce(name, fields, 1, R"({"id":1,"c0":null,"c1":null,"c2":null,"c3":null})", 'r');
  }
  REQUIRE_FALSE(w.run(kTables).error);
  for (int t = 0; t < kTables; ++t) {
    const std::string name = "s" + std::to_string(t);
    INFO("table " << name);
    CHECK(w.desc(name) == expected[static_cast<size_t>(t)]);
    CHECK(w.emu.rows("d", name).size() == 1);
    CHECK(w.ddl_count(name, "create") == 1);
  }
  // The created table is UNIQUE KEY merge-on-write with BUCKETS AUTO.
  auto show = w.emu.query("d", "SHOW CREATE TABLE `d`.`s0`");
  CHECK_THAT(show, Catch::Contains("UNIQUE KEY"));
  CHECK_THAT(show, Catch::Contains("enable_unique_key_merge_on_write"));
  // Idempotent: a restart with the tables there creates nothing.
  w.produce("s0", {{"id", kInt64}, {"c0", catalogue[0].schema}, {"c1", catalogue[1].schema}, {"c2", catalogue[2].schema},
                   {"c3", catalogue[3].schema}},
            2, R"({"id":2,"c0":1,"c1":2,"c2":3,"c3":1.5})");
  REQUIRE_FALSE(w.run(1).error);
  CHECK(w.ddl_count("s0", "create") == 1);
  CHECK(w.emu.rows("d", "s0").size() == 2);
}

TEST_CASE("auto_create: schemaless records create the table from the configured columns", "[pipeline][ddl]") {
  World w;
  w.topic("p");
  auto& s = w.set("p");
  s.auto_create = true;
  s.columns = {{"id", "BIGINT", true, std::nullopt, false, false}, {"v", "VARCHAR(40)", true, std::nullopt, false, false}};
  s.create.properties["replication_num"] = "1";
  w.produce_plain("p", 1, R"({"id":1,"v":"x"})");
  REQUIRE_FALSE(w.run(1).error);
  CHECK(w.desc("p") == std::vector<std::string>{"id BIGINT", "v VARCHAR(40)"});
  CHECK(w.emu.rows("d", "p") == std::vector<std::string>{R"({"id":1,"v":"x"})"});
}

TEST_CASE("schema evolution: a restart converges a recorded DDL, running only what Doris does not show",
          "[pipeline][ddl][recovery]") {
  World w;
  w.table("CREATE TABLE t (id BIGINT NOT NULL, a INT NULL) UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1");
  w.topic("t");
  state::DdlRecord rec;
  rec.db = "d";
  rec.table = "t";
  rec.version = 1;
  rec.epoch = 1;
  rec.steps.push_back({0, "b", "STRING", "ALTER TABLE `d`.`t` ADD COLUMN `b` STRING NULL"});
  rec.steps.push_back({0, "c", "INT", "ALTER TABLE `d`.`t` ADD COLUMN `c` INT NULL"});
  w.store.put_ddl(rec);
  // The crash came after the first statement: Doris already has `b`.
  w.emu.sql("d", rec.steps[0].statement);
  w.produce("t", {{"id", kInt64}, {"a", kInt32}, {"b", kString}, {"c", kInt32}}, 1, R"({"id":1,"a":1,"b":"x","c":2})");
  REQUIRE_FALSE(w.run(1).error);
  CHECK(w.desc("t") == std::vector<std::string>{"id BIGINT", "a INT", "b STRING", "c INT"});
  CHECK(w.ddl_count("t", "add") == 1);  // only `c` ran
  CHECK(w.ddl_record("t")->state == state::DdlState::Done);
  CHECK(w.metrics.snapshot().tables["d.t"].schema_version == 1);
  CHECK(w.emu.rows("d", "t") == std::vector<std::string>{R"({"id":1,"a":1,"b":"x","c":2})"});
}
