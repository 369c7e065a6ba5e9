// PostgreSQL 15 -> Debezium 3.6 PostgreSQL connector on Kafka Connect 4.1
// with Apicurio's Avro converter -> Kafka, the converter registering its
// schemas in a real Apicurio Registry (Confluent-compatible API) -> cdc2doris
// with `decoding.format: avro` -> the Doris emulator.
//
// First what lands in Kafka: each record's key and value carry Confluent's
// framing (magic byte 0, a 4-byte big-endian schema id, Avro binary), the id
// resolves through /apis/ccompat/v7/schemas/ids/{id} to the Debezium key
// schema or envelope schema of the table, and the first bytes of the Avro
// body are what those schemas say. Then a daemon reads the topic with its
// schemas from the registry, and every row in Doris equals the source's
// (snapshot, streamed insert, update, delete; decimal, date, timestamp,
// boolean, double and nulls through Avro's types and Debezium's names).
#include <catch2/catch.hpp>

#include <algorithm>
#include <boost/json.hpp>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tests/avro/avro_encode.hpp"
#include "tests/sources/source_e2e.hpp"
#include "tools/doris_emulator/launcher.hpp"
#include "tests/support/kafka_connect.hpp"
#include "tests/support/postgres_server.hpp"
#include "tests/support/schema_registry.hpp"
#include "tools/fixtures/kafka_broker.hpp"

using namespace cdc2doris::test;
using cdc2doris::test::sources::compare_rows;
using cdc2doris::test::sources::Daemon;
using cdc2doris::test::sources::doris_ddl;
using cdc2doris::test::sources::end_offsets;
using cdc2doris::test::sources::split_lines;
using cdc2doris::test::sources::wait_committed;
using namespace std::chrono_literals;

namespace json = boost::json;

namespace {

const std::string kPrefix = "pga";
const std::string kTopic = kPrefix + ".public.orders";

// Snapshot rows 1..3, then row 4 streamed from the WAL; then an update of
// row 2 and the delete of row 3 (a delete and its tombstone).
constexpr int kSnapshotRows = 3;
constexpr int kRows = 4;
constexpr int kRecords = kRows + 3;

// The table's columns but the key: PostgreSQL type, Doris type, and the
// source-side SQL rendering a value as Doris holds it (docs/decoding.md).
struct Col {
  std::string name, pg, doris, expected;
};
const std::vector<Col> kCols = {
    {"note", "text", "STRING", "note"},
    {"qty", "bigint", "BIGINT", "qty"},
    {"price", "numeric(10,2)", "DECIMAL(10,2)", "price::text"},
    {"d", "date", "DATE", "to_char(d, 'YYYY-MM-DD')"},
    {"ts", "timestamp(6)", "DATETIME(6)", "to_char(ts, 'YYYY-MM-DD HH24:MI:SS.US')"},
    {"flag", "boolean", "BOOLEAN", "flag"},
    {"ratio", "double precision", "DOUBLE", "ratio"},
};

struct Framed {
  uint32_t schema_id = 0;
  std::string avro;  // the Avro binary after the 5-byte header
};

// Confluent's framing; the offset names the record in a failure.
Framed unframe(const std::optional<std::string>& bytes, const std::string& what) {
  INFO(what);
  REQUIRE(bytes.has_value());
  REQUIRE(bytes->size() > 5);
  CHECK(static_cast<unsigned char>((*bytes)[0]) == 0);  // magic byte
  Framed f;
  for (int i = 1; i <= 4; ++i) f.schema_id = (f.schema_id << 8) | static_cast<unsigned char>((*bytes)[i]);
  f.avro = bytes->substr(5);
  return f;
}

using avro_bin::varint;

json::object schema_by_id(const SchemaRegistry& registry, uint32_t id) {
  const auto r = registry.get("/apis/ccompat/v7/schemas/ids/" + std::to_string(id));
  INFO("GET schemas/ids/" << id << ": " << r.body);
  REQUIRE(r.status == 200);
  const auto schema = json::parse(json::parse(r.body).as_object().at("schema").as_string());
  REQUIRE(schema.is_object());
  return schema.as_object();
}

// A JSON string's text; anything else as JSON (so a failed check shows it).
std::string text(const json::value& v) { return v.is_string() ? std::string(v.as_string()) : json::serialize(v); }

std::vector<std::string> field_names(const json::object& record) {
  std::vector<std::string> names;
  for (const auto& f : record.at("fields").as_array()) names.emplace_back(f.as_object().at("name").as_string());
  return names;
}

const json::value& field_type(const json::object& record, const std::string& name) {
  for (const auto& f : record.at("fields").as_array())
    if (f.as_object().at("name").as_string() == name) return f.as_object().at("type");
  throw std::runtime_error("no field " + name + " in " + json::serialize(record));
}

}  // namespace

TEST_CASE("PostgreSQL via Debezium, Apicurio Avro converter, a real registry, cdc2doris with format avro: Doris equals the source",
          "[sources][postgres][avro]") {
  auto& broker = KafkaBroker::shared();
  // The three JVMs and PostgreSQL start side by side.
  SchemaRegistry registry;
  KafkaConnect connect(broker.bootstrap(), {KafkaConnect::avro_converter_plugin()});
  PostgresServer pg;
  pg.psql("postgres", "CREATE DATABASE src;");
  std::string create = "CREATE TABLE orders (id integer PRIMARY KEY";
  for (const auto& c : kCols) create += ", " + c.name + " " + c.pg;
  pg.psql("src", create +
                     ");\n"
                     "INSERT INTO orders SELECT g, 'note ' || g, g * 1000, g * 1.25 - 10, DATE '1969-12-30' + g * 9000, "
                     "TIMESTAMP '2024-01-02 03:04:05.123456' + g * INTERVAL '1 day 1.5 second', g % 2 = 0, g / 3.0 "
                     "FROM generate_series(1, " +
                     std::to_string(kSnapshotRows) + ") g;");
  registry.wait_ready();

  std::map<std::string, std::string> config{
      {"connector.class", "io.debezium.connector.postgresql.PostgresConnector"},
      {"tasks.max", "1"},
      {"topic.prefix", kPrefix},
      {"database.hostname", pg.host()},
      {"database.port", std::to_string(pg.port())},
      {"database.user", pg.user()},
      {"database.password", "unused"},
      {"database.dbname", "src"},
      {"plugin.name", "pgoutput"},
      {"slot.name", "slot_" + kPrefix},
      {"publication.name", "pub_" + kPrefix},
      {"publication.autocreate.mode", "filtered"},
      {"table.include.list", "public.orders"},
  };
  // Confluent's wire format from Apicurio's converter: the schema id in the
  // payload (not in headers), 4 bytes, and that id is the content id, which
  // is what the Confluent-compatible API calls a schema id.
  for (const std::string side : {"key", "value"}) {
    const std::string c = side + ".converter";
    config[c] = "io.apicurio.registry.utils.converter.AvroConverter";
    config[c + ".apicurio.registry.url"] = registry.apicurio_url();
    config[c + ".apicurio.registry.auto-register"] = "true";
    config[c + ".apicurio.registry.as-confluent"] = "true";
    config[c + ".apicurio.registry.use-id"] = "contentId";
    config[c + ".apicurio.registry.headers.enabled"] = "false";
  }
  connect.create_connector(kPrefix, config);
  connect.wait_running(kPrefix);

  // The topic exists once Debezium's first record reached it.
  auto wait_for_records = [&](int64_t n) {
    for (auto deadline = std::chrono::steady_clock::now() + 60s;;) {
      const auto ends = end_offsets(broker.bootstrap(), kPrefix + ".");
      const auto it = ends.find(kTopic + "[0]");
      if (it != ends.end() && it->second >= n) return;
      if (std::chrono::steady_clock::now() > deadline)
        FAIL(n << " records did not reach " << kTopic << ": " << connect.status(kPrefix) << "\n"
               << connect.log_tail());
      std::this_thread::sleep_for(250ms);
    }
  };
  // The snapshot is in Kafka, so the slot exists and row 4 comes from the WAL.
  wait_for_records(kSnapshotRows);
  pg.psql("src", "INSERT INTO orders (id, note, qty) VALUES (4, 'streamed', 4000);");
  wait_for_records(kRows);
  const auto records = consume_all(broker.bootstrap(), kTopic, kRows, 60s);
  INFO("connect log:\n" << connect.log_tail());
  REQUIRE(records.size() >= kRows);

  std::set<uint32_t> key_ids, value_ids;
  for (size_t i = 0; i < kRows; ++i) {
    const auto& r = records[i];
    const std::string where = kTopic + "/" + std::to_string(r.partition) + "@" + std::to_string(r.offset);
    const int id = static_cast<int>(i) + 1;
    const Framed key = unframe(r.key, where + " key");
    const Framed value = unframe(r.value, where + " value");
    key_ids.insert(key.schema_id);
    value_ids.insert(value.schema_id);
    INFO(where);
    // Key record {id: int}: just the id.
    CHECK(key.avro == varint(id));
    // Envelope: `before` null (union branch 0), `after` present (branch 1),
    // then the after row's first field, the id.
    REQUIRE(value.avro.size() > 2);
    CHECK(value.avro[0] == '\x00');
    CHECK(value.avro[1] == '\x02');
    CHECK(value.avro.substr(2, varint(id).size()) == varint(id));
  }
  // One key schema and one value schema for all four records.
  REQUIRE(key_ids.size() == 1);
  REQUIRE(value_ids.size() == 1);
  const uint32_t key_id = *key_ids.begin();
  const uint32_t value_id = *value_ids.begin();
  CHECK(key_id != value_id);

  const json::object key_schema = schema_by_id(registry, key_id);
  INFO("key schema: " << json::serialize(key_schema));
  CHECK(text(key_schema.at("type")) == "record");
  CHECK(text(key_schema.at("name")) == "Key");
  CHECK(text(key_schema.at("namespace")) == kTopic);
  CHECK(field_names(key_schema) == std::vector<std::string>{"id"});
  CHECK(text(field_type(key_schema, "id")) == "int");

  const json::object envelope = schema_by_id(registry, value_id);
  INFO("value schema: " << json::serialize(envelope));
  CHECK(text(envelope.at("type")) == "record");
  CHECK(text(envelope.at("name")) == "Envelope");
  CHECK(text(envelope.at("namespace")) == kTopic);
  const auto fields = field_names(envelope);
  REQUIRE(fields.size() >= 5);
  CHECK(fields[0] == "before");
  CHECK(fields[1] == "after");
  for (const std::string f : {"source", "op", "ts_ms"}) CHECK(std::count(fields.begin(), fields.end(), f) == 1);
  CHECK(text(field_type(envelope, "op")) == "string");
  // before: ["null", Value], the row record defined in place; after names it.
  const auto& before = field_type(envelope, "before").as_array();
  REQUIRE(before.size() == 2);
  CHECK(text(before[0]) == "null");
  const auto& row = before[1].as_object();
  CHECK(text(row.at("name")) == "Value");
  CHECK(text(row.at("connect.name")) == kTopic + ".Value");
  std::vector<std::string> columns{"id"};
  for (const auto& c : kCols) columns.push_back(c.name);
  CHECK(field_names(row) == columns);
  CHECK(text(field_type(row, "id")) == "int");
  const auto& after = field_type(envelope, "after").as_array();
  REQUIRE(after.size() == 2);
  CHECK(text(after[0]) == "null");
  // A name already defined, relative to the enclosing namespace (the topic).
  CHECK(text(after[1]) == "Value");
  const auto& source = field_type(envelope, "source").as_object();
  CHECK(text(source.at("name")) == "Source");
  CHECK(text(source.at("namespace")) == "io.debezium.connector.postgresql");

  // The converter registered both under Confluent's topic naming strategy,
  // and the latest version of each subject is the schema the records carry.
  for (const auto& [subject, id] : {std::pair{kTopic + "-key", key_id}, std::pair{kTopic + "-value", value_id}}) {
    const auto r = registry.get("/apis/ccompat/v7/subjects/" + subject + "/versions/latest");
    INFO(subject << ": " << r.body);
    REQUIRE(r.status == 200);
    CHECK(json::parse(r.body).as_object().at("id").to_number<int64_t>() == id);
  }

  // cdc2doris reads the topic with the schemas from the registry.
  pg.psql("src", "UPDATE orders SET note = 'updated', price = -0.01, ratio = NULL WHERE id = 2;\n"
                 "DELETE FROM orders WHERE id = 3;");
  wait_for_records(kRecords);
  Emulator emu(EmulatorOptions{});
  emu.sql("", "CREATE DATABASE avro");
  std::vector<std::pair<std::string, std::string>> doris_cols;
  for (const auto& c : kCols) doris_cols.emplace_back(c.name, c.doris);
  emu.sql("avro", doris_ddl("orders", {{"id", "INT"}}, doris_cols));
  Daemon daemon("pgavro", broker.bootstrap(), "^" + kPrefix + "\\\\..*", emu.fe(), "avro", "",
                "  format: avro\n  schema_registry:\n    url: \"" + registry.ccompat_url() + "\"\n");
  const std::string lag = wait_committed(emu, daemon, end_offsets(broker.bootstrap(), kPrefix + "."), 60s);
  INFO("daemon log:\n" << daemon.log_tail());
  REQUIRE(lag.empty());
  std::string obj = "'id', id";
  for (const auto& c : kCols) obj += ", '" + c.name + "', " + c.expected;
  const auto source_rows = split_lines(pg.psql("src", "SELECT json_build_object(" + obj + ") FROM orders;"));
  REQUIRE(source_rows.size() == kRows - 1);
  CHECK(compare_rows(source_rows, emu.rows("avro", "orders"), {"id"}) == "");
  connect.delete_connector(kPrefix);
}
