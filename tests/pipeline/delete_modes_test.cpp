// Delete modes (issue 33 item 2) through the pipeline into the Doris
// emulator: the same source history ends as hard deletes, flagged rows or
// untouched rows, partial (TOAST) rows, a primary-key change and a
// tombstone included; auto-created tables get the flag columns; a soft table
// without them stops the daemon instead of losing the deletes silently.
#include <catch2/catch.hpp>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <optional>
#include <thread>

#include "core/pipeline/pipeline.hpp"
#include "state/memory_store.hpp"
#include "tests/pipeline/fakes.hpp"
#include "tools/doris_emulator/launcher.hpp"

using namespace cdc2doris;
using namespace std::chrono_literals;
using cdc2doris::test::Emulator;
using cdc2doris::test::FakeSource;

namespace {

const bool kQuiet = [] {
  const char* v = std::getenv("CDC2DORIS_TEST_LOG");
  if (v == nullptr) spdlog::set_level(spdlog::level::off);
  else if (std::string_view(v) == "debug") spdlog::set_level(spdlog::level::debug);
  return true;
}();

// PostgreSQL (before-images are not trusted: key-only soft deletes).
std::string pg(const std::string& table, char op, int64_t lsn, const std::string& after) {
  return std::string(R"({"before":null,"after":)") + (after.empty() ? "null" : after) +
         R"(,"source":{"connector":"postgresql","name":"pg","ts_ms":1700000000123,"db":"d","schema":"public",)"
         R"("table":")" +
         table + R"(","lsn":)" + std::to_string(lsn) + R"(},"op":")" + op + R"("})";
}

// MySQL (whole before-images): a primary-key change in one `u` record.
std::string mysql(const std::string& table, char op, const std::string& before, const std::string& after) {
  return std::string(R"({"before":)") + before + R"(,"after":)" + after +
         R"(,"source":{"connector":"mysql","name":"my","ts_ms":1700000000000,"db":"d","table":")" + table +
         R"(","file":"b.1","pos":4,"row":0},"op":")" + op + R"("})";
}

std::string key(int id) { return "{\"id\":" + std::to_string(id) + "}"; }

using Settings = std::map<pipeline::Target, pipeline::TableSettings>;

struct World {
  Emulator emu;
  std::unique_ptr<doris::DorisClient> client;
  FakeSource source;
  state::MemoryCheckpointStore store;
  std::unique_ptr<pipeline::ExplicitRouter> router;
  pipeline::Metrics metrics;
  decode::DecoderOptions decoding;

  explicit World(Settings settings) {
    emu.sql("", "CREATE DATABASE d");
    doris::ClientConfig cc;
    cc.fe_urls = {emu.fe()};
    cc.user = "root";
    client = doris::make_client(cc);
    router = std::make_unique<pipeline::ExplicitRouter>(std::map<std::string, pipeline::Target>{}, std::move(settings));
  }

  // One history per table: inserts, a partial (TOAST) update, deletes, a
  // re-insert, a primary-key change, and a tombstone that is its key's only
  // delete (its `d` was compacted away).
  void produce(const std::string& table) {
    const std::string topic = "pg.d." + table;
    source.add_topic(topic, 1);
    int64_t lsn = 100;
    auto p = [&](int id, char op, const std::string& after) { source.produce(topic, 0, key(id), pg(table, op, lsn += 10, after)); };
    p(1, 'c', R"({"id":1,"v":"a","big":"B1"})");
    p(2, 'c', R"({"id":2,"v":"x","big":"X1"})");
    p(3, 'c', R"({"id":3,"v":"p","big":"P1"})");
    p(1, 'u', R"({"id":1,"v":"b","big":"__debezium_unavailable_value"})");
    p(1, 'd', "");
    p(2, 'd', "");
    p(2, 'c', R"({"id":2,"v":"y","big":"X2"})");
    // Before the MySQL records: a topic that carried two source identities
    // (schema "public" and none) sends its tombstones nowhere.
    source.produce(topic, 0, key(3), std::nullopt);  // tombstone
    source.produce(topic, 0, key(4), mysql(table, 'c', "null", R"({"id":4,"v":"m","big":"M1"})"));
    source.produce(topic, 0, key(5), mysql(table, 'u', R"({"id":4,"v":"m","big":"M1"})", R"({"id":5,"v":"m","big":"M1"})"));
  }
  static constexpr uint64_t kRecords = 10;

  pipeline::RunResult run(uint64_t records) {
    pipeline::PipelineConfig c;
    c.label_prefix = "dm";
    c.epoch_interval = 1h;
    c.end_epoch_when_caught_up = false;
    c.poll_timeout = 2ms;
    c.backoff_base = 1ms;
    c.backoff_cap = 20ms;
    c.shutdown_deadline = 20s;
    pipeline::Dependencies deps{source, *client, store, *router, metrics, nullptr};
    pipeline::Pipeline p(c, decoding, deps);
    std::optional<pipeline::RunResult> result;
    const uint64_t want = metrics.records_consumed.load() + records;
    std::atomic<bool> finished{false};
    std::thread t([&] {
      result = p.run();
      finished = true;
    });
    source.wait_for([&] { return metrics.records_consumed.load() >= want || finished.load(); }, 20s);
    p.request_stop();
    t.join();
    return *result;
  }
};

const std::string kCols = "(id BIGINT NOT NULL, v STRING NULL, big STRING NULL";
const std::string kUnique = ") UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1";

pipeline::TableSettings mode(decode::DeleteMode m, std::string deleted_at = {}) {
  pipeline::TableSettings s;
  s.deletes = decode::DeleteOptions{m, "__deleted", std::move(deleted_at)};
  return s;
}

}  // namespace

TEST_CASE("delete modes: hard, soft and ignore each end the table as their rules say", "[pipeline][delete_modes]") {
  World w(Settings{{{"d", "soft"}, mode(decode::DeleteMode::Soft, "deleted_at")},
                   {{"d", "ign"}, mode(decode::DeleteMode::Ignore)}});
  w.emu.sql("d", "CREATE TABLE hard " + kCols + kUnique);
  w.emu.sql("d", "CREATE TABLE soft " + kCols + ", __deleted BOOLEAN NULL, deleted_at DATETIME(3) NULL" + kUnique);
  w.emu.sql("d", "CREATE TABLE ign " + kCols + kUnique);
  for (const char* t : {"hard", "soft", "ign"}) w.produce(t);
  auto res = w.run(3 * World::kRecords);
  REQUIRE_FALSE(res.error);

  CHECK(w.emu.rows("d", "hard") == std::vector<std::string>{R"({"id":2,"v":"y","big":"X2"})",
                                                             R"({"id":5,"v":"m","big":"M1"})"});
  // Soft: 1 keeps its last values (the TOAST update's `big` included) and is
  // flagged with the delete's time; 2 was deleted and inserted again; 3's
  // tombstone has no source time; 4 was the old key of a key change.
  CHECK(w.emu.rows("d", "soft") ==
        std::vector<std::string>{
            R"({"id":1,"v":"b","big":"B1","__deleted":true,"deleted_at":"2023-11-14 22:13:20.123"})",
            R"({"id":2,"v":"y","big":"X2","__deleted":false,"deleted_at":null})",
            R"({"id":3,"v":"p","big":"P1","__deleted":true,"deleted_at":null})",
            R"({"id":4,"v":"m","big":"M1","__deleted":true,"deleted_at":"2023-11-14 22:13:20.000"})",
            R"({"id":5,"v":"m","big":"M1","__deleted":false,"deleted_at":null})"});
  CHECK(w.emu.rows("d", "ign") == std::vector<std::string>{R"({"id":1,"v":"b","big":"B1"})",
                                                            R"({"id":2,"v":"y","big":"X2"})",
                                                            R"({"id":3,"v":"p","big":"P1"})",
                                                            R"({"id":4,"v":"m","big":"M1"})",
                                                            R"({"id":5,"v":"m","big":"M1"})"});
  // Ignored: the two deletes, the key change's old key and the tombstone.
  CHECK(w.metrics.skipped(pipeline::SkipReason::DeleteIgnored) == 4);
}

TEST_CASE("delete modes: an auto-created soft table gets the flag columns", "[pipeline][delete_modes]") {
  pipeline::TableSettings s = mode(decode::DeleteMode::Soft, "deleted_at");
  s.auto_create = true;
  s.columns = {{"id", "BIGINT", false, std::nullopt, false, false},
               {"v", "STRING", true, std::nullopt, false, false},
               {"big", "STRING", true, std::nullopt, false, false}};
  World w(Settings{{{"d", "auto"}, s}});
  w.produce("auto");
  auto res = w.run(World::kRecords);
  REQUIRE_FALSE(res.error);
  auto rows = w.emu.rows("d", "auto");
  REQUIRE(rows.size() == 5);
  CHECK(rows[0] == R"({"id":1,"v":"b","big":"B1","__deleted":true,"deleted_at":"2023-11-14 22:13:20.123"})");
  CHECK(rows[1] == R"({"id":2,"v":"y","big":"X2","__deleted":false,"deleted_at":null})");
}

TEST_CASE("delete modes: a soft table without the flag column stops naming the ALTER TABLE",
          "[pipeline][delete_modes]") {
  World w(Settings{{{"d", "plain"}, mode(decode::DeleteMode::Soft)}});
  w.emu.sql("d", "CREATE TABLE plain " + kCols + kUnique);
  w.produce("plain");
  auto res = w.run(World::kRecords);
  REQUIRE(res.error);
  CHECK(res.error->message().find("no column '__deleted'") != std::string::npos);
  CHECK(res.error->message().find("ADD COLUMN `__deleted` BOOLEAN") != std::string::npos);
  CHECK(w.emu.rows("d", "plain").empty());
}

TEST_CASE("delete modes: a soft DUPLICATE KEY table appends whole-image deletes flagged, skips key-only ones",
          "[pipeline][delete_modes]") {
  World w(Settings{{{"d", "hist"}, mode(decode::DeleteMode::Soft)}});
  w.emu.sql("d", "CREATE TABLE hist " + kCols + ", __deleted BOOLEAN NULL) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1");
  const std::string topic = "pg.d.hist";
  w.source.add_topic(topic, 1);
  w.source.produce(topic, 0, key(1), pg("hist", 'c', 10, R"({"id":1,"v":"a","big":"A"})"));
  w.source.produce(topic, 0, key(1), pg("hist", 'd', 20, ""));  // key only: nothing to append
  auto res = w.run(2);
  REQUIRE_FALSE(res.error);
  const std::string my = "my.d.hist";
  w.source.add_topic(my, 1);
  w.source.produce(my, 0, key(2), mysql("hist", 'c', "null", R"({"id":2,"v":"b","big":"B"})"));
  w.source.produce(my, 0, key(2), mysql("hist", 'd', R"({"id":2,"v":"b","big":"B"})", "null"));
  res = w.run(2);
  REQUIRE_FALSE(res.error);
  auto rows = w.emu.rows("d", "hist");
  std::sort(rows.begin(), rows.end());
  CHECK(rows == std::vector<std::string>{R"({"id":1,"v":"a","big":"A","__deleted":false})",
                                         R"({"id":2,"v":"b","big":"B","__deleted":false})",
                                         R"({"id":2,"v":"b","big":"B","__deleted":true})"});
  CHECK(w.metrics.skipped(pipeline::SkipReason::KeyOnlyDelete) == 1);
}
