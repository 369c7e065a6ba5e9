// routing.tables.<target> settings that the decoder applies (key_columns,
// sequence_from_source_position) are keyed by the TARGET table; records name
// their source. With a target template they must still apply (issue 12).
#include <catch2/catch.hpp>

#include "config/config.hpp"
#include "core/pipeline/table_routing.hpp"

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

// The error a configuration with these lines under `routing:` is refused
// with ("" if it is accepted), from file t.yaml.
std::string routing_error(const std::string& routing) {
  const std::string yaml = "kafka: {bootstrap_servers: k, topics: [t]}\ndoris: {fe: [x]}\nrouting:\n" + routing;
  std::map<std::string, std::string> env;
  try {
    config::load_string(yaml, "t.yaml", &env);
  } catch (const config::ConfigError& e) {
    return std::string(e.what());
  }
  return std::string();
}

// Decodes as the pipeline does: identify, route once, convert with the
// target's settings.
struct RoutedDecoder {
  decode::Decoder dec;
  pipeline::TableRouting routing;
  RoutedDecoder(const config::Config& cfg, pipeline::Router& router) : dec(cfg.decoding), routing(router) {}
  std::optional<decode::DecodeError> decode(const decode::KafkaRecord& r, decode::Change& ch) {
    const pipeline::RoutedTable* routed = nullptr;
    return pipeline::decode_routed(dec, routing, r, ch, routed);
  }
};

}  // namespace

TEST_CASE("Per-table decoding settings apply by target table under a target template", "[config][routing][issue12]") {
  std::map<std::string, std::string> env;
  const auto cfg = config::load_string(kConfig, "t.yaml", &env);
  auto router = config::make_router(cfg);
  RoutedDecoder dec(cfg, *router);
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
  decode::Change ch;
  ch.db = "shop";
  ch.table = "orders";
  pipeline::TableRouting routing(*router);
  const pipeline::RoutedTable& routed = routing.route(ch, false);
  REQUIRE(routed.target != nullptr);
  REQUIRE(routed.context.options != nullptr);
  const decode::TableOptions& o = *routed.context.options;
  CHECK(o.key_columns.empty());
  CHECK_FALSE(o.extra_columns);
  CHECK_FALSE(o.deletes);
  CHECK_FALSE(o.transforms);
}

TEST_CASE("Delete modes: routing default and per target table", "[config][routing][delete_modes]") {
  const char* yaml = R"Y(
kafka: {bootstrap_servers: "k:9092", topics: [t]}
doris: {fe: ["127.0.0.1:8030"]}
routing:
  target: "ods.{table}"
  delete_mode: ignore
  soft_delete_column: is_deleted
  tables:
    ods.orders:
      delete_mode: soft
      deleted_at_column: deleted_at
    ods.items:
      delete_mode: hard
)Y";
  std::map<std::string, std::string> env;
  const auto cfg = config::load_string(yaml, "t.yaml", &env);
  CHECK(cfg.decoding.deletes.mode == decode::DeleteMode::Ignore);
  CHECK(cfg.decoding.deletes.soft_column == "is_deleted");
  auto router = config::make_router(cfg);
  const auto orders = router->settings({"ods", "orders"}).deletes;
  REQUIRE(orders);
  CHECK(*orders == decode::DeleteOptions{decode::DeleteMode::Soft, "is_deleted", "deleted_at"});
  CHECK_FALSE(router->settings({"ods", "other"}).deletes);  // the decoder's default

  RoutedDecoder dec(cfg, *router);
  decode::Change ch;
  decode::KafkaRecord r;
  const std::string key = R"({"id":9})";
  r.key = key;
  auto del = [&](const std::string& table) {
    r.topic = "db.shop." + table;
    const std::string v = mysql_record(table, "d", R"({"id":9,"qty":1})", "null");
    r.value = v;
    REQUIRE_FALSE(dec.decode(r, ch));
  };
  del("orders");
  REQUIRE(ch.rows.size() == 1);
  CHECK(ch.rows[0].json == R"({"id":9,"qty":1,"is_deleted":true,"deleted_at":"1970-01-01 00:00:00.001000","__DORIS_DELETE_SIGN__":0})");
  del("items");
  REQUIRE(ch.rows.size() == 1);
  CHECK(ch.rows[0].json == R"({"id":9,"qty":1,"__DORIS_DELETE_SIGN__":1})");
  del("other");
  CHECK(ch.rows.empty());
  CHECK(ch.deletes_ignored == 1);
}

TEST_CASE("Delete modes: bad values are refused with their key path", "[config][routing][delete_modes]") {
  CHECK_THAT(routing_error("  delete_mode: archive\n"), Catch::Contains("routing.delete_mode"));
  CHECK_THAT(routing_error("  soft_delete_column: \"\"\n"), Catch::Contains("routing.soft_delete_column"));
  CHECK_THAT(routing_error("  deleted_at_column: __deleted\n"), Catch::Contains("must differ"));
  CHECK_THAT(routing_error("  tables:\n    a.b: {delete_mode: gone}\n"), Catch::Contains("routing.tables.a.b.delete_mode"));
  CHECK_THAT(routing_error("  tables:\n    a.b: {soft_delete_column: __DORIS_DELETE_SIGN__}\n"),
             Catch::Contains("hidden column"));
  CHECK(routing_error("  delete_mode: soft\n  deleted_at_column: gone_at\n").empty());
}

TEST_CASE("Column transforms: routing defaults and per target table reach the decoder", "[config][routing][transforms]") {
  const char* yaml = R"Y(
kafka: {bootstrap_servers: "k:9092", topics: [t]}
doris: {fe: ["127.0.0.1:8030"]}
routing:
  target: "ods.{table}"
  column_case: lower
  computed_columns: {src_table: source.table}
  tables:
    ods.orders:
      rename: {QTY: quantity}
      exclude: [Secret]
      filter: "QTY > 0 AND @op != 'r'"
      computed_columns: {kafka_offset: offset}
)Y";
  std::map<std::string, std::string> env;
  const auto cfg = config::load_string(yaml, "t.yaml", &env);
  CHECK(cfg.decoding.transforms.name_case == decode::NameCase::Lower);
  auto router = config::make_router(cfg);
  const auto orders = router->settings({"ods", "orders"}).transforms;
  REQUIRE(orders);
  CHECK(orders->rename.at("QTY") == "quantity");
  CHECK(orders->name_case == decode::NameCase::Lower);
  CHECK(orders->computed.size() == 2);
  CHECK_FALSE(router->settings({"ods", "other"}).transforms);  // the decoder's default

  RoutedDecoder dec(cfg, *router);
  decode::Change ch;
  decode::KafkaRecord r;
  const std::string key = R"({"ID":9})";
  r.key = key;
  r.offset = 5;
  auto create = [&](const std::string& table, const std::string& after) {
    r.topic = "db.shop." + table;
    const std::string v = mysql_record(table, "c", "null", after);
    r.value = v;
    REQUIRE_FALSE(dec.decode(r, ch));
  };
  create("orders", R"({"ID":9,"QTY":2,"Secret":"s"})");
  REQUIRE(ch.rows.size() == 1);
  CHECK(ch.rows[0].json == R"({"id":9,"quantity":2,"src_table":"orders","kafka_offset":5,"__DORIS_DELETE_SIGN__":0})");
  create("orders", R"({"ID":9,"QTY":0,"Secret":"s"})");
  CHECK(ch.rows.empty());
  CHECK(ch.rows_filtered == 1);
  create("other", R"({"ID":9,"QTY":0,"Secret":"s"})");
  REQUIRE(ch.rows.size() == 1);
  CHECK(ch.rows[0].json == R"({"id":9,"qty":0,"secret":"s","src_table":"other","__DORIS_DELETE_SIGN__":0})");
}

TEST_CASE("Column transforms: a filter's syntax error names file:line:col", "[config][routing][transforms]") {
  // Line 6 of the file; the value starts at column 15, and the error is 5 characters into it.
  CHECK_THAT(routing_error("  tables:\n    a.b:\n      filter: qty == 1\n"),
             Catch::StartsWith("t.yaml:6:20: routing.tables.a.b.filter: invalid filter: expected a value"));
  CHECK_THAT(routing_error("  tables:\n    a.b:\n      filter: \"qty == 1\"\n"),
             Catch::StartsWith("t.yaml:6:21: routing.tables.a.b.filter: invalid filter: expected a value"));
  // Block scalars, literal and folded: the place on the expression's second line.
  CHECK_THAT(routing_error("  tables:\n    a.b:\n      filter: |\n        a = 1 AND\n        b >> 2\n"),
             Catch::StartsWith("t.yaml:8:12: routing.tables.a.b.filter: invalid filter: expected a value"));
  CHECK_THAT(routing_error("  tables:\n    a.b:\n      filter: >-\n        a = 1 AND\n        b >> 2\n"),
             Catch::StartsWith("t.yaml:8:12: routing.tables.a.b.filter: invalid filter: expected a value"));
  // A plain scalar folded over two lines, and one in a flow map.
  CHECK_THAT(routing_error("  tables:\n    a.b:\n      filter: a = 1 AND\n        b >> 2\n"),
             Catch::StartsWith("t.yaml:7:12: routing.tables.a.b.filter: invalid filter"));
  CHECK_THAT(routing_error("  tables:\n    a.b: {filter: \"a = 'x' OR b IN 3\"}\n"),
             Catch::StartsWith("t.yaml:5:36: routing.tables.a.b.filter: invalid filter: expected '(' opening the IN list"));
  CHECK_THAT(routing_error("  tables:\n    a.b: {computed_columns: {x: nonsense}}\n"),
             Catch::Contains("routing.tables.a.b.computed_columns.x: expected one of op, source_ts"));
  CHECK_THAT(routing_error("  column_case: title\n"), Catch::Contains("routing.column_case"));
  CHECK_THAT(routing_error("  tables:\n    a.b: {key_columns: [id], exclude: [id]}\n"),
             Catch::Contains("'id' is a key column"));
  CHECK_THAT(routing_error("  tables:\n    a.b: {rename: {x: c, y: C}}\n"), Catch::Contains("both become Doris column"));
  CHECK_THAT(routing_error("  tables:\n    a.b: {rename: {x: __DORIS_DELETE_SIGN__}}\n"), Catch::Contains("hidden column"));
  CHECK(routing_error("  tables:\n    a.b: {filter: \"a IS NULL OR b ~ '^x'\"}\n").empty());
}

TEST_CASE("Routing rules: a rule's delete mode and transforms apply to every table it routes to, under "
          "routing.tables",
          "[config][routing][rules]") {
  // shop.orders_eu and shop.orders_us -> ods.orders by one rule, shop.returns_eu -> ods.returns by the same
  // rule with a routing.tables entry over it; shop.items by the target template: the routing.* defaults.
  const char* yaml = R"Y(
kafka: {bootstrap_servers: "k:9092", topics: [t]}
doris: {fe: ["127.0.0.1:8030"]}
routing:
  target: "ods.{table}"
  delete_mode: hard
  column_case: upper
  rules:
    - match: 'shop\.(orders|returns)_.*'
      target: "ods.$1"
      delete_mode: soft
      deleted_at_column: gone_at
      rename: {QTY: quantity}
      exclude: [Secret]
      column_case: lower
      filter: "QTY > 0"
  tables:
    ods.returns:
      delete_mode: ignore
      filter: "QTY > 5"
)Y";
  std::map<std::string, std::string> env;
  const auto cfg = config::load_string(yaml, "t.yaml", &env);
  REQUIRE(cfg.rules.size() == 1);
  CHECK(cfg.rules[0].row.rename.at("QTY") == "quantity");
  auto router = config::make_router(cfg);
  RoutedDecoder dec(cfg, *router);
  decode::Change ch;
  decode::KafkaRecord r;
  const std::string key = R"({"ID":9})";
  r.key = key;
  auto decode = [&](const std::string& table, const std::string& op, const std::string& before, const std::string& after) {
    r.topic = "db.shop." + table;
    const std::string v = mysql_record(table, op, before, after);
    r.value = v;
    REQUIRE_FALSE(dec.decode(r, ch));
  };
  const std::string row = R"({"ID":9,"QTY":2,"Secret":"s"})";
  for (const char* table : {"orders_eu", "orders_us"}) {
    INFO(table);
    decode(table, "c", "null", row);  // the rule's rename, exclude, case and filter
    REQUIRE(ch.rows.size() == 1);
    CHECK(ch.rows[0].json == R"({"id":9,"quantity":2,"__deleted":false,"gone_at":null,"__DORIS_DELETE_SIGN__":0})");
    decode(table, "c", "null", R"({"ID":9,"QTY":0,"Secret":"s"})");
    CHECK(ch.rows.empty());
    CHECK(ch.rows_filtered == 1);
    decode(table, "d", row, "null");  // the rule's soft delete
    REQUIRE(ch.rows.size() == 1);
    CHECK(ch.rows[0].json ==
          R"({"id":9,"quantity":2,"__deleted":true,"gone_at":"1970-01-01 00:00:00.001000","__DORIS_DELETE_SIGN__":0})");
  }
  auto orders = router->settings({"ods", "orders"});
  REQUIRE(orders.deletes);
  CHECK(*orders.deletes == decode::DeleteOptions{decode::DeleteMode::Soft, "__deleted", "gone_at"});

  // ods.returns: routing.tables' delete mode and filter over the rule's; the rule's other transforms stay.
  decode("returns_eu", "c", "null", row);
  CHECK(ch.rows.empty());
  CHECK(ch.rows_filtered == 1);
  decode("returns_eu", "c", "null", R"({"ID":9,"QTY":6,"Secret":"s"})");
  REQUIRE(ch.rows.size() == 1);
  CHECK(ch.rows[0].json == R"({"id":9,"quantity":6,"__DORIS_DELETE_SIGN__":0})");
  decode("returns_eu", "d", row, "null");
  CHECK(ch.rows.empty());
  CHECK(ch.deletes_ignored == 1);

  // Not routed by the rule: the routing.* defaults.
  decode("items", "c", "null", row);
  REQUIRE(ch.rows.size() == 1);
  CHECK(ch.rows[0].json == R"({"ID":9,"QTY":2,"SECRET":"s","__DORIS_DELETE_SIGN__":0})");
  decode("items", "d", row, "null");
  REQUIRE(ch.rows.size() == 1);
  CHECK(ch.rows[0].json == R"({"ID":9,"QTY":2,"SECRET":"s","__DORIS_DELETE_SIGN__":1})");
  CHECK_FALSE(router->settings({"ods", "items"}).deletes);
}

TEST_CASE("Routing rules: a fixed target has its rule's settings before any record", "[config][routing][rules]") {
  std::map<std::string, std::string> env;
  const auto cfg = config::load_string(R"Y(
kafka: {bootstrap_servers: "k:9092", topics: [t]}
doris: {fe: ["127.0.0.1:8030"]}
routing:
  rules:
    - {match: 'shop\..*', target: "ods.all", delete_mode: ignore}
)Y", "t.yaml", &env);
  auto router = config::make_router(cfg);
  const auto all = router->settings({"ods", "all"});
  REQUIRE(all.deletes);
  CHECK(all.deletes->mode == decode::DeleteMode::Ignore);
}

TEST_CASE("Routing rules: contradicting settings of a rule are refused with their place", "[config][routing][rules]") {
  CHECK_THAT(routing_error("  rules:\n    - {match: a, target: b.c, rename: {x: y}, exclude: [x]}\n"),
             Catch::Contains("routing.rules[0].exclude: 'x' is also renamed"));
  CHECK_THAT(routing_error("  rules:\n    - {match: a, target: b.c, soft_delete_column: f, deleted_at_column: f}\n"),
             Catch::Contains("routing.rules[0].deleted_at_column: must differ"));
  CHECK_THAT(routing_error("  rules:\n    - {match: a, target: b.c, delete_mode: archive}\n"),
             Catch::Contains("routing.rules[0].delete_mode"));
  CHECK_THAT(routing_error("  rules:\n    - {match: a, target: b.c, filter: \"x >\"}\n"),
             Catch::StartsWith("t.yaml:5:"));
}
