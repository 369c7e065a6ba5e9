// Every row of docs/decoding.md's "Real sources: type tables" (recommended
// Doris type), from the field schema Debezium sends with
// column.propagate.source.type, and the fallbacks from the Connect type alone.
#include <catch2/catch.hpp>

#include <string>

#include "core/decode/connect_schema.hpp"
#include "core/schema/types.hpp"

using namespace cdc2doris;

namespace {

struct Row {
  const char* source_type;  // __debezium.source.column.type
  const char* length;       // __debezium.source.column.length ("" = absent)
  const char* scale;        // __debezium.source.column.scale
  const char* connect;      // the rest of the field schema
  const char* expected;
};

decode::SchemaNode field(const Row& r) {
  std::string params = std::string(R"({"__debezium.source.column.type":")") + r.source_type + "\"";
  if (*r.length) params += std::string(R"(,"__debezium.source.column.length":")") + r.length + "\"";
  if (*r.scale) params += std::string(R"(,"__debezium.source.column.scale":")") + r.scale + "\"";
  std::string c = r.connect;
  // Merge the source parameters into the connect schema's own parameters.
  std::string json;
  if (auto p = c.find("\"parameters\":{"); p != std::string::npos) {
    json = c.substr(0, p + 14) + params.substr(1, params.size() - 1) + "," + c.substr(p + 14);
  } else {
    json = c.substr(0, c.size() - 1) + ",\"parameters\":" + params + "}}";
  }
  json = R"({"type":"struct","fields":[)" + json.substr(0, json.size() - 1) + R"(,"field":"c"}]})";
  return decode::compile_schema(json).fields.at(0);
}

void check(const Row* rows, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    INFO(rows[i].source_type << " " << rows[i].connect);
    CHECK(schema::doris_type(field(rows[i])) == rows[i].expected);
  }
}

}  // namespace

TEST_CASE("PostgreSQL rows of docs/decoding.md map to their recommended Doris types") {
  const Row rows[] = {
      {"INT2", "", "", R"({"type":"int16"})", "SMALLINT"},
      {"INT4", "", "", R"({"type":"int32"})", "INT"},
      {"INT8", "", "", R"({"type":"int64"})", "BIGINT"},
      {"FLOAT4", "", "", R"({"type":"float"})", "FLOAT"},
      {"FLOAT8", "", "", R"({"type":"double"})", "DOUBLE"},
      {"NUMERIC", "10", "2", R"({"type":"bytes","name":"org.apache.kafka.connect.data.Decimal","parameters":{"scale":"2","connect.decimal.precision":"10"}})", "DECIMAL(10,2)"},
      {"NUMERIC", "", "", R"({"type":"struct","name":"io.debezium.data.VariableScaleDecimal","fields":[{"type":"int32","field":"scale"},{"type":"bytes","field":"value"}]})", "DECIMAL(38,10)"},
      {"MONEY", "", "", R"({"type":"bytes","name":"org.apache.kafka.connect.data.Decimal","parameters":{"scale":"2"}})", "DECIMAL(19,2)"},
      {"BOOL", "", "", R"({"type":"boolean"})", "BOOLEAN"},
      {"BIT", "1", "", R"({"type":"boolean"})", "BOOLEAN"},
      {"BPCHAR", "5", "", R"({"type":"string"})", "CHAR(20)"},
      {"VARCHAR", "50", "", R"({"type":"string"})", "VARCHAR(200)"},
      {"TEXT", "", "", R"({"type":"string"})", "STRING"},
      {"BYTEA", "", "", R"({"type":"bytes"})", "STRING"},
      {"DATE", "", "", R"({"type":"int32","name":"io.debezium.time.Date"})", "DATE"},
      {"TIME", "", "6", R"({"type":"int64","name":"io.debezium.time.MicroTime"})", "STRING"},
      {"TIMETZ", "", "", R"({"type":"string","name":"io.debezium.time.ZonedTime"})", "STRING"},
      {"TIMESTAMP", "", "3", R"({"type":"int64","name":"io.debezium.time.Timestamp"})", "DATETIME(3)"},
      {"TIMESTAMP", "", "6", R"({"type":"int64","name":"io.debezium.time.MicroTimestamp"})", "DATETIME(6)"},
      {"TIMESTAMPTZ", "", "", R"({"type":"string","name":"io.debezium.time.ZonedTimestamp"})", "DATETIME(6)"},
      {"INTERVAL", "", "", R"({"type":"int64","name":"io.debezium.time.MicroDuration"})", "BIGINT"},
      {"UUID", "", "", R"({"type":"string","name":"io.debezium.data.Uuid"})", "VARCHAR(36)"},
      {"JSON", "", "", R"({"type":"string","name":"io.debezium.data.Json"})", "JSON"},
      {"JSONB", "", "", R"({"type":"string","name":"io.debezium.data.Json"})", "JSON"},
      {"HSTORE", "", "", R"({"type":"string","name":"io.debezium.data.Json"})", "JSON"},
      {"XML", "", "", R"({"type":"string","name":"io.debezium.data.Xml"})", "STRING"},
      {"INET", "", "", R"({"type":"string"})", "VARCHAR(64)"},
      {"CIDR", "", "", R"({"type":"string"})", "VARCHAR(64)"},
      {"MACADDR", "", "", R"({"type":"string"})", "VARCHAR(17)"},
      {"INT4RANGE", "", "", R"({"type":"string"})", "VARCHAR(64)"},
      {"OID", "", "", R"({"type":"int64"})", "BIGINT"},
      {"BIT", "10", "", R"({"type":"bytes","name":"io.debezium.data.Bits","parameters":{"length":"10"}})", "STRING"},
      {"VARBIT", "10", "", R"({"type":"bytes","name":"io.debezium.data.Bits","parameters":{"length":"10"}})", "STRING"},
      {"CITEXT", "", "", R"({"type":"string"})", "STRING"},
      {"LTREE", "", "", R"({"type":"string","name":"io.debezium.data.Ltree"})", "STRING"},
      {"TSVECTOR", "", "", R"({"type":"string","name":"io.debezium.data.Tsvector"})", "STRING"},
      {"POINT", "", "", R"({"type":"struct","name":"io.debezium.data.geometry.Point","fields":[{"type":"double","field":"x"},{"type":"double","field":"y"},{"type":"bytes","optional":true,"field":"wkb"},{"type":"int32","optional":true,"field":"srid"}]})", "STRING"},
      {"_INT4", "", "", R"({"type":"array","items":{"type":"int32","optional":true}})", "JSON"},
      {"_TEXT", "", "", R"({"type":"array","items":{"type":"string","optional":true}})", "JSON"},
  };
  check(rows, std::size(rows));
  // An enum type's name is the type's own; Debezium names the field Enum.
  const Row en[] = {{"MOOD", "", "", R"({"type":"string","name":"io.debezium.data.Enum","parameters":{"allowed":"sad,happy"}})", "VARCHAR(20)"}};
  check(en, 1);
}

TEST_CASE("MariaDB rows of docs/decoding.md map to their recommended Doris types") {
  const Row rows[] = {
      {"TINYINT", "", "", R"({"type":"int16"})", "TINYINT"},
      {"BOOLEAN", "", "", R"({"type":"int16"})", "TINYINT"},
      {"TINYINT UNSIGNED", "", "", R"({"type":"int16"})", "SMALLINT"},
      {"SMALLINT", "", "", R"({"type":"int16"})", "SMALLINT"},
      {"SMALLINT UNSIGNED", "", "", R"({"type":"int32"})", "INT"},
      {"MEDIUMINT", "", "", R"({"type":"int32"})", "INT"},
      {"MEDIUMINT UNSIGNED", "", "", R"({"type":"int32"})", "INT"},
      {"INT", "", "", R"({"type":"int32"})", "INT"},
      {"INT UNSIGNED", "", "", R"({"type":"int64"})", "BIGINT"},
      {"BIGINT", "", "", R"({"type":"int64"})", "BIGINT"},
      {"BIGINT UNSIGNED", "20", "0", R"({"type":"bytes","name":"org.apache.kafka.connect.data.Decimal","parameters":{"scale":"0"}})", "LARGEINT"},
      {"FLOAT", "", "", R"({"type":"float"})", "FLOAT"},
      {"DOUBLE", "", "", R"({"type":"double"})", "DOUBLE"},
      {"DECIMAL", "12", "3", R"({"type":"bytes","name":"org.apache.kafka.connect.data.Decimal","parameters":{"scale":"3"}})", "DECIMAL(12,3)"},
      {"BIT", "1", "", R"({"type":"boolean"})", "BOOLEAN"},
      {"BIT", "10", "", R"({"type":"bytes","name":"io.debezium.data.Bits"})", "STRING"},
      {"CHAR", "3", "", R"({"type":"string"})", "CHAR(12)"},
      {"VARCHAR", "50", "", R"({"type":"string"})", "VARCHAR(200)"},
      {"TEXT", "", "", R"({"type":"string"})", "STRING"},
      {"LONGTEXT", "", "", R"({"type":"string"})", "STRING"},
      {"BINARY", "4", "", R"({"type":"bytes"})", "STRING"},
      {"VARBINARY", "4", "", R"({"type":"bytes"})", "STRING"},
      {"BLOB", "", "", R"({"type":"bytes"})", "STRING"},
      {"DATE", "", "", R"({"type":"int32","name":"io.debezium.time.Date"})", "DATE"},
      {"TIME", "6", "", R"({"type":"int64","name":"io.debezium.time.MicroTime"})", "STRING"},
      {"DATETIME", "3", "", R"({"type":"int64","name":"io.debezium.time.Timestamp"})", "DATETIME(3)"},
      {"DATETIME", "6", "", R"({"type":"int64","name":"io.debezium.time.MicroTimestamp"})", "DATETIME(6)"},
      {"TIMESTAMP", "2", "", R"({"type":"string","name":"io.debezium.time.ZonedTimestamp"})", "DATETIME(2)"},
      {"YEAR", "", "", R"({"type":"int32","name":"io.debezium.time.Year"})", "SMALLINT"},
      {"ENUM", "", "", R"({"type":"string","name":"io.debezium.data.Enum","parameters":{"allowed":"a,ü x"}})", "VARCHAR(12)"},
      {"SET", "", "", R"({"type":"string","name":"io.debezium.data.EnumSet","parameters":{"allowed":"a,b,c d"}})", "VARCHAR(28)"},
      {"JSON", "", "", R"({"type":"string","name":"io.debezium.data.Json"})", "JSON"},
  };
  check(rows, std::size(rows));
}

TEST_CASE("Without the source type the Connect schema picks a type that holds every value") {
  auto t = [](const char* connect, bool key = false) {
    std::string json = std::string(R"({"type":"struct","fields":[)") + std::string(connect).substr(0, std::string(connect).size() - 1) +
                       R"(,"field":"c"}]})";
    return schema::doris_type(decode::compile_schema(json).fields.at(0), key);
  };
  CHECK(t(R"({"type":"int8"})") == "TINYINT");
  CHECK(t(R"({"type":"int16"})") == "SMALLINT");
  CHECK(t(R"({"type":"int32"})") == "INT");
  CHECK(t(R"({"type":"int64"})") == "BIGINT");
  CHECK(t(R"({"type":"string"})") == "STRING");
  CHECK(t(R"({"type":"string"})", true) == "VARCHAR(65533)");
  CHECK(t(R"({"type":"bytes","name":"org.apache.kafka.connect.data.Decimal","parameters":{"scale":"2","connect.decimal.precision":"10"}})") == "DECIMAL(10,2)");
  CHECK(t(R"({"type":"bytes","name":"org.apache.kafka.connect.data.Decimal","parameters":{"scale":"2"}})") == "DECIMAL(38,2)");
  CHECK(t(R"({"type":"bytes","name":"org.apache.kafka.connect.data.Decimal","parameters":{"scale":"2","connect.decimal.precision":"65"}})") == "STRING");
  CHECK(t(R"({"type":"int64","name":"io.debezium.time.Timestamp"})") == "DATETIME(3)");
  CHECK(t(R"({"type":"int64","name":"io.debezium.time.MicroTimestamp"})") == "DATETIME(6)");
  CHECK(t(R"({"type":"string","name":"io.debezium.time.ZonedTimestamp"})") == "DATETIME(6)");
  CHECK(t(R"({"type":"int32","name":"io.debezium.time.Date"})") == "DATE");
  CHECK(t(R"({"type":"int64","name":"io.debezium.time.MicroTime"})") == "STRING");
  CHECK(t(R"({"type":"string","name":"io.debezium.data.Json"})") == "JSON");
  CHECK(t(R"({"type":"string","name":"io.debezium.data.Uuid"})") == "VARCHAR(36)");
  CHECK(t(R"({"type":"boolean"})") == "BOOLEAN");
  CHECK(t(R"({"type":"double"})") == "DOUBLE");
  CHECK(t(R"({"type":"map","keys":{"type":"string"},"values":{"type":"string"}})") == "JSON");
}

TEST_CASE("Type names are compared in one spelling, widenings follow Doris' schema-change matrix") {
  CHECK(schema::normalize_type("varchar(200)") == "VARCHAR(200)");
  CHECK(schema::normalize_type("DECIMALV3(10, 2)") == "DECIMAL(10,2)");
  CHECK(schema::normalize_type("datetimev2(0)") == "DATETIME");
  CHECK(schema::normalize_type("int(11)") == "INT");
  CHECK(schema::normalize_type("text") == "STRING");
  CHECK(schema::normalize_type("DATEV2") == "DATE");
  CHECK(schema::is_widening("INT", "BIGINT"));
  CHECK(schema::is_widening("TINYINT", "LARGEINT"));
  CHECK_FALSE(schema::is_widening("BIGINT", "INT"));
  CHECK(schema::is_widening("VARCHAR(20)", "VARCHAR(200)"));
  CHECK_FALSE(schema::is_widening("VARCHAR(200)", "VARCHAR(20)"));
  CHECK(schema::is_widening("VARCHAR(20)", "STRING"));
  CHECK(schema::is_widening("FLOAT", "DOUBLE"));
  CHECK(schema::is_widening("DECIMAL(10,2)", "DECIMAL(12,2)"));
  CHECK_FALSE(schema::is_widening("DECIMAL(10,2)", "DECIMAL(12,3)"));
  CHECK_FALSE(schema::is_widening("INT", "VARCHAR(10)"));
  CHECK_FALSE(schema::is_widening("INT", "INT"));
  CHECK(schema::fits("SMALLINT", "INT"));
  CHECK(schema::fits("VARCHAR(20)", "VARCHAR(40)"));
  CHECK_FALSE(schema::fits("BIGINT", "INT"));
}

TEST_CASE("A field's default becomes a SQL literal where Doris can take it") {
  auto d = [](const char* connect) {
    std::string json = std::string(R"({"type":"struct","fields":[)") + std::string(connect).substr(0, std::string(connect).size() - 1) +
                       R"(,"field":"c"}]})";
    return schema::default_literal(decode::compile_schema(json).fields.at(0));
  };
  CHECK(d(R"({"type":"int32","default":7})") == "'7'");
  CHECK(d(R"({"type":"string","default":"it's"})") == "'it\\'s'");
  CHECK(d(R"({"type":"boolean","default":true})") == "true");
  CHECK(d(R"({"type":"int32","name":"io.debezium.time.Date","default":19723})") == "'2024-01-01'");
  CHECK(d(R"({"type":"int32","name":"io.debezium.time.Date","default":-1})") == "'1969-12-31'");
  CHECK_FALSE(d(R"({"type":"int32"})"));
  CHECK_FALSE(d(R"({"type":"int32","default":null})"));
  CHECK_FALSE(d(R"({"type":"bytes","name":"org.apache.kafka.connect.data.Decimal","parameters":{"scale":"2"},"default":"AA=="})"));
}
