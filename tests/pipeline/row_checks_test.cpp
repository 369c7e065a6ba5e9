// Rows checked against their Doris columns before loading (issue 33 item 4,
// delivery.check_rows) through the pipeline into the Doris emulator: a value
// its column cannot take makes its record a bad record (dead letter, skip or
// stop, with topic/partition@offset, table, column, limit and the value's
// start) and every other row still loads; without the check Doris refuses
// the whole load (and tests/pipeline/isolation_test.cpp finds the record).
#include <catch2/catch.hpp>

#include <thread>

#include "tests/pipeline/ddl_world.hpp"
#include "tests/pipeline/fakes.hpp"

using namespace cdc2doris;
using namespace cdc2doris::test::ddl;
using namespace std::chrono_literals;

namespace {

const std::vector<Field> kOrder{{"id", kInt64}, {"name", kString}, {"price", kString}};

// schema_evolution off: a VARCHAR too short is not widened (the last test).
void orders_table(World& w, schema::Policy policy = schema::Policy::Off) {
  w.table("CREATE TABLE orders (id BIGINT NOT NULL, name VARCHAR(5) NULL, price DECIMAL(5,2) NULL) "
          "UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1");
  w.topic("orders");
  w.set("orders").schema_evolution = policy;
}

}  // namespace

TEST_CASE("row checks: values their Doris columns cannot take go to the dead-letter topic, every other row loads",
          "[pipeline][row_checks]") {
  World w;
  orders_table(w);
  test::FakeDlq dlq;
  w.dead_letters = &dlq;
  w.produce("orders", kOrder, 1, R"({"id":1,"name":"abc","price":"1.50"})");
  w.produce("orders", kOrder, 2, R"({"id":2,"name":"ab\u00e9cd","price":"2.00"})");  // 6 bytes
  w.produce("orders", kOrder, 3, R"({"id":3,"name":"c","price":"1000.5"})");
  w.produce("orders", kOrder, 4, R"({"id":4,"name":"fits5","price":"-999.99"})");
  auto cfg = w.config();
  cfg.bad_record_policy = pipeline::BadRecordPolicy::DeadLetter;
  cfg.dead_letter_topic = "dlq";
  auto res = w.run(4, cfg);
  REQUIRE_FALSE(res.error);
  CHECK(w.emu.rows("d", "orders") == std::vector<std::string>{R"({"id":1,"name":"abc","price":"1.50"})",
                                                               R"({"id":4,"name":"fits5","price":"-999.99"})"});
  auto letters = dlq.letters();
  REQUIRE(letters.size() == 2);
  CHECK(letters[0].source_topic == "pg.d.orders");
  CHECK(letters[0].offset == 1);
  CHECK(letters[0].error ==
        "pg.d.orders/0@1: does_not_fit at table d.orders column name: expected VARCHAR(5): at most 5 bytes, got 6 "
        "bytes: \"ab\xC3\xA9" "cd\"");
  CHECK(letters[1].offset == 2);
  CHECK(letters[1].error.find("column price: expected DECIMAL(5,2): at most 3 digits before the decimal point, got 4 "
                              "digits: \"1000.5\"") != std::string::npos);
  CHECK(letters[0].flushed);
  CHECK(w.metrics.snapshot().bad_records.at("does_not_fit|dead_letter") == 2);
}

TEST_CASE("row checks: under bad_records fail the daemon stops at the record, naming it", "[pipeline][row_checks]") {
  World w;
  orders_table(w);
  w.produce("orders", kOrder, 1, R"({"id":1,"name":"abc","price":"1.50"})");
  w.produce("orders", kOrder, 2, R"({"id":2,"name":"far too long","price":"2.00"})");
  auto res = w.run(2);
  REQUIRE(res.error);
  CHECK(res.error->message().find("pg.d.orders/0@1: does_not_fit at table d.orders column name: expected VARCHAR(5): "
                                  "at most 5 bytes, got 12 bytes: \"far too long\"") != std::string::npos);
  for (const auto& row : w.emu.rows("d", "orders")) CHECK(row.find("\"id\":2") == std::string::npos);
}

TEST_CASE("row checks: off - Doris refuses the load and under skip its refused record is found and skipped",
          "[pipeline][row_checks]") {
  World w;
  orders_table(w);
  w.produce("orders", kOrder, 1, R"({"id":1,"name":"abc","price":"1.50"})");
  w.produce("orders", kOrder, 2, R"({"id":2,"name":"far too long","price":"2.00"})");
  auto cfg = w.config();
  cfg.check_rows = false;
  SECTION("fail: the daemon stops, quoting Doris' error log") {
    auto res = w.run_until([] { return false; }, cfg);
    REQUIRE(res.error);
    INFO(res.error->message());
    CHECK(res.error->message().find("data quality") != std::string::npos);
    CHECK(res.error->message().find("too long than schema") != std::string::npos);
    CHECK(w.emu.rows("d", "orders").empty());
  }
  SECTION("skip: the table's rows are isolated, the refused record skipped with Doris' reason") {
    cfg.bad_record_policy = pipeline::BadRecordPolicy::Skip;
    cfg.epoch_interval = 300ms;
    auto res = w.run_until([&] { return !w.emu.rows("d", "orders").empty(); }, cfg);
    REQUIRE_FALSE(res.error);
    CHECK(w.emu.rows("d", "orders") == std::vector<std::string>{R"({"id":1,"name":"abc","price":"1.50"})"});
    CHECK(w.metrics.snapshot().bad_records.at("rejected_by_doris|skip") == 1);
  }
}

TEST_CASE("row checks: a column widened by hand is seen at the next violation, at most every 10 s",
          "[pipeline][row_checks]") {
  World w;
  orders_table(w);
  w.produce("orders", kOrder, 1, R"({"id":1,"name":"abc","price":"1.50"})");
  auto cfg = w.config();
  cfg.bad_record_policy = pipeline::BadRecordPolicy::Skip;
  // One run keeps the table's shape: the second record is checked against
  // the shape read for the first.
  pipeline::Dependencies deps{w.source, *w.client, w.store, *(w.router = std::make_unique<pipeline::ExplicitRouter>(
                                                                  std::map<std::string, pipeline::Target>{}, w.settings)),
                              w.metrics, nullptr};
  pipeline::Pipeline p(cfg, w.decoding, deps);
  std::optional<pipeline::RunResult> result;
  std::thread t([&] { result = p.run(); });
  auto consumed = [&](uint64_t n) {
    return w.source.wait_for([&] { return w.metrics.records_consumed.load() >= n; }, 30s);
  };
  REQUIRE(consumed(1));
  std::this_thread::sleep_for(500ms);  // counted as consumed before it is decoded and checked
  w.table("ALTER TABLE orders MODIFY COLUMN name VARCHAR(20) NULL");
  w.produce("orders", kOrder, 2, R"({"id":2,"name":"now it fits","price":"2.00"})");
  const auto skipped = [&] { return w.metrics.snapshot().bad_records.at("does_not_fit|skip"); };
  // Skipped: the shape was read less than 10 s ago.
  CHECK(w.source.wait_for([&] { return skipped() == 1; }, 30s));
  std::this_thread::sleep_for(10s);
  w.produce("orders", kOrder, 3, R"({"id":3,"name":"this fits too","price":"3.00"})");
  REQUIRE(consumed(3));
  p.request_stop();
  t.join();
  REQUIRE(result);
  CHECK_FALSE(result->error);
  CHECK(skipped() == 1);
  CHECK(w.emu.rows("d", "orders") == std::vector<std::string>{R"({"id":1,"name":"abc","price":"1.50"})",
                                                               R"({"id":3,"name":"this fits too","price":"3.00"})"});
}

TEST_CASE("row checks: a VARCHAR too short for a string widens between epochs where schema_evolution allows it",
          "[pipeline][row_checks]") {
  World w;
  orders_table(w, schema::Policy::Add);
  w.produce("orders", kOrder, 1, R"({"id":1,"name":"abc","price":"1.50"})");
  w.produce("orders", kOrder, 2, R"({"id":2,"name":"eleven char","price":"2.00"})");  // 11 bytes: VARCHAR(16)
  w.produce("orders", kOrder, 3, R"({"id":3,"name":"c","price":"1000.5"})");          // decimals do not widen
  w.produce("orders", kOrder, 4, R"({"id":4,"name":"fits in sixteen","price":"4.00"})");
  auto cfg = w.config();
  cfg.bad_record_policy = pipeline::BadRecordPolicy::Skip;
  auto res = w.run(4, cfg);
  REQUIRE_FALSE(res.error);
  CHECK(w.desc("orders") == std::vector<std::string>{"id BIGINT", "name VARCHAR(16)", "price DECIMAL(5,2)"});
  CHECK(w.ddl_count("orders", "modify") == 1);
  CHECK(w.emu.rows("d", "orders") == std::vector<std::string>{R"({"id":1,"name":"abc","price":"1.50"})",
                                                               R"({"id":2,"name":"eleven char","price":"2.00"})",
                                                               R"({"id":4,"name":"fits in sixteen","price":"4.00"})"});
  CHECK(w.metrics.snapshot().bad_records.at("does_not_fit|skip") == 1);
  // Beyond VARCHAR(65533): STRING, a schema-change job the daemon waits for
  // (record 6 is read once record 5 is loaded).
  w.produce("orders", kOrder, 5, R"({"id":5,"name":")" + std::string(70000, 'x') + R"(","price":"5.00"})");
  w.produce("orders", kOrder, 6, R"({"id":6,"name":"f","price":"6.00"})");
  res = w.run(2, cfg);
  REQUIRE_FALSE(res.error);
  CHECK(w.desc("orders")[1] == "name STRING");
  CHECK(w.emu.rows("d", "orders").size() == 5);
}
