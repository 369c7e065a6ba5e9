// Every record of the Debezium corpus (tests/decode/corpus/debezium, a copy of
// the project's shared corpus kept in the tree so a clone is self-contained)
// decodes as its MANIFEST says.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>

#include "core/decode/decoder.hpp"

using namespace cdc2doris::decode;

namespace {

const std::string kCorpus = std::string(CDC2DORIS_CORPUS_DIR) + "/";

std::vector<std::string> lines_of(const std::string& rel) {
  std::ifstream f(kCorpus + rel);
  REQUIRE(f.good());
  std::vector<std::string> out;
  for (std::string l; std::getline(f, l);) {
    if (!l.empty()) out.push_back(l);
  }
  return out;
}

struct Outcome {
  std::map<char, int> ops;
  std::map<DecodeErrorCode, int> errors;
  std::map<Kind, int> kinds;
  std::vector<Change> changes;
  std::vector<DecodeError> error_list;
};

Outcome decode_file(const std::string& rel, DecoderOptions o = {}, std::optional<std::string> key = std::nullopt) {
  Decoder d(std::move(o));
  Outcome out;
  int64_t offset = 0;
  for (const auto& line : lines_of(rel)) {
    KafkaRecord r;
    r.topic = "dbserver1.corpus.fallback_table";
    r.offset = offset++;
    r.value = line;
    if (key) r.key = *key;
    Change c;
    auto err = d.decode(r, c);
    if (err) {
      ++out.errors[err->code];
      out.error_list.push_back(*err);
      continue;
    }
    ++out.kinds[c.kind];
    if (c.kind == Kind::Change) {
      ++out.ops[c.op];
      CHECK_FALSE(c.table.empty());
      CHECK_FALSE(c.rows.empty());
      for (const auto& row : c.rows) {
        CHECK(row.json.front() == '{');
        CHECK(row.json.back() == '}');
        CHECK(row.json.find('\n') == std::string::npos);
      }
    }
    out.changes.push_back(std::move(c));
  }
  return out;
}

using Ops = std::map<char, int>;

}  // namespace

TEST_CASE("Corpus: ordinary envelopes decode to the MANIFEST's ops and tables", "[decode][corpus]") {
  struct F {
    const char* path;
    Ops ops;
    const char* table;
  };
  const std::vector<F> files = {
      {"apache__flink-cdc/debezium-data-schema-exclude.json.jsonl", {{'r', 1}, {'u', 1}}, "fallback_table"},
      {"apache__flink-cdc/debezium-data-schema-exclude-with-numeric-decimal.json.jsonl", {{'r', 1}, {'u', 1}}, "fallback_table"},
      {"apache__flink/debezium-data-schema-include.txt.jsonl", {{'c', 11}, {'u', 4}, {'d', 1}}, "products"},
      {"apache__flink/debezium-postgres-data-schema-include.txt.jsonl", {{'c', 2}, {'r', 9}, {'u', 4}, {'d', 1}}, "products"},
      {"apache__flink/debezium-postgres-data-schema-exclude.txt.jsonl", {{'c', 2}, {'r', 9}, {'u', 4}, {'d', 1}}, "products"},
      {"apache__paimon/table-schema-alltype__debezium-data-1.txt.jsonl", {{'r', 1}}, "all_types_table"},
      {"apache__paimon/table-schema-schemaevolution__debezium-data-1.txt.jsonl", {{'c', 1}}, "product"},
      {"apache__paimon/table-schema-schemaevolution__debezium-data-2.txt.jsonl", {{'c', 1}}, "product"},
      {"apache__paimon/table-schema-schemaevolution__debezium-data-3.txt.jsonl", {{'c', 1}}, "product"},
      {"apache__paimon/table-schema-schemaevolution__debezium-data-4.txt.jsonl", {{'c', 1}}, "product"},
      {"apache__paimon/table-schema-schemaevolution__debezium-data-5.txt.jsonl", {{'c', 1}}, "product"},
      {"apache__paimon/debezium-data-with-delete.txt.jsonl", {{'d', 1}}, "product"},
      {"apache__paimon/table-schemaevolution__debezium-data-3.txt.jsonl", {{'c', 2}, {'u', 1}, {'d', 1}}, "product"},
      {"apache__paimon/table-schema-include__debezium-data-1.txt.jsonl", {{'c', 1}}, "products"},
      {"apache__paimon/table-schema-computedcolumn__debezium-data-1.txt.jsonl", {{'c', 1}}, "product"},
      {"apache__paimon/table-nestedtype__debezium-data-1.txt.jsonl", {{'c', 1}}, "product"},
      {"apache__paimon/debezium-avro-data-1.txt.jsonl", {{'c', 2}}, "all_types_table"},
      {"memiiso__debezium-server-iceberg/serde-unnested-delete-val-withschema.json.jsonl", {{'d', 1}}, "customers"},
      {"memiiso__debezium-server-iceberg/serde-unnested-order-val-withschema.json.jsonl", {{'r', 1}}, "orders"},
      {"memiiso__debezium-server-iceberg/serde-update.json.jsonl", {{'u', 1}}, "customers"},
      {"memiiso__debezium-server-iceberg/serde-with-schema.json.jsonl", {{'c', 1}}, "customers"},
      {"debezium__debezium/serde-with-schema.json.jsonl", {{'c', 1}}, "customers"},
      {"debezium__debezium/serde-without-schema.json.jsonl", {{'c', 1}}, "customers"},
      {"debezium__debezium/serde-update.json.jsonl", {{'u', 1}}, "customers"},
      {"debezium__debezium/serde-unknown-property.json.jsonl", {{'u', 1}}, "customers"},
      {"apache__seatunnel/debezium_data.txt.jsonl", {{'r', 3}}, "mysql_cdc_e2e_source_table"},
      {"apache__seatunnel/debezium-data.txt.jsonl", {{'c', 11}, {'u', 4}, {'d', 1}}, "products"},
      {"apache__seatunnel/debezium-mysql.txt.jsonl", {{'r', 1}}, "all_types"},
      {"apache__seatunnel/debezium-oracle.txt.jsonl", {{'r', 1}}, "ALL_TYPES1"},
      {"apache__seatunnel/debezium-postgresql.txt.jsonl", {{'r', 1}}, "all_types_1"},
      {"apache__seatunnel/debezium-sqlserver.txt.jsonl", {{'r', 1}}, "full_types_1"},
  };
  for (const auto& f : files) {
    INFO(f.path);
    Outcome o = decode_file(f.path);
    for (const auto& e : o.error_list) INFO(e.message());
    CHECK(o.errors.empty());
    if (!o.error_list.empty()) FAIL_CHECK(o.error_list.front().message());
    CHECK(o.ops == f.ops);
    for (const auto& c : o.changes) CHECK(c.table == f.table);
  }
}

TEST_CASE("Corpus: hand-edited schema that contradicts its payload", "[decode][corpus]") {
  // flink-cdc's schema-include fixture declares id as int32 while the payload
  // carries "AQ==" (debezium-format.md §5 #3: schema edited, payload real).
  Outcome strict = decode_file("apache__flink-cdc/debezium-data-schema-include.json.jsonl");
  REQUIRE_FALSE(strict.error_list.empty());
  CHECK(strict.error_list[0].code == DecodeErrorCode::TypeMismatch);
  CHECK(strict.error_list[0].path == "value.payload.after.id");
  DecoderOptions o;
  o.use_schema = false;
  Outcome lenient = decode_file("apache__flink-cdc/debezium-data-schema-include.json.jsonl", o);
  CHECK(lenient.ops == Ops{{'r', 1}, {'u', 1}});
  for (const auto& c : lenient.changes) CHECK(c.table == "full_types");
}

TEST_CASE("Corpus: several tables in one topic are told apart by source", "[decode][corpus]") {
  Outcome o = decode_file("apache__paimon/database-include-topic0__debezium-data-1.txt.jsonl");
  REQUIRE(o.changes.size() == 4);
  std::vector<std::string> tables;
  for (const auto& c : o.changes) tables.push_back(c.table);
  std::sort(tables.begin(), tables.end());
  CHECK(tables == std::vector<std::string>{"flink", "ignore", "paimon_1", "paimon_2"});
}

TEST_CASE("Corpus: exact values for BIGINT UNSIGNED, decimals and Oracle VariableScaleDecimal", "[decode][corpus]") {
  Outcome numeric = decode_file("apache__flink-cdc/debezium-data-schema-exclude-with-numeric-decimal.json.jsonl");
  REQUIRE(numeric.changes.size() == 2);
  CHECK(numeric.changes[0].rows[0].json.find("18446744073709551615") != std::string::npos);
  CHECK(numeric.changes[0].rows[0].json.find("9223372036854775807") != std::string::npos);

  Outcome oracle = decode_file("apache__seatunnel/debezium-oracle.txt.jsonl");
  REQUIRE(oracle.changes.size() == 1);
  const std::string& row = oracle.changes[0].rows[0].json;
  CHECK(row.find("\"scale\"") == std::string::npos);  // every VariableScaleDecimal became a decimal string
  CHECK(oracle.changes[0].position.scn.size() > 0);

  // Decimal schema with decimal.format=NUMERIC payload numbers: the text is kept exactly.
  Outcome typed = decode_file("apache__paimon/table-schema-alltype__debezium-data-1.txt.jsonl");
  REQUIRE(typed.changes.size() == 1);
  CHECK(typed.changes[0].rows[0].json.find("\"_numeric\":\"12345.110\"") != std::string::npos);
  CHECK(typed.changes[0].rows[0].json.find("\"_fixed\":\"123456789876543212345678987654321.110\"") != std::string::npos);
  CHECK(typed.changes[0].rows[0].json.find("\"_datetime6\":\"2023-03-23 14:30:05.123456\"") != std::string::npos);
}

TEST_CASE("Corpus: PostgreSQL lsn that lost precision only affects the position", "[decode][corpus]") {
  Outcome o = decode_file("apache__seatunnel/debezium-postgresql.txt.jsonl");
  REQUIRE(o.changes.size() == 1);
  CHECK_FALSE(o.changes[0].position.lsn.has_value());
  CHECK(o.changes[0].position.connector == "postgresql");
}

TEST_CASE("Corpus: PostgreSQL delete with null before needs the Kafka key", "[decode][corpus][postgres]") {
  Outcome without = decode_file("apache__flink/debezium-postgres-data-replica-identity.txt.jsonl");
  CHECK(without.ops == Ops{{'c', 2}, {'r', 9}, {'u', 4}});
  REQUIRE(without.error_list.size() == 1);
  CHECK(without.error_list[0].code == DecodeErrorCode::MissingKey);
  CHECK(without.error_list[0].message().find("Kafka key") != std::string::npos);

  Outcome with = decode_file("apache__flink/debezium-postgres-data-replica-identity.txt.jsonl", {}, std::string(R"({"id":111})"));
  CHECK(with.ops == Ops{{'c', 2}, {'r', 9}, {'u', 4}, {'d', 1}});
  CHECK(with.changes.back().rows[0].json == R"({"id":111,"__DORIS_DELETE_SIGN__":1})");
}

TEST_CASE("Corpus: MongoDB change events are refused with one clear error each", "[decode][corpus][mongodb]") {
  for (auto [file, n] : {std::pair{"apache__paimon/event-insert.txt.jsonl", 1}, std::pair{"apache__paimon/event-update.txt.jsonl", 2},
                         std::pair{"apache__paimon/event-delete.txt.jsonl", 3}}) {
    INFO(file);
    Outcome o = decode_file(file);
    CHECK(o.changes.empty());
    REQUIRE(o.error_list.size() == static_cast<size_t>(n));
    for (const auto& e : o.error_list) {
      CHECK(e.code == DecodeErrorCode::Unsupported);
      CHECK(e.message().find("MongoDB change events are not supported") != std::string::npos);
    }
  }
}

TEST_CASE("Corpus: schema-change event is recognised with its DDL", "[decode][corpus]") {
  Outcome out = decode_file("memiiso__debezium-server-iceberg/serde-with-array2.json.jsonl");
  CHECK(out.error_list.empty());
  CHECK(out.kinds[Kind::SchemaChange] == 1);
  int with_ddl = 0;
  for (const auto& c : out.changes)
    if (c.kind == Kind::SchemaChange && c.ddl.find("CREATE TABLE") != std::string::npos) ++with_ddl;
  CHECK(with_ddl == 1);
}

TEST_CASE("Corpus: flattened rows, and a bare row in envelope mode", "[decode][corpus][flattened]") {
  DecoderOptions flat;
  flat.envelope = Envelope::Flattened;
  Outcome a = decode_file("memiiso__debezium-server-iceberg/unwrap-with-schema.json.jsonl", flat);
  CHECK(a.ops == Ops{{'r', 1}});
  REQUIRE(a.changes.size() == 1);
  CHECK(a.changes[0].table == "orders");
  CHECK(a.changes[0].rows[0].json.find("__op") == std::string::npos);
  CHECK(a.changes[0].rows[0].json.find("\"order_date\":\"2016-02-19\"") != std::string::npos);  // io.debezium.time.Date 16850
  Outcome b = decode_file("memiiso__debezium-server-iceberg/serde-with-array.json.jsonl", flat);
  CHECK(b.ops == Ops{{'c', 1}});
  Outcome g = decode_file("memiiso__debezium-server-iceberg/serde-with-schema_geom.json.jsonl", flat);
  CHECK(g.ops == Ops{{'r', 1}});
  REQUIRE(g.changes.size() == 1);
  CHECK(g.error_list.empty());

  Outcome bare_flat = decode_file("debezium__debezium/serde-unwrapped.json.jsonl", flat);
  CHECK(bare_flat.ops == Ops{{'u', 1}});
  Outcome bare_env = decode_file("debezium__debezium/serde-unwrapped.json.jsonl");
  REQUIRE(bare_env.error_list.size() == 1);
  CHECK(bare_env.error_list[0].code == DecodeErrorCode::NotAnEnvelope);
  CHECK(bare_env.error_list[0].message().find("flattened") != std::string::npos);
}

TEST_CASE("Corpus: partial before-image is not used as a row", "[decode][corpus]") {
  Outcome o = decode_file("apache__paimon/table-schemaevolution__debezium-data-3.txt.jsonl", {}, std::string(R"({"id":101})"));
  REQUIRE(o.error_list.empty());
  for (const auto& c : o.changes) {
    if (c.op != 'u') continue;
    REQUIRE(c.rows.size() == 1);
    CHECK_FALSE(c.primary_key_changed);
    CHECK(c.rows[0].json.find("\"id\"") != std::string::npos);
  }
}

TEST_CASE("Corpus: every record under every envelope setting: no crash, error or result", "[decode][corpus]") {
  size_t records = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(kCorpus)) {
    if (entry.path().extension() != ".jsonl") continue;
    const std::string rel = std::filesystem::relative(entry.path(), kCorpus).string();
    for (auto env : {Envelope::Auto, Envelope::Schema, Envelope::Plain, Envelope::Flattened}) {
      DecoderOptions o;
      o.envelope = env;
      o.time_zone = "Asia/Shanghai";
      o.binary_mode = BinaryMode::Hex;
      Outcome out = decode_file(rel, o, std::string(R"({"id":1})"));
      for (const auto& e : out.error_list) CHECK_FALSE(e.message().empty());
      if (env == Envelope::Auto) records += out.changes.size() + out.error_list.size();
    }
  }
  CHECK(records == 132);
}
