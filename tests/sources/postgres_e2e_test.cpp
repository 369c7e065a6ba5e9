// PostgreSQL 15 -> Debezium 3.6 PostgreSQL connector (pgoutput) on Kafka
// Connect 4.1 -> Kafka -> cdc2doris -> Doris emulator, all real processes.
// Three connectors run at once from one worker, JsonConverter with schemas
// (topic prefix pgs, Doris db pg_schema), without (pgn, pg_plain), and
// Apicurio's Avro converter with a real Apicurio Registry (pgv, pg_avro; the
// daemon with `decoding.format: avro`), each consumed by its own daemon. A type
// matrix (snapshot and streamed rows, updates, deletes) and a seeded random
// workload (inserts, updates of random column subsets, deletes, key changes,
// TOAST-unchanged updates, multi-table and rolled-back transactions); when the
// daemon committed every record, each Doris row must equal the source row
// rendered by psql the way docs/decoding.md says Doris holds it.
#include <catch2/catch.hpp>

#include <thread>

#include "tests/sources/scenario.hpp"
#include "tools/fixtures/kafka_broker.hpp"
#include "tests/support/kafka_connect.hpp"
#include "tests/support/postgres_server.hpp"

using namespace cdc2doris::test;
using namespace cdc2doris::test::sources;
using namespace std::chrono_literals;

namespace {

const std::string kTs6 = "to_char($, 'YYYY-MM-DD HH24:MI:SS.US')";
const std::string kTsBerlin = "to_char($ AT TIME ZONE 'Europe/Berlin', 'YYYY-MM-DD HH24:MI:SS.US')";
// MicroTime: fraction left out when zero, else 6 digits.
const std::string kTime =
    "to_char(date '2000-01-01' + $, 'HH24:MI:SS') || CASE WHEN to_char(date '2000-01-01' + $, 'US') = '000000' "
    "THEN '' ELSE '.' || to_char(date '2000-01-01' + $, 'US') END";
// ZonedTime: the instant's UTC time shifted by decoding.time_zone's offset on 1970-01-01.
const std::string kTimeTzAt1970 =
    "to_char((date '1970-01-01' + ($ AT TIME ZONE 'UTC')::time) AT TIME ZONE 'UTC' AT TIME ZONE 'Europe/Berlin', "
    "'HH24:MI:SS') || CASE WHEN to_char(date '2000-01-01' + ($ AT TIME ZONE 'UTC')::time, 'US') = '000000' THEN '' "
    "ELSE '.' || to_char(date '2000-01-01' + ($ AT TIME ZONE 'UTC')::time, 'US') END";

const std::string kTimeTzUtc =
    "to_char(date '2000-01-01' + ($ AT TIME ZONE 'UTC')::time, 'HH24:MI:SS') || CASE WHEN to_char(date "
    "'2000-01-01' + ($ AT TIME ZONE 'UTC')::time, 'US') = '000000' THEN '' ELSE '.' || to_char(date '2000-01-01' + "
    "($ AT TIME ZONE 'UTC')::time, 'US') END || 'Z'";

// Bits as Debezium's PostgreSQL connector sends them: the bit string as an
// unsigned number, bytes least significant first, trailing zero bytes left
// out (Java's BitSet.toByteArray; all zeros = no bytes), base64.
const std::string kBitsV = "lpad($::text, 16, '0')::bit(16)::int";
const std::string kBits2 = "CASE WHEN " + kBitsV + " = 0 THEN '' WHEN " + kBitsV +
                           " < 256 THEN encode(set_byte('\\x00'::bytea, 0, " + kBitsV +
                           "), 'base64') ELSE encode(set_byte(set_byte('\\x0000'::bytea, 0, " + kBitsV +
                           " & 255), 1, " + kBitsV + " >> 8), 'base64') END";

const std::vector<std::string> kHostile = {
    R"('plain')",
    R"(E'quote '' double " backslash \\ slash / end')",
    R"(E'line\nbreak\r\ttab')",
    R"(E'ctl \x01\x02\x1f\x7f')",
    R"('emoji 😀👍🏽 中文 ü')",
    "NULL",
    "''",
    R"('{"looks":"like json"}')",
    R"('\N')",
    R"('NULL')",
};

// A float8 expression as its 8 little-endian bytes (float8send is big-endian).
std::string le8(const std::string& x) {
  return "(SELECT string_agg(substr(float8send(" + x + "), 9 - i, 1), ''::bytea ORDER BY i) FROM generate_series(1, 8) i)";
}

// Every PostgreSQL type Debezium maps that this test covers, with edge values.
std::vector<Column> type_matrix() {
  return {
      {"c_smallint", "smallint", "SMALLINT", "$", {"-32768", "32767", "NULL", "0"}},
      {"c_int", "integer", "INT", "$", {"2147483647", "-2147483648", "NULL", "42"}},
      {"c_bigint", "bigint", "BIGINT", "$", {"9223372036854775807", "-9223372036854775808", "NULL", "0"}},
      {"c_real", "real", "FLOAT", "$", {"3.14", "-1.5e38", "NULL", "1e-30", "0"}},
      {"c_double", "double precision", "DOUBLE", "$",
       {"1.7976931348623157e308", "-2.2250738585072014e-308", "NULL", "0.1", "-123456.789"}},
      {"c_numeric", "numeric(20,5)", "DECIMAL(20,5)", "$::text",
       {"123456789012345.12345", "-0.00001", "NULL", "0", "-999999999999999.99999"}},
      {"c_numeric_any", "numeric", "DECIMAL(38,10)", "$::numeric(38,10)::text",
       {"1.500", "-1234567890123456789012345678.0123456789", "NULL", "0.0000000001", "100"}},
      {"c_money", "money", "DECIMAL(19,2)", "$::numeric::numeric(19,2)::text",
       {"12.34", "-92233720368547758.08", "NULL", "92233720368547758.07"}},
      {"c_bool", "boolean", "BOOLEAN", "$", {"true", "false", "NULL"}},
      {"c_char", "char(10)", "CHAR(40)", "$", {"'ab'", "'ü€😀'", "NULL", "'0123456789'"}},
      {"c_varchar", "varchar(50)", "VARCHAR(200)", "$", kHostile},
      {"c_text", "text", "STRING", "$", kHostile},
      {"c_bytea", "bytea", "STRING", R"(replace(encode($, 'base64'), E'\n', ''))",
       {R"('\x00ff10'::bytea)", "''::bytea", "NULL", "decode(repeat('ab01', 100), 'hex')"}},
      {"c_date", "date", "DATE", "to_char($, 'YYYY-MM-DD')",
       {"'0001-01-01'", "'9999-12-31'", "NULL", "'1969-12-31'", "'2024-02-29'", "'1970-01-01'"}},
      // Without schemas a MicroTime is just microseconds since midnight, and a
      // ZonedTime the UTC text Debezium sends.
      {"c_time", "time(6)", "STRING", kTime, {"'00:00:00'", "'23:59:59.999999'", "NULL", "'12:34:56.5'"},
       "BIGINT", "(extract(epoch from $) * 1000000)::bigint"},
      {"c_timetz", "timetz(6)", "STRING", kTimeTzAt1970,
       {"'10:00:00+02'", "'23:59:59.999999-07'", "NULL", "'00:00:00Z'"}, "STRING", kTimeTzUtc},
      {"c_ts", "timestamp(6)", "DATETIME(6)", kTs6,
       {"'0001-01-01 00:00:00'", "'9999-12-31 23:59:59.999999'", "NULL", "'1969-07-20 20:17:40.123456'",
        "'2038-01-19 03:14:08'", "'1900-03-01 00:00:00.000001'"}},
      {"c_ts3", "timestamp(3)", "DATETIME(3)", "to_char($, 'YYYY-MM-DD HH24:MI:SS.MS')",
       {"'1900-01-01 00:00:00.001'", "NULL", "'2100-02-28 12:00:00.999'"}},
      // Literals without an offset are read in the session zone of their row.
      {"c_tstz", "timestamptz(6)", "DATETIME(6)", kTsBerlin,
       {"'2040-07-01 12:00:00+00'", "'2040-12-01 12:00:00+00'", "'1960-06-15 08:30:00.5'", "NULL",
        "'2024-03-31 00:59:59.999999+00'", "'2024-03-31 01:00:00+00'", "'2024-10-27 00:59:59Z'",
        "'2024-10-27 01:00:00Z'", "'2100-08-01 00:00:00'", "'1901-06-01 00:00:00+00'", "'9999-12-30 12:00:00+00'",
        "'2055-08-15 23:30:00'"}},
      {"c_interval", "interval", "BIGINT", "(extract(epoch from $) * 1000000)::bigint",
       {"'1 day 02:03:04.5'", "'-00:00:01'", "NULL", "'0'", "'100 days'"}},
      {"c_uuid", "uuid", "VARCHAR(36)", "$::text",
       {"'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'", "NULL", "'00000000-0000-0000-0000-000000000000'"}},
      {"c_json", "json", "JSON", "$",
       {R"('{"a":1,"b":[true,null],"s":"x\"y"}')", R"('"just a string"')", R"('"{\"looks\":\"like an object\"}"')",
        "'123.5'", "'true'", "'null'", "NULL", R"('[1,"two",{"three":3}]')", "'{}'"}},
      {"c_jsonb", "jsonb", "JSON", "$",
       {R"('"just a string"')", R"('{"a":1,"b":[true,null],"s":"x\"y 😀"}')", "'false'", "'-0.5e3'", "NULL", "'null'",
        R"('"{\"looks\":\"like an object\"}"')", "'[]'", R"('{"deep":{"x":[1,[2,[3]]]}}')"}},
      {"c_xml", "xml", "STRING", "$::text", {R"('<a b="1">x &amp; y</a>')", "NULL"}},
      {"c_inet", "inet", "VARCHAR(64)", "$", {"'192.168.0.1'", "'::1/128'", "NULL", "'10.0.0.0/8'"}},
      {"c_cidr", "cidr", "VARCHAR(64)", "$", {"'10.0.0.0/8'", "NULL", "'2001:db8::/32'"}},
      {"c_macaddr", "macaddr", "VARCHAR(17)", "$", {"'08:00:2b:01:02:03'", "NULL"}},
      {"c_int_arr", "integer[]", "JSON", "to_json($)", {"'{1,2,3}'", "'{}'", "NULL", "'{NULL,-1}'"}},
      {"c_text_arr", "text[]", "JSON", "to_json($)", {R"('{"a b","c\\\"d","😀"}')", "'{}'", "NULL"}},
      {"c_enum", "mood", "VARCHAR(32)", "$::text", {"'happy'", "'sad'", "NULL"}},
      {"c_bit1", "bit(1)", "BOOLEAN", "$ = B'1'", {"B'1'", "B'0'", "NULL"}},
      {"c_range", "int4range", "VARCHAR(64)", "$::text", {"'[1,10)'", "'empty'", "NULL"}},
      {"c_oid", "oid", "BIGINT", "$::bigint", {"4294967295", "0", "NULL"}},
      {"c_hstore", "hstore", "JSON", "hstore_to_json($)", {R"('a=>1, "b c"=>NULL')", "''", "NULL"}},
      {"c_bit10", "bit(10)", "STRING", kBits2, {"B'1000000001'", "B'0000000000'", "NULL", "B'1111111111'"}},
      {"c_varbit", "bit varying(16)", "STRING", kBits2, {"B'101'", "NULL", "B'1000000000000001'", "B''"}},
      {"c_citext", "citext", "STRING", "$::text", {"'MiXeD Case'", "NULL", "'ü'"}},
      {"c_ltree", "ltree", "STRING", "$::text", {"'top.science.astronomy'", "NULL", "''"}},
      {"c_tsvector", "tsvector", "STRING", "$::text", {"'a fat cat'", "NULL", R"('''quoted'' x:1A')"}},
      // Without schemas a point is its {x, y, wkb, srid} struct, kept as JSON:
      // wkb is little-endian WKB (byte order 1, type 1, x, y), srid null.
      {"c_point", "point", "STRING", "'POINT(' || $[0] || ' ' || $[1] || ')'",
       {"'(1.5,-2)'", "NULL", "'(0,0)'", "'(-1e+300,1e-300)'"}, "JSON",
       "CASE WHEN $ IS NULL THEN NULL ELSE json_build_object('x', $[0], 'y', $[1], 'srid', NULL, 'wkb', "
       "encode('\\x0101000000'::bytea || " + le8("$[0]") + " || " + le8("$[1]") + ", 'base64')) END"},
  };
}

const std::vector<std::string> kSessionZones = {"UTC", "America/New_York", "Asia/Kolkata", "Pacific/Chatham",
                                                "Europe/Berlin"};

std::string set_zone(const std::string& zone) { return "SET TIME ZONE '" + zone + "';\n"; }

// Source rows as JSON lines rendered as Doris holds them.
std::vector<std::string> source_rows(const PostgresServer& pg, const std::string& table, const NamedExprs& cols) {
  std::string obj;
  for (const auto& [name, expr] : cols) obj += (obj.empty() ? "" : ", ") + ("'" + name + "', " + expr);
  // json_build_object takes at most 100 arguments; the widest table has < 50.
  return split_lines(pg.psql("src", "SELECT json_build_object(" + obj + ") FROM " + table + ";"));
}

std::vector<WorkTable> pg_work_tables() {
  return work_tables({{"price", "price::text"},
                      {"ts", "to_char(ts AT TIME ZONE 'Europe/Berlin', 'YYYY-MM-DD HH24:MI:SS.US')"},
                      {"amount", "amount::text"}});
}

// w_gone's rows are written in the deleting transaction: their commit
// timestamp (track_commit_timestamp) is the commit time pgoutput sends,
// Debezium's source.ts_ms (truncated to milliseconds).
const SettingsDialect kSettings{
    "CREATE TABLE w_gone (seq bigserial PRIMARY KEY, tbl text, id bigint, qty integer, note text);\n"
    "CREATE FUNCTION w_gone_log() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN\n"
    "  INSERT INTO w_gone (tbl, id, qty, note) VALUES (TG_TABLE_NAME, OLD.id, OLD.qty, OLD.note);\n"
    "  RETURN NULL;\n"
    "END $$;\n"
    "CREATE TRIGGER w_soft_del AFTER DELETE ON w_soft FOR EACH ROW EXECUTE FUNCTION w_gone_log();\n"
    "CREATE TRIGGER w_soft_key AFTER UPDATE ON w_soft FOR EACH ROW WHEN (OLD.id <> NEW.id) EXECUTE FUNCTION w_gone_log();\n"
    "CREATE TRIGGER w_keep_del AFTER DELETE ON w_keep FOR EACH ROW EXECUTE FUNCTION w_gone_log();\n"
    "CREATE TRIGGER w_keep_key AFTER UPDATE ON w_keep FOR EACH ROW WHEN (OLD.id <> NEW.id) EXECUTE FUNCTION w_gone_log();\n",
    "to_char(date_trunc('milliseconds', pg_xact_commit_timestamp(g.xmin)) AT TIME ZONE 'Europe/Berlin', "
    "'YYYY-MM-DD HH24:MI:SS.MS')",
    "({} = 1)"};

const std::vector<Mode> kModes = {{"pgs", "pg_schema", true}, {"pgn", "pg_plain", false}, {"pgv", "pg_avro", true, true}};

// Per-table settings (scenario.hpp). Without schemas, epoch integers of
// DATETIME columns take their unit from the Doris column's scale (c_ts
// DATETIME(6): us, c_ts3 DATETIME(3): ms): no epoch_units needed.
std::string routing(const Mode& m) { return routing_tables(m); }

// w_evo's schema changes (scenario.hpp) in PostgreSQL.
const std::vector<std::string> kEvolution = {
    "INSERT INTO w_evo SELECT g, g, 'v' || g, 'o' || g, g FROM generate_series(21, 30) g;",
    "ALTER TABLE w_evo ADD COLUMN b integer;",
    "INSERT INTO w_evo (id, a, s, old, gone, b) SELECT g, g, 'v' || g, 'o' || g, g, 2 * g FROM generate_series(31, 40) g;",
    "UPDATE w_evo SET b = 1 WHERE id % 5 = 0;",
    "ALTER TABLE w_evo ADD COLUMN c integer DEFAULT 7;",
    "INSERT INTO w_evo (id, a, s, old, gone, b, c) SELECT g, g, 'v' || g, 'o' || g, g, g, g FROM generate_series(41, 50) g;",
    "ALTER TABLE w_evo ALTER COLUMN a TYPE bigint;",
    "UPDATE w_evo SET a = 5000000000 + id WHERE id % 4 = 0;",
    "ALTER TABLE w_evo ALTER COLUMN s TYPE varchar(50);",
    "UPDATE w_evo SET s = repeat('x', 45) WHERE id % 6 = 0;",
    "ALTER TABLE w_evo RENAME COLUMN old TO renamed;",
    "UPDATE w_evo SET renamed = 'r' || id WHERE id % 7 = 0;",
    "ALTER TABLE w_evo DROP COLUMN gone;",
    "INSERT INTO w_evo (id, a, s, renamed, b, c) SELECT g, g, 'v' || g, 'o' || g, g, g FROM generate_series(51, 60) g;",
    "DELETE FROM w_evo WHERE id % 9 = 0;",
};

// Everything runs once per test binary; each mode's test case compares its own
// Doris database against the same source.
struct Scenario : ScenarioState {
  std::unique_ptr<PostgresServer> pg;
  Matrix matrix{type_matrix(), kSessionZones, set_zone, 12};

  Scenario() {
    run([this] { setup(); });
  }

  void setup() {
    auto& broker = KafkaBroker::shared();
    // The Connect JVM starts while PostgreSQL is initialised.
    start_jvms(broker.bootstrap());
    pg = std::make_unique<PostgresServer>();
    pg->psql("postgres", "CREATE DATABASE src;");
    std::string ddl = "CREATE EXTENSION hstore;\nCREATE EXTENSION citext;\nCREATE EXTENSION ltree;\nCREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');\n"
                      "CREATE TABLE types (id integer PRIMARY KEY";
    for (const auto& c : matrix.columns) ddl += ",\n  " + c.name + " " + c.source_type;
    ddl += ");\n"
           "CREATE TABLE w_orders (id bigint PRIMARY KEY, qty integer NOT NULL DEFAULT 0, note text, big text, "
           "price numeric(12,2), ts timestamptz, doc jsonb);\n"
           "CREATE TABLE w_lines (order_id bigint, line integer, sku varchar(20) NOT NULL, amount numeric(10,3), "
           "PRIMARY KEY (order_id, line));\n"
           "CREATE TABLE w_evo (id bigint PRIMARY KEY, a integer, s varchar(10), old text, gone integer);\n"
           "INSERT INTO w_evo SELECT g, g, 'v' || g, 'o' || g, g FROM generate_series(1, 20) g;\n"
           "CREATE TABLE marker (id integer PRIMARY KEY);\nINSERT INTO marker VALUES (0);\n";
    ddl += kLongStringTablesDdl;
    ddl += kSettingsTablesDdl + kSettings.gone_ddl;
    pg->psql("src", ddl);

    // Snapshot part: half the matrix and a first workload slice.
    snapshot(matrix, postgres_dialect(), kModes, pg_work_tables(), [&](const std::string& sql) { pg->psql("src", sql); });

    for (const auto& m : kModes) {
      create_connector(m, {
          {"connector.class", "io.debezium.connector.postgresql.PostgresConnector"},
          {"database.hostname", pg->host()},
          {"database.port", std::to_string(pg->port())},
          {"database.user", pg->user()},
          {"database.password", "unused"},
          {"database.dbname", "src"},
          {"plugin.name", "pgoutput"},
          {"slot.name", "slot_" + m.prefix},
          {"publication.name", "pub_" + m.prefix},
          {"publication.autocreate.mode", "all_tables"},
      }, "public\\.w_evo\\..*");
    }
    for (const auto& m : kModes) connect->wait_running(m.prefix);
    // The snapshot is in Kafka when every table's topic has its rows.
    wait_for_snapshot(broker.bootstrap(), kModes, "public", matrix.rows, *connect, 180s);

    daemons = start_daemons(kModes, broker.bootstrap(), *emu, routing, *registry);

    // Streaming part: the other matrix rows, updates of matrix rows with
    // other rows' values, deletes, and the rest of the workload in slices.
    std::string stream;
    for (int r = matrix.rows; r < 2 * matrix.rows; ++r) stream += matrix.insert(r, 5);
    pg->psql("src", stream);
    run_workload_with_evolution(*workload, kEvolution, [&](const std::string& sql) { pg->psql("src", sql); });
    pg->psql("src", matrix.changes());
    // Debezium publishes asynchronously: the marker row, written last, is in
    // Kafka only after everything before it.
    const std::string lsn = pg->psql("src", "SELECT pg_current_wal_lsn();");
    pg->psql("src", "INSERT INTO marker VALUES (1);");
    wait_for_marker(broker.bootstrap(), kModes, "public", *connect, 120s);
    // ... and the connector confirms a slot position only after Kafka acked
    // every record before it (offset commit), which is the stronger proof.
    const std::string q = "SELECT count(*) FROM pg_replication_slots WHERE confirmed_flush_lsn >= '" +
                          lsn.substr(0, lsn.find('\n')) + "'::pg_lsn;";
    auto deadline = std::chrono::steady_clock::now() + 120s;
    while (pg->psql("src", q) != std::to_string(std::size(kModes)) + "\n") {
      if (std::chrono::steady_clock::now() > deadline)
        throw std::runtime_error("the replication slots did not confirm the last change:\n" + connect->log_tail());
      std::this_thread::sleep_for(300ms);
    }
  }
};

Scenario& scenario() {
  static Scenario s;
  return s;
}

void check(const Mode& m) {
  auto& s = scenario();
  SourceCheck c{"public", &s.matrix, pg_work_tables(), [&s](const std::string& table, const NamedExprs& cols) {
                  return source_rows(*s.pg, table, cols);
                }, &kSettings};
  check_mode(m, c, s);
}

}  // namespace

TEST_CASE("PostgreSQL via Debezium, JsonConverter with schemas: every row in Doris equals the source",
          "[sources][postgres]") {
  check(kModes[0]);
}

TEST_CASE("PostgreSQL via Debezium, JsonConverter without schemas: every row in Doris equals the source",
          "[sources][postgres]") {
  check(kModes[1]);
}

TEST_CASE("PostgreSQL via Debezium, Apicurio Avro converter and registry: every row in Doris equals the source",
          "[sources][postgres][avro]") {
  check(kModes[2]);
}
