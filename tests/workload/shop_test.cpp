// The shop scenario: every generated record decoded by the real decoder
// (envelope auto, default options) and applied per key must give the model;
// the DDL must accept those rows in the Doris emulator.
#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <map>
#include <set>

#include "tools/doris_emulator/engine.hpp"
#include "tools/workload/shop.hpp"

using namespace cdc2doris;
using namespace cdc2doris::workload;

namespace {

// The integer value of top-level column `col` in a decoder row. A quote
// followed by `col":` cannot occur inside a JSON string (quotes are escaped).
int64_t column_int(const std::string& row, const std::string& col) {
  const std::string needle = "\"" + col + "\":";
  const auto p = row.find(needle);
  REQUIRE(p != std::string::npos);
  return std::stoll(row.substr(p + needle.size()));
}

struct Decoded {
  std::map<std::string, std::map<std::vector<int64_t>, std::string>> state;  // the UNIQUE KEY tables
  std::map<std::string, std::string> load_bodies;                           // every row, in order
  std::set<std::pair<std::string, char>> ops;                                 // (table, op)
  std::set<std::pair<std::string, bool>> envelopes;                           // (table, schema wrapper)
  size_t tombstones = 0, pk_headers = 0;
};

Decoded decode_all(const ShopGenerator& g, const std::vector<Record>& records) {
  decode::Decoder dec(decode::DecoderOptions{});  // envelope auto, UTC, no type hints
  decode::Change c;
  Decoded out;
  int64_t offset = 0;
  for (const Record& r : records) {
    decode::KafkaRecord k;
    k.topic = r.topic;
    k.partition = r.partition;
    k.offset = offset++;
    k.key = r.key;
    if (r.value) k.value = *r.value;
    for (const auto& [n, v] : r.headers) k.headers.emplace_back(n, v);
    out.pk_headers += r.headers.size();
    INFO(r.topic << " " << (r.value ? *r.value : std::string("<tombstone>")));
    auto err = dec.decode(k, c);
    if (err) FAIL(err->message());
    CHECK(r.topic == g.options().server + "." + r.table);
    CHECK(r.partition == partition_for(r.key, g.options().partitions));
    if (!r.value) {
      CHECK(c.kind == decode::Kind::Tombstone);
      ++out.tombstones;
      continue;
    }
    REQUIRE(c.kind == decode::Kind::Change);
    CHECK(c.op == r.op);
    CHECK(c.db + "." + c.table == r.table);
    CHECK(c.key_columns == g.key_columns(r.table));
    CHECK_FALSE(c.primary_key_changed);  // Debezium's form: d + tombstone + c
    out.ops.insert({r.table, c.op});
    out.envelopes.insert({r.table, r.value->rfind("{\"schema\":", 0) == 0});
    for (const auto& row : c.rows) {
      REQUIRE(row.partial_columns.empty());
      std::vector<int64_t> key;
      for (const auto& col : c.key_columns) key.push_back(column_int(row.json, col));
      if (row.is_delete()) {
        CHECK(out.state[r.table].erase(key) == 1);
      } else {
        out.state[r.table][key] = strip_delete_sign(row.json);
      }
      out.load_bodies[r.table] += row.json + "\n";
    }
  }
  return out;
}

}  // namespace

TEST_CASE("Shop: every record decodes (auto envelope, default options) to the model", "[workload][shop][roundtrip]") {
  for (uint64_t seed : {1, 2, 3}) {
    for (size_t n : {size_t{37}, size_t{1000}, size_t{6001}}) {  // cuts inside business events too
      INFO("seed " << seed << " records " << n);
      ShopOptions o;
      o.seed = seed;
      ShopGenerator g(o);
      auto records = g.generate(n);
      REQUIRE(g.records_emitted() == n);
      Decoded d = decode_all(g, records);
      for (const auto& [name, m] : g.expected()) {
        INFO(name);
        CHECK(d.state[name] == m.rows);
      }
      if (n < 6000) continue;
      for (const auto& t : g.tables()) {
        INFO(t);
        for (char op : {'c', 'u', 'd'}) CHECK(d.ops.count({t, op}) == 1);
        CHECK(g.expected().at(t).rows.size() > 10);
      }
      CHECK(d.ops.count({"shop.customers", 'r'}) == 1);
      CHECK(d.ops.count({"shop.products", 'r'}) == 1);
      // Mixed envelopes: catalogue tables plain, order tables with the schema wrapper.
      CHECK(d.envelopes == std::set<std::pair<std::string, bool>>{
                               {"shop.customers", false}, {"shop.products", false}, {"shop.orders", true}, {"shop.order_items", true}});
      CHECK(d.tombstones == g.stats().tombstones);
      CHECK(g.stats().pk_changes > 5);
      CHECK(d.pk_headers == 2 * g.stats().pk_changes);
    }
  }
}

TEST_CASE("Shop: envelopes are configurable per table, schema tables get typed values", "[workload][shop][roundtrip]") {
  ShopOptions o;
  o.seed = 9;
  o.customers = Format::Schema;
  o.products = Format::Schema;
  o.orders = Format::Plain;
  o.order_items = Format::Plain;
  ShopGenerator g(o);
  Decoded d = decode_all(g, g.generate_steps(800));
  CHECK(g.at_step_boundary());
  for (const auto& [name, m] : g.expected()) {
    INFO(name);
    CHECK(d.state[name] == m.rows);
  }
  const std::string& cust = g.expected().at("shop.customers").rows.begin()->second;
  CHECK(cust.find("\"created_at\":\"2024-03-01 ") != std::string::npos);  // ZonedTimestamp -> UTC DATETIME
  CHECK(g.create_table_sql("customers").find("`created_at` DATETIME NOT NULL") != std::string::npos);
  CHECK(g.create_table_sql("orders").find("`total` STRING NOT NULL COMMENT 'DECIMAL(12,2): Connect Decimal bytes, base64'") !=
        std::string::npos);
  ShopOptions bad;
  bad.customers = Format::Flattened;
  CHECK_THROWS_AS(ShopGenerator(bad), std::invalid_argument);
}

TEST_CASE("Shop: value shapes per envelope", "[workload][shop]") {
  ShopGenerator g;
  g.generate_steps(400);
  const auto& m = g.expected();
  // Plain: raw Connect values (base64 decimal, epoch micros, ISO timestamp, epoch days).
  const std::string& product = m.at("shop.products").rows.begin()->second;
  CHECK(product.rfind("{\"id\":", 0) == 0);
  CHECK(product.find("\"price\":\"") != std::string::npos);
  CHECK(product.find("\"updated_at\":17") != std::string::npos);
  const std::string& customer = m.at("shop.customers").rows.begin()->second;
  CHECK(customer.find("\"created_at\":\"2024-03-01T") != std::string::npos);
  // Schema: typed values.
  bool shipped = false;
  for (const auto& [k, row] : m.at("shop.orders").rows) {
    CHECK(row.find("\"placed_at\":\"2024-") != std::string::npos);
    if (row.find("\"shipped_on\":\"2024-") != std::string::npos) shipped = true;
  }
  CHECK(shipped);
  for (const auto& [k, row] : m.at("shop.order_items").rows) {
    REQUIRE(k.size() == 2);
    CHECK(row.rfind("{\"order_id\":" + std::to_string(k[0]) + ",\"line_no\":" + std::to_string(k[1]) + ",", 0) == 0);
    const auto p = row.find("\"unit_price\":\"");
    REQUIRE(p != std::string::npos);
    const auto dot = row.find('.', p);
    CHECK(row.compare(dot + 3, 2, "\"}") == 0);  // two decimals
  }
  CHECK(g.key_json("order_items", {3, 1}) == R"({"order_id":3,"line_no":1})");
  CHECK(g.key_columns("shop.order_items") == std::vector<std::string>{"order_id", "line_no"});
}

TEST_CASE("Shop: deterministic per seed", "[workload][shop]") {
  ShopOptions o;
  o.seed = 11;
  ShopGenerator a(o), b(o);
  auto ra = a.generate(3000);
  auto rb = b.generate(3000);
  for (size_t i = 0; i < ra.size(); ++i) {
    CHECK(ra[i].topic == rb[i].topic);
    CHECK(ra[i].partition == rb[i].partition);
    CHECK(ra[i].key == rb[i].key);
    CHECK(ra[i].value == rb[i].value);
    CHECK(ra[i].headers == rb[i].headers);
  }
  CHECK(a.expected().at("shop.orders").rows == b.expected().at("shop.orders").rows);
  o.seed = 12;
  ShopGenerator c(o);
  CHECK(c.generate(3000).back().value != ra.back().value);
}

TEST_CASE("Shop: a primary-key change is delete + tombstone + create with Debezium's headers", "[workload][shop]") {
  ShopGenerator g;
  std::set<std::string> tables;
  auto records = g.generate(20000);
  for (size_t i = 0; i + 2 < records.size(); ++i) {
    const Record& r = records[i];
    if (r.headers.empty()) continue;
    REQUIRE(r.headers.size() == 1);
    CHECK(r.headers[0].first == "__debezium.newkey");
    CHECK(r.op == 'd');
    CHECK_FALSE(records[i + 1].value);
    CHECK(records[i + 1].key == r.key);
    const Record& c = records[i + 2];
    CHECK(c.op == 'c');
    REQUIRE(c.headers.size() == 1);
    CHECK(c.headers[0].first == "__debezium.oldkey");
    CHECK(c.key.find(r.headers[0].second) != std::string::npos);
    CHECK(r.key.find(c.headers[0].second) != std::string::npos);
    tables.insert(r.table);
    i += 2;
  }
  CHECK(tables == std::set<std::string>{"shop.customers", "shop.order_items"});
}

TEST_CASE("Shop: the exact DDL", "[workload][shop][ddl]") {
  ShopGenerator g;
  CHECK(g.tables() == std::vector<std::string>{"shop.customers", "shop.products", "shop.orders", "shop.order_items"});
  CHECK(g.create_table_sql("customers") ==
        "CREATE TABLE IF NOT EXISTS `shop`.`customers` (\n"
        "  `id` BIGINT NOT NULL,\n"
        "  `name` VARCHAR(255) NULL,\n"
        "  `email` VARCHAR(255) NULL,\n"
        "  `created_at` STRING NOT NULL COMMENT 'TIMESTAMP: ISO-8601 UTC text',\n"
        "  `loyalty_points` INT NOT NULL,\n"
        "  `birth_date` INT NULL COMMENT 'DATE: days since 1970-01-01'\n"
        ") UNIQUE KEY(`id`)\nDISTRIBUTED BY HASH(`id`) BUCKETS 1\nPROPERTIES (\"replication_num\" = \"1\");");
  CHECK(g.create_table_sql("shop.order_items") ==
        "CREATE TABLE IF NOT EXISTS `shop`.`order_items` (\n"
        "  `order_id` BIGINT NOT NULL,\n"
        "  `line_no` INT NOT NULL,\n"
        "  `product_id` BIGINT NOT NULL,\n"
        "  `quantity` INT NOT NULL,\n"
        "  `unit_price` DECIMAL(10,2) NOT NULL\n"
        ") UNIQUE KEY(`order_id`, `line_no`)\nDISTRIBUTED BY HASH(`order_id`, `line_no`) BUCKETS 1\n"
        "PROPERTIES (\"replication_num\" = \"1\");");
  CHECK(g.create_table_sql("orders", true).find("DUPLICATE KEY(`id`)") != std::string::npos);
  CHECK_THROWS_AS(g.create_table_sql("nope"), std::invalid_argument);
}

TEST_CASE("Shop: the DDL takes the decoded rows in the Doris emulator, and the result equals the model",
          "[workload][shop][ddl][emulator]") {
  ShopOptions o;
  o.seed = 5;
  ShopGenerator g(o);
  auto records = g.generate(5000);
  Decoded d = decode_all(g, records);

  emu::Engine e(emu::Config{});
  e.recover();
  e.execute_sql("", "CREATE DATABASE shop");
  e.execute_sql("", "CREATE DATABASE ref");
  auto load = [&](const std::string& db, const std::string& table, const std::string& body) {
    emu::LoadRequest r;
    r.db = db;
    r.table = table;
    r.headers = {{"format", "json"},
                 {"read_json_by_line", "true"},
                 {"hidden_columns", "__DORIS_DELETE_SIGN__"},
                 {"strict_mode", "true"},
                 {"max_filter_ratio", "0"}};
    r.authorization = "Basic cm9vdDo=";  // root:
    r.content_length = static_cast<int64_t>(body.size());
    emu::Reply early;
    auto l = e.start_load(r, &early);
    REQUIRE(l);
    l->feed(body.data(), body.size());
    auto reply = boost::json::parse(l->finish().body).as_object();
    INFO(boost::json::serialize(reply));
    CHECK(reply.at("Status").as_string() == "Success");
    CHECK(reply.at("NumberFilteredRows").as_int64() == 0);
  };
  for (const auto& t : g.tables()) {
    const std::string table = t.substr(t.find('.') + 1);
    INFO(t);
    const std::string ddl = g.create_table_sql(table);
    e.execute_sql("shop", ddl);
    std::string ref_ddl = ddl;
    ref_ddl.replace(ref_ddl.find("`shop`."), 7, "`ref`.");
    e.execute_sql("ref", ref_ddl);
    // The change stream as the pipeline loads it (deletes included) ...
    load("shop", table, d.load_bodies[t]);
    // ... and the model's final state.
    std::string body;
    for (const auto& [k, row] : g.expected().at(t).rows) body += row + "\n";
    load("ref", table, body);
    auto got = e.checksum("shop", table);
    auto want = e.checksum("ref", table);
    REQUIRE(got);
    REQUIRE(want);
    CHECK(got->second == static_cast<int64_t>(g.expected().at(t).rows.size()));
    CHECK(*got == *want);
  }
}
