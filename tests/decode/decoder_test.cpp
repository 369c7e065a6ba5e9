#include "core/decode/decoder.hpp"
#include "tests/decode/decode_run.hpp"
#include "core/decode/doris_types.hpp"

#include <catch2/catch.hpp>

#include <string>

using namespace cdc2doris::decode;

namespace {

struct Run : test::DecodeRun {
  explicit Run(DecoderOptions o = {}) : DecodeRun(std::move(o), "dbserver1.inventory.customers", 3) {}
};

const std::string kMysqlSource =
    R"("source":{"version":"2.5.0.Final","connector":"mysql","name":"dbserver1","ts_ms":1700000000000,"snapshot":"false","db":"inventory","table":"customers","server_id":223344,"gtid":null,"file":"mysql-bin.000003","pos":154,"row":2,"thread":7,"query":null})";

std::string mysql(std::string_view op, std::string_view before, std::string_view after) {
  return std::string(R"({"before":)") + std::string(before) + R"(,"after":)" + std::string(after) + "," + kMysqlSource +
         R"(,"op":")" + std::string(op) + R"(","ts_ms":1700000000123,"transaction":null})";
}

// Value schema for a customers table exercising every logical type.
const std::string kRowSchemaFields = R"([
 {"type":"int64","optional":false,"field":"id"},
 {"type":"bytes","optional":true,"name":"org.apache.kafka.connect.data.Decimal","version":1,"parameters":{"scale":"2","connect.decimal.precision":"10"},"field":"price"},
 {"type":"int32","optional":true,"name":"io.debezium.time.Date","version":1,"field":"d"},
 {"type":"int64","optional":true,"name":"io.debezium.time.MicroTime","version":1,"field":"t"},
 {"type":"int64","optional":true,"name":"io.debezium.time.Timestamp","version":1,"field":"ts3"},
 {"type":"int64","optional":true,"name":"io.debezium.time.MicroTimestamp","version":1,"field":"ts6"},
 {"type":"int64","optional":true,"name":"io.debezium.time.NanoTimestamp","version":1,"field":"ts9"},
 {"type":"string","optional":true,"name":"io.debezium.time.ZonedTimestamp","version":1,"field":"zts"},
 {"type":"int32","optional":true,"name":"io.debezium.time.Year","version":1,"field":"y"},
 {"type":"string","optional":true,"name":"io.debezium.data.Json","version":1,"field":"j"},
 {"type":"string","optional":true,"name":"io.debezium.data.Enum","version":1,"parameters":{"allowed":"a,b"},"field":"e"},
 {"type":"bytes","optional":true,"name":"io.debezium.data.Bits","version":1,"parameters":{"length":"16"},"field":"bits"},
 {"type":"bytes","optional":true,"field":"blob"},
 {"type":"struct","optional":true,"name":"io.debezium.data.VariableScaleDecimal","fields":[{"type":"int32","optional":false,"field":"scale"},{"type":"bytes","optional":false,"field":"value"}],"field":"vsd"},
 {"type":"struct","optional":true,"name":"io.debezium.data.geometry.Point","fields":[{"type":"double","optional":false,"field":"x"},{"type":"double","optional":false,"field":"y"},{"type":"bytes","optional":true,"field":"wkb"},{"type":"int32","optional":true,"field":"srid"}],"field":"pt"},
 {"type":"int64","optional":true,"field":"big"},
 {"type":"double","optional":true,"field":"f"},
 {"type":"boolean","optional":true,"field":"flag"},
 {"type":"array","optional":true,"items":{"type":"int32","optional":true,"name":"io.debezium.time.Date"},"field":"dates"}
])";

std::string schema_envelope(std::string_view payload) {
  std::string value_struct = R"({"type":"struct","optional":true,"name":"dbserver1.inventory.customers.Value","fields":)" + kRowSchemaFields + "}";
  std::string before = value_struct;
  before.insert(before.size() - 1, R"(,"field":"before")");
  std::string after = value_struct;
  after.insert(after.size() - 1, R"(,"field":"after")");
  std::string schema = R"({"type":"struct","fields":[)" + before + "," + after +
                       R"(,{"type":"struct","fields":[{"type":"string","optional":false,"field":"connector"},{"type":"string","optional":false,"field":"db"},{"type":"string","optional":true,"field":"table"},{"type":"int64","optional":false,"field":"ts_ms"}],"optional":false,"name":"io.debezium.connector.mysql.Source","field":"source"},{"type":"string","optional":false,"field":"op"},{"type":"int64","optional":true,"field":"ts_ms"}],"optional":false,"name":"dbserver1.inventory.customers.Envelope"})";
  return R"({"schema":)" + schema + R"(,"payload":)" + std::string(payload) + "}";
}

const std::string kTypedRow =
    R"({"id":9223372036854775807,"price":"z8c=","d":-1,"t":86399999999,"ts3":1712917800000,"ts6":-1,"ts9":1734382927000000001,)"
    R"("zts":"2024-03-10T07:00:00Z","y":2021,"j":"{\"k\": [1, 2.50, \"x\"]}","e":"a","bits":"AQI=","blob":"3q2+7w==",)"
    R"("vsd":{"scale":3,"value":"AeJA"},"pt":{"x":1.5,"y":-2,"wkb":null,"srid":null},"big":-9007199254740993,"f":3.140000104904175,"flag":true,"dates":[19825,-1]})";

}  // namespace

TEST_CASE("Schemaless MySQL create/update/delete produce Doris rows", "[decode][envelope]") {
  Run run;
  auto err = run(mysql("c", "null", R"({"id":1004,"first_name":"Anne","email":"annek@noanswer.org","score":12.50})"),
                 std::string_view(R"({"id":1004})"));
  REQUIRE_FALSE(err);
  CHECK(run.change.kind == Kind::Change);
  CHECK(run.change.op == 'c');
  CHECK(run.change.db == "inventory");
  CHECK(run.change.table == "customers");
  CHECK(run.change.key_columns == std::vector<std::string>{"id"});
  CHECK(run.change.position.file == "mysql-bin.000003");
  CHECK(run.change.position.pos == 154);
  CHECK(run.change.position.ts_ms == 1700000000000);
  REQUIRE(run.change.rows.size() == 1);
  CHECK(run.row() == R"({"id":1004,"first_name":"Anne","email":"annek@noanswer.org","score":12.50,"__DORIS_DELETE_SIGN__":0})");
  CHECK(run.change.rows[0].partial_columns.empty());

  err = run(mysql("u", R"({"id":1004,"first_name":"Anne"})", R"({"id":1004,"first_name":"Anne Marie"})"),
            std::string_view(R"({"id":1004})"));
  REQUIRE_FALSE(err);
  CHECK(run.change.op == 'u');
  CHECK_FALSE(run.change.primary_key_changed);
  REQUIRE(run.change.rows.size() == 1);
  CHECK(run.row() == R"({"id":1004,"first_name":"Anne Marie","__DORIS_DELETE_SIGN__":0})");

  err = run(mysql("d", R"({"id":1004,"first_name":"Anne Marie"})", "null"), std::string_view(R"({"id":1004})"));
  REQUIRE_FALSE(err);
  CHECK(run.change.op == 'd');
  REQUIRE(run.change.rows.size() == 1);
  CHECK(run.row() == R"({"id":1004,"first_name":"Anne Marie","__DORIS_DELETE_SIGN__":1})");
  CHECK(run.change.rows[0].is_delete());

  // Debezium's tombstone right after the delete (the next offset): nothing more to do.
  err = run(std::nullopt, std::string_view(R"({"id":1004})"), "dbserver1.inventory.customers", 8);
  REQUIRE_FALSE(err);
  CHECK(run.change.kind == Kind::Tombstone);
  CHECK(run.change.rows.empty());
  CHECK(run.dec.stats().tombstones == 1);
  CHECK(run.dec.stats().changes == 3);
}

// Issue 31: after compaction a deleted key's tombstone is all a reader from
// the start sees; it deletes the key in every envelope mode.
TEST_CASE("A tombstone deletes its key unless it follows the key's delete", "[decode][tombstone]") {
  const std::string pg_source = R"("source":{"connector":"postgresql","db":"shopdb","schema":"public","table":"orders","lsn":1})";
  const std::string pg_create = R"({"before":null,"after":{"id":5,"v":"x"},)" + pg_source + R"(,"op":"c"})";
  const std::string key_schema =
      R"({"schema":{"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"}],"optional":false,"name":"k.Key"},"payload":{"id":9}})";
  SECTION("schemaless envelope: the topic's identity from its changes (PostgreSQL names the schema in the topic)") {
    Run run;
    REQUIRE_FALSE(run(pg_create, std::string_view(R"({"id":5})"), "pg.public.orders", 1));
    REQUIRE_FALSE(run(std::nullopt, std::string_view(R"({"id":9})"), "pg.public.orders", 2));
    CHECK(run.change.kind == Kind::Change);
    CHECK(run.change.op == 'd');
    CHECK(run.change.db == "shopdb");
    CHECK(run.change.schema == "public");
    CHECK(run.change.table == "orders");
    REQUIRE(run.change.rows.size() == 1);
    CHECK(run.row() == R"({"id":9,"__DORIS_DELETE_SIGN__":1})");
    CHECK(run.change.rows[0].is_delete());
    CHECK_FALSE(run.change.rows[0].partial_columns.empty());  // key-only
  }
  SECTION("schema envelope, a Kafka tombstone and a null payload, keys with a schema") {
    Run run;
    REQUIRE_FALSE(run(std::nullopt, std::string_view(key_schema), "dbserver1.inventory.customers", 3));
    CHECK(run.change.kind == Kind::Change);
    CHECK(run.change.db == "inventory");
    CHECK(run.change.table == "customers");
    CHECK(run.row() == R"({"id":9,"__DORIS_DELETE_SIGN__":1})");
    // (Not at offset 4: right after a delete of the same key it would add nothing.)
    REQUIRE_FALSE(run(R"({"schema":null,"payload":null})", std::string_view(key_schema), "dbserver1.inventory.customers", 6));
    CHECK(run.change.kind == Kind::Change);
    CHECK(run.row() == R"({"id":9,"__DORIS_DELETE_SIGN__":1})");
  }
  SECTION("Debezium's pair: the tombstone at the delete's next offset, same key, adds nothing") {
    Run run;
    REQUIRE_FALSE(run(mysql("d", R"({"id":9,"first_name":"x"})", "null"), std::string_view(R"({"id":9})"),
                      "dbserver1.inventory.customers", 10));
    CHECK(run.change.op == 'd');
    // Another partition's records in between do not matter.
    REQUIRE_FALSE(run(std::nullopt, std::string_view(R"({"id":9})"), "dbserver1.inventory.other", 11));
    CHECK(run.change.kind == Kind::Change);
    REQUIRE_FALSE(run(std::nullopt, std::string_view(R"({"id":9})"), "dbserver1.inventory.customers", 11));
    CHECK(run.change.kind == Kind::Tombstone);
    // Not the next offset (the delete was compacted away, or a different key): applied.
    REQUIRE_FALSE(run(std::nullopt, std::string_view(R"({"id":9})"), "dbserver1.inventory.customers", 13));
    CHECK(run.change.kind == Kind::Change);
    CHECK(run.change.op == 'd');
  }
  SECTION("no key, or a topic carrying several tables: nothing to delete safely") {
    Run run;
    REQUIRE_FALSE(run(std::nullopt, std::nullopt, "dbserver1.inventory.customers", 1));
    CHECK(run.change.kind == Kind::Tombstone);
    REQUIRE_FALSE(run(mysql("c", "null", R"({"id":1,"first_name":"x"})"), std::string_view(R"({"id":1})"), "routed", 2));
    const std::string other = R"({"before":null,"after":{"id":2},"source":{"db":"inventory","table":"orders"},"op":"c"})";
    REQUIRE_FALSE(run(other, std::string_view(R"({"id":2})"), "routed", 3));
    REQUIRE_FALSE(run(std::nullopt, std::string_view(R"({"id":2})"), "routed", 4));
    CHECK(run.change.kind == Kind::Tombstone);
  }
}

TEST_CASE("Column names of every length, with and without escapes, are written out exactly", "[decode][keys]") {
  // Keys are scanned 32 bytes at a time where the CPU allows (key_of): names
  // shorter and longer than a block, an escape or the closing quote on
  // either side of a block boundary, and escaped names that must be
  // unescaped (and re-escaped on output) rather than copied.
  std::string after = "{", expected = "{";
  for (size_t n = 1; n <= 70; ++n) {
    const std::string name(n, static_cast<char>('a' + n % 26));
    after += "\"" + name + "\":" + std::to_string(n) + ",";
    expected += "\"" + name + "\":" + std::to_string(n) + ",";
  }
  for (size_t at : {0, 1, 30, 31, 32, 33, 63, 64}) {
    const std::string head(at, 'e');
    after += "\"" + head + R"(\"q":1,)";
    expected += "\"" + head + R"(\"q":1,)";
    after += "\"" + head + R"(\\s\/":2,)";
    expected += "\"" + head + R"(\\s/":2,)";
    after += "\"" + head + R"(\u00e9t\u00E9":3,)";
    expected += "\"" + head + "\xc3\xa9t\xc3\xa9\":3,";
  }
  after += R"("id":1})";
  expected += R"("id":1,"__DORIS_DELETE_SIGN__":0})";
  Run run;
  const std::string key = R"({"i\u0064":1})";
  auto err = run(mysql("c", "null", after), std::string_view(key));
  REQUIRE_FALSE(err);
  CHECK(run.change.key_columns == std::vector<std::string>{"id"});
  CHECK(run.row() == expected);

  // An escaped source key names the same field as the plain one.
  std::string value = mysql("c", "null", R"({"id":2})");
  value.replace(value.find(R"("table":)"), 8, R"("t\u0061ble":)");
  err = run(value, std::string_view(R"({"id":2})"));
  REQUIRE_FALSE(err);
  CHECK(run.change.table == "customers");

  // A control character inside a name is invalid JSON, wherever it sits.
  for (size_t at : {0, 5, 31, 32, 40}) {
    std::string bad = "{\"" + std::string(at, 'n') + '\x01' + R"(x":1,"id":3})";
    err = run(mysql("c", "null", bad), std::string_view(R"({"id":3})"));
    REQUIRE(err);
    CHECK(err->code == DecodeErrorCode::InvalidJson);
  }
}

TEST_CASE("Every logical type with a schema decodes to exact Doris values", "[decode][logical]") {
  DecoderOptions o;
  o.time_zone = "America/New_York";
  Run run(o);
  std::string payload = R"({"before":null,"after":)" + kTypedRow +
                        R"(,"source":{"connector":"mysql","db":"inventory","table":"customers","ts_ms":1},"op":"r","ts_ms":2})";
  auto err = run(schema_envelope(payload));
  REQUIRE_FALSE(err);
  CHECK(run.row() ==
        R"({"id":9223372036854775807,"price":"-123.45","d":"1969-12-31","t":"23:59:59.999999","ts3":"2024-04-12 10:30:00",)"
        R"("ts6":"1969-12-31 23:59:59.999999","ts9":"2024-12-16 21:02:07.000000001","zts":"2024-03-10 03:00:00","y":2021,)"
        R"x("j":"{\"k\": [1, 2.50, \"x\"]}","e":"a","bits":"AQI=","blob":"3q2+7w==","vsd":"123.456","pt":"POINT(1.5 -2)",)x"
        R"("big":-9007199254740993,"f":3.140000104904175,"flag":true,"dates":["2024-04-12","1969-12-31"],"__DORIS_DELETE_SIGN__":0})");
  CHECK(run.dec.stats().schema_cache_misses == 1);
  // Same schema again: served from the cache.
  REQUIRE_FALSE(run(schema_envelope(payload)));
  CHECK(run.dec.stats().schema_cache_misses == 1);
}

TEST_CASE("Binary mode hex and NUMERIC decimals", "[decode][logical]") {
  DecoderOptions o;
  o.binary_mode = BinaryMode::Hex;
  Run run(o);
  std::string row = kTypedRow;
  row.replace(row.find(R"("price":"z8c=")"), 14, R"("price":-123.45)");
  std::string payload = R"({"before":null,"after":)" + row + R"(,"source":{"connector":"mysql","db":"inventory","table":"customers","ts_ms":1},"op":"c"})";
  REQUIRE_FALSE(run(schema_envelope(payload)));
  CHECK(run.row().find(R"("price":"-123.45")") != std::string::npos);
  CHECK(run.row().find(R"("bits":"0102","blob":"deadbeef")") != std::string::npos);
}

TEST_CASE("Primary-key change deletes the old key and inserts the new row", "[decode][pk]") {
  Run run;
  auto err = run(mysql("u", R"({"id":1,"name":"a"})", R"({"id":2,"name":"a"})"), std::string_view(R"({"id":2})"));
  REQUIRE_FALSE(err);
  CHECK(run.change.primary_key_changed);
  REQUIRE(run.change.rows.size() == 2);
  CHECK(run.row(0) == R"({"id":1,"name":"a","__DORIS_DELETE_SIGN__":1})");
  CHECK(run.row(1) == R"({"id":2,"name":"a","__DORIS_DELETE_SIGN__":0})");
  CHECK(run.dec.stats().primary_key_changes == 1);

  // Key columns configured instead of the Kafka key (table without a key).
  DecoderOptions o;
  o.key_columns["inventory.customers"] = {"id"};
  Run run2(o);
  REQUIRE_FALSE(run2(mysql("u", R"({"id":1,"name":"a"})", R"({"id":3,"name":"a"})")));
  CHECK(run2.change.primary_key_changed);
  CHECK(run2.change.key_columns == std::vector<std::string>{"id"});
  REQUIRE(run2.change.rows.size() == 2);
}

TEST_CASE("PostgreSQL update without before is an upsert, delete needs the key", "[decode][postgres]") {
  Run run;
  const std::string src =
      R"("source":{"version":"1.2.1.Final","connector":"postgresql","name":"pg","ts_ms":1589362330904,"snapshot":"false","db":"postgres","schema":"inventory","table":"products","txId":565,"lsn":34054736,"xmin":null})";
  REQUIRE_FALSE(run(R"({"before":null,"after":{"id":111,"name":"scooter"},)" + src + R"(,"op":"u","ts_ms":1})",
                    std::string_view(R"({"id":111})"), "pg.inventory.products"));
  CHECK(run.change.schema == "inventory");
  CHECK(run.change.db == "postgres");
  CHECK(run.change.position.lsn == 34054736);
  CHECK(run.change.position.sequence() == 34054736);
  CHECK(run.row() == R"({"id":111,"name":"scooter","__DORIS_DELETE_SIGN__":0})");

  const std::string del = R"({"before":null,"after":null,)" + src + R"(,"op":"d","ts_ms":1})";
  REQUIRE_FALSE(run(del, std::string_view(R"({"id":111})"), "pg.inventory.products"));
  REQUIRE(run.change.rows.size() == 1);
  CHECK(run.row() == R"({"id":111,"__DORIS_DELETE_SIGN__":1})");
  CHECK(run.change.rows[0].partial_columns == std::vector<std::string>{"id", "__DORIS_DELETE_SIGN__"});

  auto err = run(del, std::nullopt, "pg.inventory.products", 42);
  REQUIRE(err);
  CHECK(err->code == DecodeErrorCode::MissingKey);
  CHECK(err->message().find("pg.inventory.products/3@42") != std::string::npos);
  CHECK(err->message().find("key") != std::string::npos);
}

TEST_CASE("Unchanged TOAST columns become a partial-column update", "[decode][toast]") {
  Run run;
  const std::string src = R"("source":{"connector":"postgresql","db":"postgres","schema":"public","table":"docs","ts_ms":1,"lsn":5})";
  REQUIRE_FALSE(run(R"({"before":null,"after":{"id":1,"title":"t2","body":"__debezium_unavailable_value","data":"X19kZWJleml1bV91bmF2YWlsYWJsZV92YWx1ZQ==","tags":["__debezium_unavailable_value"],"n":[95,95,100,101,98,101,122,105,117,109,95,117,110,97,118,97,105,108,97,98,108,101,95,118,97,108,117,101],"h":{"__debezium_unavailable_value":"__debezium_unavailable_value"}},)" +
                        src + R"(,"op":"u"})",
                    std::string_view(R"({"id":1})"), "pg.public.docs"));
  REQUIRE(run.change.rows.size() == 1);
  CHECK(run.row() == R"({"id":1,"title":"t2","__DORIS_DELETE_SIGN__":0})");
  CHECK(run.change.rows[0].partial_columns == std::vector<std::string>{"id", "title", "__DORIS_DELETE_SIGN__"});
  CHECK(run.dec.stats().partial_rows == 1);

  DecoderOptions o;
  o.toast_placeholders = {"__toasted__"};
  Run custom(o);
  REQUIRE_FALSE(custom(R"({"before":null,"after":{"id":1,"body":"__toasted__","other":"__debezium_unavailable_value"},)" + src + R"(,"op":"u"})",
                       std::string_view(R"({"id":1})"), "pg.public.docs"));
  CHECK(custom.row() == R"({"id":1,"other":"__debezium_unavailable_value","__DORIS_DELETE_SIGN__":0})");
}

TEST_CASE("A TOAST placeholder in a row for a new key is a bad record, not a silent NULL", "[decode][toast]") {
  Run run;
  const std::string src = R"("source":{"connector":"postgresql","db":"postgres","schema":"public","table":"docs","ts_ms":1,"lsn":5})";
  // A PostgreSQL key change under REPLICA IDENTITY DEFAULT: the create of the
  // new key carries the placeholder for the unchanged TOASTed column.
  auto err = run(R"({"before":null,"after":{"id":2,"title":"t","body":"__debezium_unavailable_value"},)" + src + R"(,"op":"c"})",
                 std::string_view(R"({"id":2})"), "pg.public.docs", 17);
  REQUIRE(err);
  CHECK(err->code == DecodeErrorCode::Unsupported);
  CHECK(err->path == "value.after.body");
  const std::string msg = err->message();
  CHECK(msg.find("pg.public.docs") != std::string::npos);
  CHECK(msg.find("@17") != std::string::npos);
  CHECK(msg.find("new key") != std::string::npos);
  CHECK(msg.find("REPLICA IDENTITY FULL") != std::string::npos);
  CHECK(msg.find("__debezium_unavailable_value") != std::string::npos);
  // The same in an update that changes the key within one record.
  err = run(R"({"before":{"id":1,"title":"t","body":"x"},"after":{"id":2,"title":"t","body":"__debezium_unavailable_value"},)" + src +
                R"(,"op":"u"})",
            std::string_view(R"({"id":2})"), "pg.public.docs", 18);
  REQUIRE(err);
  CHECK(err->path == "value.after.body");
  // An update of an existing key stays a partial-column update.
  REQUIRE_FALSE(run(R"({"before":null,"after":{"id":2,"title":"t","body":"__debezium_unavailable_value"},)" + src + R"(,"op":"u"})",
                    std::string_view(R"({"id":2})"), "pg.public.docs"));
  CHECK(run.row() == R"({"id":2,"title":"t","__DORIS_DELETE_SIGN__":0})");
}

TEST_CASE("Extra columns: op, source timestamp and a sequence from the binlog position", "[decode][extra]") {
  DecoderOptions o;
  o.extra_columns.op = "_op";
  o.extra_columns.source_ts = "_ts";
  o.extra_columns.sequence = "_seq";
  o.extra_columns_per_table["inventory.other"] = ExtraColumns{};
  Run run(o);
  REQUIRE_FALSE(run(mysql("u", "null", R"({"id":5})"), std::string_view(R"({"id":5})")));
  const int64_t seq = (int64_t{3} << 43) | (int64_t{154} << 11) | 2;
  CHECK(run.row() == R"({"id":5,"_op":"u","_ts":1700000000000,"_seq":)" + std::to_string(seq) + R"(,"__DORIS_DELETE_SIGN__":0})");
  std::string other = mysql("c", "null", R"({"id":5})");
  other.replace(other.find(R"("table":"customers")"), 19, R"("table":"other")");
  REQUIRE_FALSE(run(other, std::string_view(R"({"id":5})")));
  CHECK(run.row() == R"({"id":5,"__DORIS_DELETE_SIGN__":0})");
}

TEST_CASE("Flattened (ExtractNewRecordState) records", "[decode][flattened]") {
  DecoderOptions o;
  o.envelope = Envelope::Flattened;
  Run run(o);
  REQUIRE_FALSE(run(R"({"id":1,"name":"x","__op":"c","__table":"customers","__db":"inventory","__source_ts_ms":17,"__deleted":"false"})",
                    std::string_view(R"({"id":1})"), "dbserver1.inventory.customers"));
  CHECK(run.change.op == 'c');
  CHECK(run.change.table == "customers");
  CHECK(run.change.position.ts_ms == 17);
  CHECK(run.row() == R"({"id":1,"name":"x","__DORIS_DELETE_SIGN__":0})");

  REQUIRE_FALSE(run(R"({"id":1,"name":"x","__deleted":"true"})", std::string_view(R"({"id":1})")));
  CHECK(run.change.op == 'd');
  CHECK(run.row() == R"({"id":1,"name":"x","__DORIS_DELETE_SIGN__":1})");

  // delete.tombstone.handling.mode=tombstone: a null value deletes the key
  REQUIRE_FALSE(run(std::nullopt, std::string_view(R"({"schema":{"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"}],"optional":false,"name":"k.Key"},"payload":{"id":1}})")));
  CHECK(run.change.kind == Kind::Change);
  CHECK(run.change.op == 'd');
  CHECK(run.row() == R"({"id":1,"__DORIS_DELETE_SIGN__":1})");

  // A bare row without any metadata is an upsert in flattened mode ...
  REQUIRE_FALSE(run(R"({"id":1004,"first_name":"Anne"})", std::string_view(R"({"id":1004})")));
  CHECK(run.row() == R"({"id":1004,"first_name":"Anne","__DORIS_DELETE_SIGN__":0})");
  // ... and a clear error in envelope mode.
  Run env;
  auto err = env(R"({"id":1004,"first_name":"Anne"})");
  REQUIRE(err);
  CHECK(err->code == DecodeErrorCode::NotAnEnvelope);
  CHECK(err->message().find("not a") == std::string::npos);
  CHECK(err->expected.find("flattened") != std::string::npos);
}

TEST_CASE("Non-data records are recognised and counted", "[decode][kinds]") {
  Run run;
  REQUIRE_FALSE(run(R"({"ts_ms":1700000000000})", std::string_view(R"({"serverName":"dbserver1"})"), "__debezium-heartbeat.dbserver1"));
  CHECK(run.change.kind == Kind::Heartbeat);
  REQUIRE_FALSE(run(R"({"status":"BEGIN","id":"571:53195829","event_count":null,"data_collections":null,"ts_ms":1})", std::nullopt, "dbserver1.transaction"));
  CHECK(run.change.kind == Kind::TransactionMetadata);
  REQUIRE_FALSE(run(R"({"source":{"connector":"mysql","db":"inventory","ts_ms":1},"ts_ms":1,"databaseName":"inventory","schemaName":null,"ddl":"ALTER TABLE customers ADD COLUMN x INT","tableChanges":[]})",
                    std::string_view(R"({"databaseName":"inventory"})"), "dbserver1"));
  CHECK(run.change.kind == Kind::SchemaChange);
  CHECK(run.change.ddl == "ALTER TABLE customers ADD COLUMN x INT");
  REQUIRE_FALSE(run(R"({"source":{"connector":"mysql","db":"inventory","table":"customers","ts_ms":1},"op":"t","ts_ms":1})"));
  CHECK(run.change.kind == Kind::Truncate);
  CHECK(run.change.table == "customers");
  REQUIRE_FALSE(run(R"({"op":"m","ts_ms":1,"source":{"connector":"postgresql","db":"p","schema":"","table":""},"message":{"prefix":"x","content":"Ymfy"}})", std::nullopt, "pg.message"));
  CHECK(run.change.kind == Kind::Message);
  CHECK(run.change.rows.empty());
  const auto& s = run.dec.stats();
  CHECK(s.heartbeats == 1);
  CHECK(s.transaction_records == 1);
  CHECK(s.schema_changes == 1);
  CHECK(s.truncates == 1);
  CHECK(s.messages == 1);
}

TEST_CASE("Bad input yields errors naming the record, the field and the expectation", "[decode][errors]") {
  struct Case {
    std::string value;
    DecodeErrorCode code;
    std::string path;
  };
  const std::vector<Case> cases = {
      {R"({"before":null,"after":{"id":1},"op":"c")", DecodeErrorCode::InvalidJson, ""},
      {R"({"before":null,"after":{"id":1,},"op":"c"})", DecodeErrorCode::InvalidJson, "value.after"},
      {"{\"before\":null,\"after\":{\"id\":\"\xff\xfe\"},\"op\":\"c\"}", DecodeErrorCode::InvalidUtf8, ""},
      {R"({"before":null,"after":{"id":1},"source":{"db":"a","table":"b"}})", DecodeErrorCode::MissingField, "value"},
      {R"({"before":null,"after":{"id":1},"op":"x"})", DecodeErrorCode::BadOp, "value.op"},
      {R"({"before":null,"after":{"id":1},"op":7})", DecodeErrorCode::BadOp, "value.op"},
      {R"({"before":null,"after":null,"op":"c"})", DecodeErrorCode::MissingField, "value.after"},
      {R"({"before":null,"op":"u"})", DecodeErrorCode::MissingField, "value.after"},
      {R"({"before":null,"after":[1],"op":"c"})", DecodeErrorCode::TypeMismatch, "value.after"},
      {R"({"before":null,"after":{"a":{"b":{"c":{"d":1}}}},"op":"c"})", DecodeErrorCode::TooDeep, "value.after.a.b.c.d"},
      {R"({"before":null,"after":{"id":01},"op":"c"})", DecodeErrorCode::InvalidJson, "value.after.id"},
      {R"({"before":null,"after":{"s":"a\qb"},"op":"c"})", DecodeErrorCode::InvalidJson, "value.after.s"},
      {R"([1,2])", DecodeErrorCode::InvalidJson, ""},
      {R"("just a string")", DecodeErrorCode::InvalidJson, ""},
      {R"({"before":"{\"_id\": 1}","after":"{\"_id\": 1}","source":{"connector":"mongodb","db":"d","collection":"c"},"op":"u"})", DecodeErrorCode::Unsupported, "value"},
  };
  DecoderOptions o;
  o.max_depth = 3;
  Run run(o);
  for (const auto& c : cases) {
    INFO(c.value);
    auto err = run(c.value, std::nullopt, "t.db.tbl", 99);
    REQUIRE(err);
    CHECK(err->code == c.code);
    if (!c.path.empty()) CHECK(err->path == c.path);
    CHECK(err->topic == "t.db.tbl");
    CHECK(err->partition == 3);
    CHECK(err->offset == 99);
    CHECK(err->message().rfind("t.db.tbl/3@99: ", 0) == 0);
    CHECK_FALSE(err->expected.empty());
    auto e = err->to_error();
    CHECK(e.disposition() == cdc2doris::Disposition::Fail);
    CHECK(e.context().offset == 99);
  }
  CHECK(run.dec.stats().errors == cases.size());

  DecoderOptions small;
  small.max_record_bytes = 10;
  Run tiny(small);
  auto err = tiny(mysql("c", "null", R"({"id":1})"));
  REQUIRE(err);
  CHECK(err->code == DecodeErrorCode::TooLarge);
}

TEST_CASE("Values that contradict the schema are rejected with the field path", "[decode][errors][logical]") {
  Run run;
  auto with = [&](std::string_view field, std::string_view bad) {
    std::string row = kTypedRow;
    const std::string needle = "\"" + std::string(field) + "\":";
    auto pos = row.find(needle);
    REQUIRE(pos != std::string::npos);
    auto start = pos + needle.size();
    auto end = row.find_first_of(",}", start);
    if (row[start] == '{') end = row.find('}', start) + 1;
    if (row[start] == '[') end = row.find(']', start) + 1;
    if (row[start] == '"') {
      end = start + 1;
      while (row[end] != '"') end += row[end] == '\\' ? 2 : 1;
      ++end;
    }
    row.replace(start, end - start, bad);
    return run(schema_envelope(R"({"before":null,"after":)" + row + R"(,"source":{"connector":"mysql","db":"inventory","table":"customers","ts_ms":1},"op":"c"})"));
  };
  struct Case {
    const char* field;
    const char* bad;
  };
  for (auto c : {Case{"id", "\"12\""}, Case{"id", "1.5"}, Case{"price", "\"not base64!\""}, Case{"d", "\"2024-01-01\""},
                 Case{"zts", "\"yesterday\""}, Case{"j", "\"{not json\""}, Case{"flag", "1"}, Case{"y", "99999999999"},
                 Case{"vsd", "{\"scale\":1}"}, Case{"dates", "[\"x\"]"}}) {
    INFO(c.field << " = " << c.bad);
    auto err = with(c.field, c.bad);
    REQUIRE(err);
    CHECK((err->code == DecodeErrorCode::TypeMismatch || err->code == DecodeErrorCode::MissingField));
    CHECK(err->path.rfind(std::string("value.payload.after.") + c.field, 0) == 0);
  }
}

TEST_CASE("Unknown time zone is a construction error", "[decode][options]") {
  DecoderOptions o;
  o.time_zone = "Mars/Olympus";
  CHECK_THROWS_AS(Decoder(o), std::invalid_argument);
}

TEST_CASE("Schemaless type hints follow the record's own table, also when a topic carries several", "[decode][hints]") {
  // Two tables on one topic (a topic-routing SMT): the decoder predicts the
  // hint from the topic's previous record and must not apply the wrong one.
  const SchemaNode dates = compile_schema(
      R"({"type":"struct","fields":[{"field":"id","type":"int64"},{"field":"d","type":"int32","name":"io.debezium.time.Date"}]})");
  const SchemaNode texts = compile_schema(
      R"({"type":"struct","fields":[{"field":"id","type":"int64"},{"field":"d","type":"string"}]})");
  const SchemaNode ints = compile_schema(
      R"({"type":"struct","fields":[{"field":"id","type":"int64"},{"field":"d","type":"int32"}]})");
  Run run;
  run.context = [&](const Change& c) {
    const std::string& t = c.table;
    return TableContext{nullptr, t == "dated" ? &dates : t == "texted" ? &texts : t == "counted" ? &ints : nullptr};
  };
  auto rec = [](std::string_view table, std::string_view op, std::string_view before, std::string_view after) {
    std::string src = kMysqlSource;
    src.replace(src.find("\"customers\""), 11, "\"" + std::string(table) + "\"");
    return std::string(R"({"before":)") + std::string(before) + R"(,"after":)" + std::string(after) + "," + src +
           R"(,"op":")" + std::string(op) + R"(","ts_ms":1})";
  };
  const std::string_view topic = "routed.all";
  const std::string_view key = R"({"id":1})";
  REQUIRE_FALSE(run(rec("dated", "c", "null", R"({"id":1,"d":19000})"), key, topic));
  CHECK(run.row() == R"({"id":1,"d":"2022-01-08","__DORIS_DELETE_SIGN__":0})");
  // Same topic, other table: the predicted (dated) hint would reject "x".
  REQUIRE_FALSE(run(rec("texted", "c", "null", R"({"id":1,"d":"x"})"), key, topic));
  CHECK(run.row() == R"({"id":1,"d":"x","__DORIS_DELETE_SIGN__":0})");
  REQUIRE_FALSE(run(rec("dated", "u", R"({"id":1,"d":19000})", R"({"id":1,"d":19001})"), key, topic));
  CHECK(run.row() == R"({"id":1,"d":"2022-01-09","__DORIS_DELETE_SIGN__":0})");
  // The predicted (dated) hint would accept 19001 and silently make it a date.
  REQUIRE_FALSE(run(rec("counted", "u", R"({"id":1,"d":19000})", R"({"id":1,"d":19001})"), key, topic));
  CHECK(run.row() == R"({"id":1,"d":19001,"__DORIS_DELETE_SIGN__":0})");
  // A delete converts the whole before-image with its own table's hint.
  REQUIRE_FALSE(run(rec("dated", "d", R"({"id":1,"d":19001})", "null"), key, topic));
  CHECK(run.row() == R"({"id":1,"d":"2022-01-09","__DORIS_DELETE_SIGN__":1})");
  REQUIRE_FALSE(run(rec("counted", "d", R"({"id":1,"d":19001})", "null"), key, topic));
  CHECK(run.row() == R"({"id":1,"d":19001,"__DORIS_DELETE_SIGN__":1})");
  // A value that contradicts its own table's hint is still an error.
  auto err = run(rec("dated", "c", "null", R"({"id":1,"d":"x"})"), key, topic);
  REQUIRE(err);
  CHECK(err->code == DecodeErrorCode::TypeMismatch);
  CHECK(err->path == "value.after.d");
}

TEST_CASE("Identify reads the record and convert writes its rows with the context given", "[decode][identify]") {
  // The decoder routes nothing: the caller identifies, chooses the context
  // (here: key columns and Doris column types), then converts.
  const SchemaNode row = schema_from_doris({{"id", "BIGINT", {}, {}}, {"no", "STRING", {}, {}}, {"d", "DATEV2", {}, {}}});
  TableOptions opts;
  opts.key_columns = {"no"};
  Decoder d({});
  Change c;
  const std::string v = R"({"before":{"id":1,"no":"A","d":19722},"after":{"id":1,"no":"B","d":19723},)"
                        R"("source":{"connector":"mysql","db":"db","table":"t"},"op":"u"})";
  const std::string k = R"({"id":1})";
  const KafkaRecord r{"topic.db.t", 0, 5, std::string_view(k), std::string_view(v), {}};
  REQUIRE_FALSE(d.identify(r, c));
  CHECK(c.kind == Kind::Change);
  CHECK(c.db == "db");
  CHECK(c.table == "t");
  CHECK(c.op == 'u');
  CHECK(c.rows.empty());
  CHECK(d.wants_column_types());
  REQUIRE_FALSE(d.convert(TableContext{&opts, &row}, c));
  CHECK(c.key_columns == std::vector<std::string>{"no"});
  CHECK(c.primary_key_changed);  // by the context's key column, not the Kafka key's
  REQUIRE(c.rows.size() == 2);
  CHECK(c.rows[0].json == R"({"id":1,"no":"A","d":"2023-12-31","__DORIS_DELETE_SIGN__":1})");
  CHECK(c.rows[1].json == R"({"id":1,"no":"B","d":"2024-01-01","__DORIS_DELETE_SIGN__":0})");
  // The same record without a context: the Kafka key, values as they came.
  REQUIRE_FALSE(d.decode(r, c));
  CHECK(c.key_columns == std::vector<std::string>{"id"});
  REQUIRE(c.rows.size() == 1);
  CHECK(c.rows[0].json == R"({"id":1,"no":"B","d":19723,"__DORIS_DELETE_SIGN__":0})");
  // A record with its Connect schema does not want column types.
  const std::string typed = R"({"schema":{"type":"struct","fields":[{"field":"before","type":"struct","optional":true,)"
                            R"("fields":[{"field":"id","type":"int64"}]},{"field":"after","type":"struct","optional":true,)"
                            R"("fields":[{"field":"id","type":"int64"}]},{"field":"op","type":"string"}]},)"
                            R"("payload":{"before":null,"after":{"id":2},"op":"c"}})";
  REQUIRE_FALSE(d.identify({"topic.db.t", 0, 6, std::string_view(k), std::string_view(typed), {}}, c));
  CHECK_FALSE(d.wants_column_types());
}

TEST_CASE("A schemaless record typed by its Doris table flags a JSON key the table has no column for",
          "[decoder][schemaless]") {
  // Every column of the table is in the hint, typed or copied as it is; only
  // a key of none of them is unknown (schema evolution adds it or refuses it).
  static const SchemaNode row = schema_from_doris({{"id", "BIGINT", {}, {}}, {"v", "STRING", {}, {}}, {"d", "DATEV2", {}, {}}});
  Decoder d({});
  Change c;
  auto decode = [&](const std::string& after) {
    const std::string v = R"({"before":null,"after":)" + after +
                          R"(,"source":{"connector":"mysql","db":"db","table":"t"},"op":"c"})";
    const std::string k = R"({"id":1})";
    REQUIRE_FALSE(d.decode({"topic", 0, 0, std::string_view(k), std::string_view(v), {}}, c, TableContext{nullptr, &row}));
    return c.unknown_columns;
  };
  CHECK_FALSE(decode(R"({"id":1,"v":"x","d":19723})"));
  CHECK(c.rows.at(0).json == R"({"id":1,"v":"x","d":"2024-01-01","__DORIS_DELETE_SIGN__":0})");
  CHECK(decode(R"({"id":1,"v":"x","extra":2})"));
  CHECK(c.rows.at(0).json == R"({"id":1,"v":"x","extra":2,"__DORIS_DELETE_SIGN__":0})");
  CHECK_FALSE(decode(R"({"id":1})"));
}
