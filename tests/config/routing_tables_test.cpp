// routing.tables.<target> settings that the decoder applies (key_columns,
// sequence_from_source_position) are keyed by the TARGET table; records name
// their source. With a target template they must still apply (issue 12).
#include <catch2/catch.hpp>

#include "config/config.hpp"

using namespace cdc2doris;

namespace {

const char* kConfig = R"Y(
kafka: {bootstrap_servers: "k:9092", topics: [t]}
doris: {fe: ["127.0.0.1:8030"]}
routing:
  target: "ods.{table}"
  tables:
    ods.orders:
      sequence_col: seq
      sequence_from_source_position: true
      key_columns: [order_no]
decoding:
  extra_columns: {op: "_op"}
)Y";

std::string mysql_record(const std::string& table, const std::string& op, const std::string& before, const std::string& after) {
  return R"({"before":)" + before + R"(,"after":)" + after +
         R"(,"source":{"connector":"mysql","db":"shop","table":")" + table +
         R"(","ts_ms":1,"file":"mysql-bin.000003","pos":154,"row":0},"op":")" + op + R"("})";
}

}  // namespace

TEST_CASE("Per-table decoding settings apply by target table under a target template", "[config][routing][issue12]") {
  std::map<std::string, std::string> env;
  const auto cfg = config::load_string(kConfig, "t.yaml", &env);
  auto router = config::make_router(cfg);
  decode::Decoder dec(pipeline::with_target_table_options(cfg.decoding, *router));
  decode::Change ch;

  // shop.orders -> ods.orders: its key columns and the sequence column.
  decode::KafkaRecord r;
  r.topic = "db.shop.orders";
  const std::string key = R"({"id":9})";  // the Kafka key is not the table's business key here
  r.key = key;
  const std::string update = mysql_record("orders", "u", R"({"id":9,"order_no":"A-1","qty":1})", R"({"id":9,"order_no":"A-2","qty":2})");
  r.value = update;
  auto err = dec.decode(r, ch);
  REQUIRE_FALSE(err);
  CHECK(ch.key_columns == std::vector<std::string>{"order_no"});
  // order_no changed: a key change (delete of A-1, then A-2), each with the sequence.
  CHECK(ch.primary_key_changed);
  const std::string seq = std::to_string((int64_t{3} << 43) | (int64_t{154} << 11));
  REQUIRE(ch.rows.size() == 2);
  CHECK(ch.rows[0].json == R"({"id":9,"order_no":"A-1","qty":1,"_op":"u","seq":)" + seq + R"(,"__DORIS_DELETE_SIGN__":1})");
  CHECK(ch.rows[1].json == R"({"id":9,"order_no":"A-2","qty":2,"_op":"u","seq":)" + seq + R"(,"__DORIS_DELETE_SIGN__":0})");

  // shop.items -> ods.items has no settings: the Kafka key's fields, no sequence.
  r.topic = "db.shop.items";
  const std::string insert = mysql_record("items", "c", "null", R"({"id":9,"name":"x"})");
  r.value = insert;
  err = dec.decode(r, ch);
  REQUIRE_FALSE(err);
  CHECK(ch.key_columns == std::vector<std::string>{"id"});
  CHECK(ch.rows.at(0).json == R"({"id":9,"name":"x","_op":"c","__DORIS_DELETE_SIGN__":0})");

  // And back: the answer follows the record's table, not the previous one.
  r.topic = "db.shop.orders";
  r.value = update;
  REQUIRE_FALSE(dec.decode(r, ch));
  CHECK(ch.key_columns == std::vector<std::string>{"order_no"});
}

TEST_CASE("Without per-table decoding settings the decoder options are left alone", "[config][routing]") {
  std::map<std::string, std::string> env;
  const auto cfg = config::load_string(R"(
kafka: {bootstrap_servers: "k:9092", topics: [t]}
doris: {fe: ["127.0.0.1:8030"]}
routing: {tables: {ods.orders: {key_model: unique}}}
)", "t.yaml", &env);
  auto router = config::make_router(cfg);
  CHECK_FALSE(pipeline::with_target_table_options(cfg.decoding, *router).table_options);
}
