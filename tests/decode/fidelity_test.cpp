// Values land in Doris exactly as the source holds them (issue 12): zone
// rules past the last stored transition, JSON scalars, deletes under
// REPLICA IDENTITY DEFAULT, and errors that name the right part of a record.
#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "core/decode/decoder.hpp"
#include "tests/decode/decode_run.hpp"
#include "core/decode/doris_types.hpp"
#include "tools/doris_emulator/engine.hpp"

using namespace cdc2doris::decode;

namespace {

struct Run : test::DecodeRun {
  explicit Run(DecoderOptions o = {}) : DecodeRun(std::move(o), "pg.public.t", 0) {}
};

const std::string kPgSource =
    R"("source":{"version":"3.6.1.Final","connector":"postgresql","name":"pg","ts_ms":1700000000000,"snapshot":"false","db":"shop","schema":"public","table":"t","txId":771,"lsn":24023128})";

// A schema envelope of a row with one column `v` of the given Connect type.
std::string one_column(std::string_view column_schema, std::string_view op, std::string_view before, std::string_view after) {
  const std::string row = R"({"type":"struct","optional":true,"name":"pg.public.t.Value","fields":[{"type":"int32","optional":false,"field":"id"},)" +
                          std::string(column_schema) + "]";
  const std::string schema = R"({"type":"struct","fields":[)" + row + R"(,"field":"before"},)" + row +
                             R"(,"field":"after"},{"type":"struct","fields":[{"type":"string","optional":false,"field":"connector"}],"optional":false,"name":"io.debezium.connector.postgresql.Source","field":"source"},{"type":"string","optional":false,"field":"op"}],"optional":false,"name":"pg.public.t.Envelope"})";
  return R"({"schema":)" + schema + R"(,"payload":{"before":)" + std::string(before) + R"(,"after":)" + std::string(after) + "," +
         kPgSource + R"(,"op":")" + std::string(op) + R"("}})";
}

std::string zoned_row(const char* zone, std::string_view instant) {
  DecoderOptions o;
  o.time_zone = zone;
  Run run(o);
  const auto err = run(one_column(R"({"type":"string","optional":true,"name":"io.debezium.time.ZonedTimestamp","field":"v"})", "c", "null",
                                  R"({"id":1,"v":")" + std::string(instant) + R"("})"));
  if (err) return err->message();
  return run.row();
}

}  // namespace

TEST_CASE("Zoned timestamps after the tz file's last transition follow its POSIX rule", "[decode][zoned][issue12]") {
  // tzif files list transitions up to 2037 at most ("slim" files far fewer);
  // later instants are governed by the footer's rule (CET-1CEST,M3.5.0,M10.5.0/3).
  CHECK(zoned_row("Europe/Berlin", "2040-07-01T12:00:00Z") == R"({"id":1,"v":"2040-07-01 14:00:00","__DORIS_DELETE_SIGN__":0})");
  CHECK(zoned_row("Europe/Berlin", "2040-01-15T12:00:00Z") == R"({"id":1,"v":"2040-01-15 13:00:00","__DORIS_DELETE_SIGN__":0})");
  CHECK(zoned_row("Europe/Berlin", "2100-07-01T00:30:00.5Z") == R"({"id":1,"v":"2100-07-01 02:30:00.500000","__DORIS_DELETE_SIGN__":0})");
  // A zone whose rule changed: Greenland moved to -02 with DST to -01 from
  // 2024 (tzdata 2023c); summer 2040 is -01.
  CHECK(zoned_row("America/Nuuk", "2040-07-01T12:00:00Z") == R"({"id":1,"v":"2040-07-01 11:00:00","__DORIS_DELETE_SIGN__":0})");
  CHECK(zoned_row("America/Nuuk", "2040-01-15T12:00:00Z") == R"({"id":1,"v":"2040-01-15 10:00:00","__DORIS_DELETE_SIGN__":0})");
  // Unchanged where the stored transitions apply.
  CHECK(zoned_row("Europe/Berlin", "2024-10-27T00:30:00Z") == R"({"id":1,"v":"2024-10-27 02:30:00","__DORIS_DELETE_SIGN__":0})");
  CHECK(zoned_row("Europe/Berlin", "1969-07-01T12:00:00Z") == R"({"id":1,"v":"1969-07-01 13:00:00","__DORIS_DELETE_SIGN__":0})");
}

TEST_CASE("Invalid time zone names are rejected when the decoder is built", "[decode][zoned][issue12]") {
  for (const char* bad : {"Mars/Olympus", "Europe/Berlinx", "../etc/passwd", "Europe/"}) {
    DecoderOptions o;
    o.time_zone = bad;
    CHECK_THROWS_AS(Decoder(o), std::invalid_argument);
  }
  for (const char* good : {"UTC", "Etc/UTC", "Asia/Shanghai", "America/Sao_Paulo"}) {
    DecoderOptions o;
    o.time_zone = good;
    CHECK_NOTHROW(Decoder(o));
  }
}

namespace {

// The emulator's Doris engine (same value semantics as Doris: a string
// loaded into a JSON column is parsed as JSON text, a delete sign deletes by
// key, partial rows update only their columns).
struct Doris {
  cdc2doris::emu::Engine e{cdc2doris::emu::Config{}};
  explicit Doris(const std::string& ddl) {
    e.recover();
    e.execute_sql("", "CREATE DATABASE IF NOT EXISTS d");
    e.execute_sql("d", ddl);
  }
  // One Stream Load of decoded rows, with the headers cdc2doris sends.
  void load(const std::string& table, const std::vector<Row>& rows) {
    std::string body;
    for (const auto& r : rows) body += r.json + "\n";
    cdc2doris::emu::LoadRequest r;
    r.db = "d";
    r.table = table;
    r.headers = {{"format", "json"}, {"read_json_by_line", "true"}, {"strict_mode", "true"}};
    if (rows.front().partial_columns.empty()) {
      r.headers["hidden_columns"] = "__DORIS_DELETE_SIGN__";
    } else {
      std::string cols;
      for (const auto& c : rows.front().partial_columns) cols += (cols.empty() ? "" : ",") + c;
      r.headers["partial_columns"] = "true";
      r.headers["columns"] = cols;
    }
    r.authorization = "Basic cm9vdDo=";
    r.content_length = static_cast<int64_t>(body.size());
    cdc2doris::emu::Reply early;
    auto l = e.start_load(r, &early);
    INFO(early.body);
    REQUIRE(l);
    l->feed(body.data(), body.size());
    const std::string reply = l->finish().body;
    INFO(reply);
    REQUIRE(reply.find("\"Status\": \"Success\"") != std::string::npos);
  }
  std::vector<std::string> rows(const std::string& table) {
    std::vector<std::string> out;
    const std::string s = *e.rows_jsonl("d", table);
    for (size_t p = 0; p < s.size();) {
      const auto nl = s.find('\n', p);
      out.push_back(s.substr(p, nl - p));
      p = nl == std::string::npos ? s.size() : nl + 1;
    }
    return out;
  }
};

const char* kJsonColumn = R"({"type":"string","optional":true,"name":"io.debezium.data.Json","version":1,"field":"v"})";

}  // namespace

TEST_CASE("Every kind of JSON value reaches a Doris JSON column as the source holds it", "[decode][json][issue12]") {
  // Debezium carries json/jsonb as a string of JSON text; `null` (no quotes)
  // is SQL NULL, "null" the JSON null.
  struct Case {
    const char* debezium;  // the after.v token
    const char* in_doris;  // the stored JSON value (emulator rows_jsonl)
  };
  const Case cases[] = {
      {R"("{\"k\": [1, 2.50, \"x\"]}")", R"({"k":[1,2.50,"x"]})"},
      {R"("[1, \"two\", null]")", R"([1,"two",null])"},
      {R"("\"just a string\"")", R"("just a string")"},
      {R"("\"{\\\"looks\\\": \\\"like an object\\\"}\"")", R"("{\"looks\": \"like an object\"}")"},
      {R"("12.5")", "12.5"},
      {R"("true")", "true"},
      {R"("null")", "null"},
      {"null", "null"},
  };
  Run run;
  std::vector<Row> decoded;
  int id = 0;
  for (const auto& c : cases) {
    INFO(c.debezium);
    const std::string after = R"({"id":)" + std::to_string(++id) + R"(,"v":)" + c.debezium + "}";
    REQUIRE_FALSE(run(one_column(kJsonColumn, "c", "null", after)));
    decoded.push_back(run.change.rows.at(0));
  }
  Doris doris("CREATE TABLE t (id INT, v JSON) UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1");
  doris.load("t", decoded);
  const auto rows = doris.rows("t");
  REQUIRE(rows.size() == std::size(cases));
  id = 0;
  for (const auto& c : cases) {
    INFO(c.debezium);
    // Compared as JSON values: the emulator prints numbers its own way (2.5E0).
    CHECK(boost::json::parse(rows[static_cast<size_t>(id)]) ==
          boost::json::parse(R"({"id":)" + std::to_string(id + 1) + R"(,"v":)" + c.in_doris + "}"));
    ++id;
  }
}

TEST_CASE("A JSON column whose text is not one JSON value is a bad record, not a NULL", "[decode][json][issue12]") {
  Run run;
  // "1,2" and "1]" are one valid document once wrapped in [ ] (two values;
  // an empty array and a stray bracket): the validation must still see the
  // text as it is.
  for (const char* bad : {R"("{not json")", R"("1 2")", R"("")", R"("\"unterminated")", R"("1,2")", R"("1],[2")",
                          R"("[01]")", R"("{\"a\":tru}")", R"("\"bad \\q escape\"")"}) {
    INFO(bad);
    const auto err = run(one_column(kJsonColumn, "c", "null", std::string(R"({"id":1,"v":)") + bad + "}"));
    REQUIRE(err);
    CHECK(err->code == DecodeErrorCode::TypeMismatch);
    CHECK(err->path.rfind("value.payload.after.v", 0) == 0);  // the column, or where inside its text
  }
  const auto err = run(one_column(kJsonColumn, "c", "null", R"({"id":1,"v":"1],[2"})"));
  REQUIRE(err);
  CHECK(err->detail ==
        "io.debezium.data.Json string: a single JSON value in an io.debezium.data.Json string (more content at byte 2 "
        "of the text)");
}

TEST_CASE("A JSON column's text nests no deeper than max_depth, whichever check decides", "[decode][json][issue18]") {
  // check_json_text() takes simdjson DOM's acceptance as the verdict, with
  // DOM's depth limit set to the walk's; what DOM refuses is walked. An
  // integer beyond 64 bits (valid JSON, refused by DOM) forces the walk, so
  // each text is decided once by each check at the same nesting, with a
  // scalar and with an empty container innermost: the verdicts must agree,
  // and match max_depth.
  const std::string big = "123456789012345678901234567890";
  auto nest = [](size_t n, const std::string& inner) { return std::string(n, '[') + inner + std::string(n, ']'); };
  for (const size_t max_depth : {3, 4, 6}) {
    DecoderOptions o;
    o.max_depth = max_depth;
    Run run(o);
    auto accepted = [&](const std::string& text) {
      const auto err = run(one_column(kJsonColumn, "c", "null", R"({"id":1,"v":")" + text + R"("})"));
      if (err) CHECK(err->code == DecodeErrorCode::TooDeep);
      return !err;
    };
    bool accepted_any = false, refused_any = false;
    for (size_t n = 0; n <= max_depth + 1; ++n) {
      INFO("max_depth " << max_depth << ", nesting " << n);
      const bool dom_scalar = accepted(nest(n, "1"));
      CHECK(dom_scalar == accepted(nest(n, big)));
      // Empty innermost: a sibling big integer one level up forces the walk.
      const bool dom_empty = accepted("[" + nest(n, "[]") + ",1]");
      CHECK(dom_empty == accepted("[" + nest(n, "[]") + "," + big + "]"));
      accepted_any = accepted_any || dom_scalar;
      refused_any = refused_any || !dom_scalar;
    }
    CHECK(accepted_any);
    CHECK(refused_any);
  }
}

TEST_CASE("Errors in the value name the value and where in it, even when the key was parsed first", "[decode][errors][issue19]") {
  Run run;
  const std::string_view key = R"({"id":-1})";
  auto err = run(std::string_view(R"({"before":null,"after":{"id":)"), key);
  REQUIRE(err);
  CHECK(err->code == DecodeErrorCode::InvalidJson);
  CHECK(err->path == "value");
  CHECK(err->detail == "truncated or trailing content: it ends at byte 28 of 29 with ':'");

  // A structural error inside the payload: the byte offset of the offending token.
  err = run(std::string_view(R"({"before":null,"after":{"id":1,,"x":1},"op":"c"})"), key);
  REQUIRE(err);
  CHECK(err->path == "value.after");
  CHECK(err->detail.find("(at byte 31 of the value)") != std::string::npos);

  // Wrapped: the same, and the key (also a wrapper) stays out of it.
  err = run(std::string_view(R"({"schema":null,"payload":{"before":null,"after":{"id":1 "x":1},"op":"c"}})"),
            std::string_view(R"({"schema":null,"payload":{"id":-1}})"));
  REQUIRE(err);
  CHECK(err->path == "value.payload.after");
  CHECK(err->detail.find("(at byte 56 of the value)") != std::string::npos);

  // A broken key alone is still named as the key (when a delete needs it).
  err = run(std::string_view(R"({"before":null,"after":null,"op":"d"})"), std::string_view(R"({"id":)"));
  REQUIRE(err);
  CHECK(err->path.rfind("key", 0) == 0);
}

namespace {

// PostgreSQL table t (id int primary key, name text not null, qty int not null,
// doc jsonb not null, note text) as Debezium 3.6 sends it.
const std::string kDefaultsColumns =
    R"({"type":"string","optional":false,"field":"name"},{"type":"int32","optional":false,"field":"qty"},)"
    R"({"type":"string","optional":false,"name":"io.debezium.data.Json","version":1,"field":"doc"},)"
    R"({"type":"string","optional":true,"field":"note"})";
const char* kDefaultsDdl =
    "CREATE TABLE t (id INT NOT NULL, name STRING NOT NULL, qty INT NOT NULL, doc JSON NOT NULL, note STRING) "
    "UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1";

}  // namespace

TEST_CASE("A REPLICA IDENTITY DEFAULT delete (key plus type defaults) deletes by key", "[decode][delete][issue12]") {
  Run run;
  const std::string_view key = R"({"id":5})";
  Doris doris(kDefaultsDdl);
  REQUIRE_FALSE(run(one_column(kDefaultsColumns, "c", "null", R"({"id":5,"name":"Anne","qty":3,"doc":"{\"a\": 1}","note":"x"})"), key));
  doris.load("t", run.change.rows);
  REQUIRE_FALSE(run(one_column(kDefaultsColumns, "c", "null", R"({"id":6,"name":"Bob","qty":1,"doc":"[]","note":null})"), key));
  doris.load("t", run.change.rows);
  REQUIRE(doris.rows("t").size() == 2);

  // Debezium 3.6: the key, "" / 0 for NOT NULL columns, null for the rest.
  // Here the jsonb default "" is no JSON text: it must not fail the delete.
  REQUIRE_FALSE(run(one_column(kDefaultsColumns, "d", R"({"id":5,"name":"","qty":0,"doc":"","note":null})", "null"), key));
  REQUIRE(run.change.rows.size() == 1);
  CHECK(run.row() == R"({"id":5,"__DORIS_DELETE_SIGN__":1})");
  CHECK(run.change.rows[0].partial_columns == std::vector<std::string>{"id", "__DORIS_DELETE_SIGN__"});
  doris.load("t", run.change.rows);
  CHECK(doris.rows("t") == std::vector<std::string>{R"({"id":6,"name":"Bob","qty":1,"doc":[],"note":null})"});

  // Defaults that do convert: a full row with sign 1, and the values do not matter.
  REQUIRE_FALSE(run(one_column(kDefaultsColumns, "d", R"({"id":6,"name":"","qty":0,"doc":"{}","note":null})", "null"),
                    std::string_view(R"({"id":6})")));
  CHECK(run.row() == R"({"id":6,"name":"","qty":0,"doc":"{}","note":null,"__DORIS_DELETE_SIGN__":1})");
  doris.load("t", run.change.rows);
  CHECK(doris.rows("t").empty());
}

TEST_CASE("A delete whose key column does not convert is still a bad record", "[decode][delete][issue12]") {
  Run run;
  const std::string key_schema = R"({"type":"string","optional":false,"name":"io.debezium.data.Json","version":1,"field":"k"})";
  const auto err = run(one_column(key_schema, "d", R"({"id":5,"k":""})", "null"), std::string_view(R"({"id":5,"k":""})"));
  REQUIRE(err);
  CHECK(err->code == DecodeErrorCode::TypeMismatch);
  CHECK(err->path == "value.payload.before.k");
}

// ------------------------------------------------ schemaless, typed by Doris

namespace {

const std::vector<DorisColumn> kDorisColumns = {
    {"id", "INT", std::nullopt, std::nullopt},
    {"amount", "DECIMALV3", 10, 2},
    {"born", "DATEV2", std::nullopt, std::nullopt},
    {"created", "DATETIMEV2", std::nullopt, 3},   // MySQL DATETIME(3): epoch ms
    {"updated", "DATETIMEV2", std::nullopt, 6},   // timestamptz: ISO instant with a zone
    {"seen_us", "DATETIMEV2", std::nullopt, 6},   // MicroTimestamp near 1970: unit set explicitly
    {"doc", "JSONB", std::nullopt, std::nullopt},
    {"name", "VARCHAR", std::nullopt, std::nullopt},
};

std::string schemaless_pg(std::string_view op, std::string_view before, std::string_view after) {
  return R"({"before":)" + std::string(before) + R"(,"after":)" + std::string(after) + "," + kPgSource + R"(,"op":")" +
         std::string(op) + R"("})";
}

}  // namespace

TEST_CASE("Schemaless records are typed by their Doris target columns", "[decode][schemaless][issue12]") {
  const SchemaNode row = schema_from_doris(kDorisColumns, {{"seen_us", EpochUnit::Micros}});
  DecoderOptions o;
  o.time_zone = "Europe/Berlin";
  Run run(o);
  run.context = [&](const Change& c) { return TableContext{nullptr, c.db == "shop" && c.table == "t" ? &row : nullptr}; };
  // -123.45 as base64 two's complement (scale from the Doris column), 2024-04-12
  // as days, 2024-04-12 10:30:00.123 as epoch ms, an instant with Z, 1970-01-02 as µs.
  const std::string after =
      R"({"id":1,"amount":"z8c=","born":19825,"created":1712917800123,"updated":"2024-07-01T10:00:00.5Z",)"
      R"("seen_us":86400000001,"doc":"\"just a string\"","name":"Anne"})";
  REQUIRE_FALSE(run(schemaless_pg("c", "null", after), std::string_view(R"({"id":1})")));
  CHECK(run.row() ==
        R"({"id":1,"amount":"-123.45","born":"2024-04-12","created":"2024-04-12 10:30:00.123000",)"
        R"("updated":"2024-07-01 12:00:00.500000","seen_us":"1970-01-02 00:00:00.000001","doc":"\"just a string\"",)"
        R"("name":"Anne","__DORIS_DELETE_SIGN__":0})");

  // Other wire forms of the same types: NUMERIC and string decimals, ISO
  // dates, wall clocks without zone, µs into a DATETIME(6).
  const std::string after2 =
      R"({"id":2,"amount":12.5,"born":"2024-04-12","created":"2024-04-12T10:30:00","updated":1712917800123456,)"
      R"("seen_us":null,"doc":"{\"a\": 1}","name":null})";
  REQUIRE_FALSE(run(schemaless_pg("c", "null", after2), std::string_view(R"({"id":2})")));
  CHECK(run.row() ==
        R"({"id":2,"amount":"12.5","born":"2024-04-12","created":"2024-04-12 10:30:00","updated":"2024-04-12 10:30:00.123456",)"
        R"("seen_us":null,"doc":"{\"a\": 1}","name":null,"__DORIS_DELETE_SIGN__":0})");
  REQUIRE_FALSE(run(schemaless_pg("c", "null", R"({"id":3,"amount":"-0.5","updated":-1})")));
  CHECK(run.row() == R"({"id":3,"amount":"-0.5","updated":"1969-12-31 23:59:59.999999","__DORIS_DELETE_SIGN__":0})");

  // And Doris (strict mode) takes them.
  std::vector<Row> rows;
  REQUIRE_FALSE(run(schemaless_pg("c", "null", after), std::string_view(R"({"id":1})")));
  rows.push_back(run.change.rows.at(0));
  REQUIRE_FALSE(run(schemaless_pg("c", "null", after2), std::string_view(R"({"id":2})")));
  rows.push_back(run.change.rows.at(0));
  Doris doris(
      "CREATE TABLE t (id INT, amount DECIMAL(10,2), born DATE, created DATETIME(3), updated DATETIME(6), "
      "seen_us DATETIME(6), doc JSON, name STRING) UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1");
  doris.load("t", rows);
  CHECK(doris.rows("t").size() == 2);
}

TEST_CASE("Schemaless epoch integers take their unit from the DATETIME column's scale, never from their size",
          "[decode][schemaless][issue33]") {
  const std::vector<DorisColumn> cols = {
      {"id", "INT", std::nullopt, std::nullopt},      {"d0", "DATETIMEV2", std::nullopt, std::nullopt},
      {"d3", "DATETIMEV2", std::nullopt, 3},          {"d6", "DATETIMEV2", std::nullopt, 6},
      {"ns", "DATETIMEV2", std::nullopt, 6},          {"s", "DATETIME", std::nullopt, 0},
  };
  const SchemaNode row = schema_from_doris(cols, {{"ns", EpochUnit::Nanos}, {"s", EpochUnit::Seconds}});
  Run run;
  run.context = [&](const Change&) { return TableContext{nullptr, &row}; };
  // Year 9999 in microseconds (the magnitude rule read it as 1978), -1 us
  // keeping its microsecond, milliseconds within three years of 1970 (which
  // the magnitude rule read as microseconds... and the reverse), and the
  // configured units.
  REQUIRE_FALSE(run(schemaless_pg("c", "null",
                                  R"({"id":1,"d0":1000,"d3":-1,"d6":253402300799999999,"ns":1712917800123456789,"s":86400})")));
  CHECK(run.row() == R"({"id":1,"d0":"1970-01-01 00:00:01","d3":"1969-12-31 23:59:59.999000","d6":"9999-12-31 23:59:59.999999",)"
                     R"("ns":"2024-04-12 10:30:00.123456789","s":"1970-01-02 00:00:00","__DORIS_DELETE_SIGN__":0})");
  REQUIRE_FALSE(run(schemaless_pg("c", "null", R"({"id":2,"d6":86400000001,"d3":86400000001})")));
  CHECK(run.row() == R"({"id":2,"d6":"1970-01-02 00:00:00.000001","d3":"1972-09-27 00:00:00.001000","__DORIS_DELETE_SIGN__":0})");
  // Out of what DATETIME holds in the column's unit: a bad record naming the
  // unit and the key that sets another, never a date of another unit.
  struct Case {
    const char* column;
    const char* value;
    const char* unit;
  };
  for (const auto& c : {Case{"d3", "253402300800000", "milliseconds"}, Case{"d6", "1712917800123456789", "microseconds"},
                        Case{"d6", "-62135596800000001", "microseconds"}, Case{"s", "253402300800", "seconds"}}) {
    INFO(c.column << " = " << c.value);
    const auto err = run(schemaless_pg("c", "null", std::string(R"({"id":3,")") + c.column + R"(":)" + c.value + "}"),
                         std::nullopt, "pg.public.t", 7);
    REQUIRE(err);
    CHECK(err->code == DecodeErrorCode::TypeMismatch);
    CHECK(err->path == std::string("value.after.") + c.column);
    CHECK(err->offset == 7);
    CHECK(err->expected.find(std::string("an epoch integer in ") + c.unit + " within years 0001-9999") != std::string::npos);
  }
  // The first and last instants DATETIME holds are in range.
  REQUIRE_FALSE(run(schemaless_pg("c", "null", R"({"id":4,"d6":-62135596800000000,"d3":253402300799999})")));
  CHECK(run.row() == R"({"id":4,"d6":"0001-01-01 00:00:00","d3":"9999-12-31 23:59:59.999000","__DORIS_DELETE_SIGN__":0})");
}

TEST_CASE("Schemaless decimals beyond Doris' 38 digits land in a STRING column as exact text with decimal_scales",
          "[decode][schemaless][issue33]") {
  const std::vector<DorisColumn> cols = {{"id", "INT", std::nullopt, std::nullopt},
                                         {"big", "STRING", std::nullopt, std::nullopt},
                                         {"note", "STRING", std::nullopt, std::nullopt}};
  const SchemaNode row = schema_from_doris(cols, {}, {{"big", 30}});
  Run run;
  run.context = [&](const Change&) { return TableContext{nullptr, &row}; };
  // MariaDB DECIMAL(65,30) under decimal.handling.mode=precise: Decimal
  // bytes (two's complement, big-endian) of scale 30, here +-(35 + 30 digits).
  REQUIRE_FALSE(run(schemaless_pg("c", "null", R"({"id":1,"big":"HgK8HpeFi9xsuVBY80JNfTp/7HsD4maOPwrS","note":"HgK8"})")));
  CHECK(run.row() == R"({"id":1,"big":"12345678901234567890123456789012345.123456789012345678901234567890",)"
                     R"("note":"HgK8","__DORIS_DELETE_SIGN__":0})");
  REQUIRE_FALSE(run(schemaless_pg("c", "null", R"({"id":2,"big":"4f1D4Wh6dCOTRq+nDL2ygsWAE4T8HZlxwPUu"})")));
  CHECK(run.row() == R"({"id":2,"big":"-12345678901234567890123456789012345.123456789012345678901234567890",)"
                     R"("__DORIS_DELETE_SIGN__":0})");
  // Not Decimal bytes: a bad record at its offset, never the text as it came.
  const auto err = run(schemaless_pg("c", "null", R"({"id":3,"big":"not base64!"})"), std::nullopt, "pg.public.t", 9);
  REQUIRE(err);
  CHECK(err->code == DecodeErrorCode::TypeMismatch);
  CHECK(err->path == "value.after.big");
  CHECK(err->offset == 9);
}

TEST_CASE("Schemaless arrays and structs land as the same JSON in JSON, ARRAY and STRING columns, LARGEINT from Decimal bytes",
          "[decode][schemaless][issue12]") {
  const std::vector<DorisColumn> cols = {
      {"id", "INT", std::nullopt, std::nullopt},       {"doc", "JSON", std::nullopt, std::nullopt},
      {"pt", "JSONB", std::nullopt, std::nullopt},     {"arr", "ARRAY<INT>", std::nullopt, std::nullopt},
      {"txt", "VARCHAR", std::nullopt, std::nullopt},  {"big", "LARGEINT", std::nullopt, std::nullopt},
      {"num", "JSON", std::nullopt, std::nullopt},
  };
  const SchemaNode row = schema_from_doris(cols);
  Run run;
  run.context = [&](const Change&) { return TableContext{nullptr, &row}; };
  // A PostgreSQL integer[] and a point's struct into JSON columns, an array
  // into ARRAY<INT> and VARCHAR, a BIGINT UNSIGNED (precise) as Decimal bytes
  // of scale 0: 0x00 followed by eight 0xff = 2^64-1.
  const std::string after =
      R"({"id":1,"doc":[1,2.50,null,{"a":-1e3}],"pt":{"x":1.5,"y":-2.0,"wkb":"AQEAAAAAAAAAAAD4PwAAAAAAAADA","srid":null},)"
      R"("arr":[null,-1],"txt":["a b","c\"d"],"big":"AP//////////","num":2.50})";
  REQUIRE_FALSE(run(schemaless_pg("c", "null", after), std::string_view(R"({"id":1})")));
  CHECK(run.row() ==
        R"({"id":1,"doc":"[1,2.50,null,{\"a\":-1e3}]","pt":"{\"x\":1.5,\"y\":-2.0,\"wkb\":\"AQEAAAAAAAAAAAD4PwAAAAAAAADA\",\"srid\":null}",)"
        R"("arr":[null,-1],"txt":["a b","c\"d"],"big":"18446744073709551615","num":"2.50","__DORIS_DELETE_SIGN__":0})");
  std::vector<Row> rows{run.change.rows.at(0)};
  // LARGEINT's other wire forms: a number, integer text, a negative Decimal.
  REQUIRE_FALSE(run(schemaless_pg("c", "null", R"({"id":2,"big":42,"doc":"{\"k\":[]}"})")));
  CHECK(run.row() == R"({"id":2,"big":"42","doc":"{\"k\":[]}","__DORIS_DELETE_SIGN__":0})");
  REQUIRE_FALSE(run(schemaless_pg("c", "null", R"({"id":3,"big":"-170141183460469231731687303715884105728"})")));
  CHECK(run.row() == R"({"id":3,"big":"-170141183460469231731687303715884105728","__DORIS_DELETE_SIGN__":0})");
  REQUIRE_FALSE(run(schemaless_pg("c", "null", R"({"id":4,"big":"/w=="})")));
  CHECK(run.row() == R"({"id":4,"big":"-1","__DORIS_DELETE_SIGN__":0})");
  for (const auto* bad : {R"("")", R"(1.5)", R"("not base64!")", R"([1])"}) {
    INFO(bad);
    const auto err = run(schemaless_pg("c", "null", std::string(R"({"id":5,"big":)") + bad + "}"));
    REQUIRE(err);
    CHECK(err->code == DecodeErrorCode::TypeMismatch);
    CHECK(err->path == "value.after.big");
    CHECK(err->expected.find("for Doris LARGEINT") != std::string::npos);
  }

  // Doris holds exactly those values: the JSON (numbers' digits kept), the
  // array, the array's JSON text in the VARCHAR, the exact LARGEINT.
  Doris doris(
      "CREATE TABLE t (id INT, doc JSON, pt JSON, arr ARRAY<INT>, txt VARCHAR(100), big LARGEINT, num JSON) "
      "UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1");
  doris.load("t", rows);
  CHECK(doris.rows("t") ==
        std::vector<std::string>{R"({"id":1,"doc":[1,2.50,null,{"a":-1e3}],)"
                                 R"("pt":{"x":1.5,"y":-2.0,"wkb":"AQEAAAAAAAAAAAD4PwAAAAAAAADA","srid":null},)"
                                 R"("arr":[null,-1],"txt":"[\"a b\",\"c\\\"d\"]","big":"18446744073709551615","num":2.50})"});
}

TEST_CASE("A schemaless value its Doris column type cannot take is a bad record, not a NULL", "[decode][schemaless][issue12]") {
  const SchemaNode row = schema_from_doris(kDorisColumns);
  Run run;
  run.context = [&](const Change&) { return TableContext{nullptr, &row}; };
  struct Case {
    const char* column;
    const char* value;
    const char* expected;
  };
  for (const auto& c : {Case{"amount", R"("not a decimal!")", "for Doris DECIMALV3"},
                        Case{"amount", "true", "for Doris DECIMALV3"},
                        Case{"born", R"("yesterday")", "epoch days or an ISO date for Doris DATEV2"},
                        Case{"created", R"("2024-13-01 00:00:00")", "an epoch integer or an ISO timestamp for Doris DATETIMEV2"},
                        Case{"created", "[1]", "an epoch integer or an ISO timestamp for Doris DATETIMEV2"},
                        Case{"doc", R"("{broken")", "JSON text"}}) {
    INFO(c.column << " = " << c.value);
    const auto err = run(schemaless_pg("c", "null", std::string(R"({"id":1,")") + c.column + R"(":)" + c.value + "}"), std::nullopt,
                         "pg.public.t", 41);
    REQUIRE(err);
    CHECK(err->code == DecodeErrorCode::TypeMismatch);
    CHECK(err->path == std::string("value.after.") + c.column);
    CHECK(err->offset == 41);
    CHECK(err->expected.find(c.expected) != std::string::npos);
  }
}
