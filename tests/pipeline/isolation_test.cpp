// Rows Doris still refuses after the row check (issue 33 item 4): the
// pipeline against the Doris emulator. A load Doris refuses for its data
// isolates the table: the range is read again, the records Doris refuses
// are found by halving under the load's own label, they go to the bad-record
// policy with Doris' reason, and every other row loads exactly once — also
// when the epoch is replayed after its pre-commits expired.
#include <catch2/catch.hpp>

#include <boost/json.hpp>

#include <map>
#include <set>

#include "tests/pipeline/ddl_world.hpp"
#include "tests/pipeline/fakes.hpp"

using namespace cdc2doris;
using namespace cdc2doris::test::ddl;
using namespace std::chrono_literals;

namespace {

const std::vector<Field> kItem{{"id", kInt64}, {"qty", kString}};

// A word in an INT column: the row check leaves it to Doris, whose strict
// mode refuses the row (docs/decoding.md, "What Doris still rejects").
const std::set<int64_t> kRefused{5, 17, 18, 40};
constexpr int64_t kRecords = 40;

void items(World& w) {
  // DUPLICATE KEY: a row loaded twice would show.
  w.table("CREATE TABLE items (id BIGINT NOT NULL, qty INT NULL) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) "
          "BUCKETS 1");
  w.topic("items");
  w.set("items").schema_evolution = schema::Policy::Off;
  for (int64_t id = 1; id <= kRecords; ++id)
    w.produce("items", kItem, id,
              R"({"id":)" + std::to_string(id) + R"(,"qty":")" + (kRefused.count(id) ? "lots" : std::to_string(id)) +
                  "\"}");
}

std::vector<std::string> expected_rows() {
  std::vector<std::string> rows;
  for (int64_t id = 1; id <= kRecords; ++id)
    if (!kRefused.count(id)) rows.push_back(R"({"id":)" + std::to_string(id) + R"(,"qty":)" + std::to_string(id) + "}");
  return rows;
}

std::vector<std::string> rows_by_id(World& w) {
  auto rows = w.emu.rows("d", "items");
  std::sort(rows.begin(), rows.end(), [](const std::string& a, const std::string& b) {
    return boost::json::parse(a).at("id").as_int64() < boost::json::parse(b).at("id").as_int64();
  });
  return rows;
}

// Dead letters, epochs ending every 300 ms (an aborted epoch is read again at once).
pipeline::PipelineConfig dead_letter_config(World& w, test::FakeDlq& dlq) {
  w.dead_letters = &dlq;
  auto cfg = w.config();
  cfg.epoch_interval = 300ms;
  cfg.bad_record_policy = pipeline::BadRecordPolicy::DeadLetter;
  cfg.dead_letter_topic = "dlq";
  return cfg;
}

size_t open_txns(World& w) {
  size_t n = 0;
  const auto txns = boost::json::parse(w.emu.txns("d"));
  for (const auto& t : txns.at("txns").as_array()) {
    const auto& state = t.as_object().at("state").as_string();
    if (state == "PREPARE" || state == "PRECOMMITTED") ++n;
  }
  return n;
}

}  // namespace

TEST_CASE("isolation: records whose rows Doris refuses go to the dead-letter topic with its reason, every other "
          "row loads once",
          "[pipeline][isolation]") {
  World w;
  items(w);
  test::FakeDlq dlq;
  auto cfg = dead_letter_config(w, dlq);
  auto res = w.run_until([&] { return w.emu.rows("d", "items").size() == expected_rows().size(); }, cfg);
  REQUIRE_FALSE(res.error);
  CHECK(rows_by_id(w) == expected_rows());
  auto letters = dlq.letters();
  REQUIRE(letters.size() == kRefused.size());
  auto id = kRefused.begin();
  for (const auto& l : letters) {
    INFO(l.error);
    CHECK(l.source_topic == "pg.d.items");
    CHECK(l.offset == *id++ - 1);
    CHECK(l.error.rfind("pg.d.items/0@" + std::to_string(l.offset) + ": rejected_by_doris at table d.items: ", 0) == 0);
    CHECK(l.error.find("column_name[qty]") != std::string::npos);  // Doris' own reason
    REQUIRE(l.value);
    CHECK(l.value->find(R"("qty":"lots")") != std::string::npos);  // the original record
    CHECK(l.flushed);
  }
  CHECK(w.metrics.snapshot().bad_records.at("rejected_by_doris|dead_letter") == kRefused.size());
  CHECK(w.metrics.epochs_committed >= 1);
  CHECK(open_txns(w) == 0);  // every probe's txn aborted
}

// A refused record is dead-lettered once per reading of its range, but one
// whose letter may not have arrived (the flush failed) is sent again.
TEST_CASE("isolation: after a failed dead-letter flush the range is read again and every letter sent again",
          "[pipeline][isolation]") {
  World w;
  items(w);
  test::FakeDlq dlq;
  auto cfg = dead_letter_config(w, dlq);
  dlq.fail_next_flush(Error(Disposition::Retry, "dead-letter delivery failed"));
  auto res = w.run_until([&] { return w.emu.rows("d", "items").size() == expected_rows().size(); }, cfg);
  REQUIRE_FALSE(res.error);
  CHECK(rows_by_id(w) == expected_rows());
  std::map<int64_t, int> flushed;
  for (const auto& l : dlq.letters())
    if (l.flushed) ++flushed[l.offset];
  CHECK(flushed.size() == kRefused.size());
  for (int64_t id : kRefused) CHECK(flushed.count(id - 1) == 1);
  CHECK(dlq.flushes() >= 2);
  CHECK(open_txns(w) == 0);
}

TEST_CASE("isolation: under bad_records fail the daemon stops at Doris' refusal, naming it", "[pipeline][isolation]") {
  World w;
  items(w);
  auto cfg = w.config();
  cfg.epoch_interval = 300ms;
  auto res = w.run_until([] { return false; }, cfg);
  REQUIRE(res.error);
  INFO(res.error->message());
  CHECK(res.error->message().find("data quality") != std::string::npos);
  CHECK(res.error->message().find("column_name[qty]") != std::string::npos);
  CHECK(w.emu.rows("d", "items").empty());
  CHECK(open_txns(w) == 0);
}

TEST_CASE("isolation: an epoch replayed after its pre-commits expired isolates again, loads each row once and "
          "sends no dead letter twice",
          "[pipeline][isolation]") {
  World w;
  items(w);
  test::FakeDlq dlq;
  auto cfg = dead_letter_config(w, dlq);
  cfg.shutdown_deadline = 300ms;
  // Every commit fails until the stop: the epoch stays recorded, uncommitted.
  w.emu.fault(R"({"type":"fail_commit","count":100000})");
  auto res = w.run_until([&] { return w.store.latest().has_value(); }, cfg);
  REQUIRE(res.error);
  auto rec = w.store.latest();
  REQUIRE(rec);
  CHECK(rec->state == state::EpochState::Precommitted);
  CHECK(dlq.letters().size() == kRefused.size());
  w.emu.clear_faults();
  w.emu.fault(R"({"type":"expire_precommitted"})");

  cfg.shutdown_deadline = 20s;
  res = w.run_until([&] { return w.emu.rows("d", "items").size() >= expected_rows().size(); }, cfg);
  REQUIRE_FALSE(res.error);
  CHECK(w.metrics.epochs_replayed >= 1);
  CHECK(rows_by_id(w) == expected_rows());
  CHECK(dlq.letters().size() == kRefused.size());
  CHECK(open_txns(w) == 0);
}
