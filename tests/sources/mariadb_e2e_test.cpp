// MariaDB -> Debezium 3.6 MySQL connector on Kafka Connect 4.1 -> Kafka ->
// cdc2doris -> Doris emulator, all real processes. Debezium 3.6 has no MariaDB
// connector on Maven Central; its MySQL connector streams from MariaDB 10.11
// when the server reports a MySQL 5.7-style version (see mariadb_server.hpp).
// Three connectors at once, JsonConverter with schemas (prefix mys, Doris db
// my_schema), without (myn, my_plain), and Apicurio's Avro converter with a
// real Apicurio Registry (myv, my_avro; the daemon with `decoding.format:
// avro`), each consumed by its own daemon. A type matrix (snapshot and streamed
// rows, updates, a key change, deletes, several session zones) and a seeded
// random workload (inserts, updates of random column subsets, deletes, key
// changes, multi-table and rolled-back transactions); when the daemon committed
// every record, each Doris row must equal the source row rendered by the
// mariadb client the way docs/decoding.md says Doris holds it.
#include <catch2/catch.hpp>

#include <thread>

#include "tests/sources/scenario.hpp"
#include "tools/fixtures/kafka_broker.hpp"
#include "tests/support/kafka_connect.hpp"
#include "tests/support/mariadb_server.hpp"
#include "tests/support/run_command.hpp"

using namespace cdc2doris::test;
using namespace cdc2doris::test::sources;
using namespace std::chrono_literals;

namespace {

// MicroTime: [-]HH:MM:SS, hours beyond 24, fraction left out when zero.
const std::string kTime =
    "CONCAT(TIME_FORMAT($, '%H:%i:%s'), IF(MICROSECOND($) = 0, '', CONCAT('.', LPAD(MICROSECOND($), 6, '0'))))";

const std::vector<std::string> kHostile = {
    "'plain'",
    R"('quote '' double \" backslash \\ slash / end')",
    R"('line\nbreak\r\ttab')",
    "CONCAT('ctl ', CHAR(1), CHAR(2), CHAR(31), CHAR(127))",
    "'emoji 😀👍🏽 中文 ü'",
    "NULL",
    "''",
    R"('{"looks":"like json"}')",
    R"('\\N')",
    "'NULL'",
};

std::vector<Column> type_matrix() {
  return {
      {"c_tinyint", "TINYINT", "TINYINT", "$", {"-128", "127", "NULL", "0"}},
      {"c_utinyint", "TINYINT UNSIGNED", "SMALLINT", "$", {"255", "0", "NULL"}},
      {"c_bool", "BOOLEAN", "TINYINT", "$", {"TRUE", "FALSE", "NULL"}},
      {"c_smallint", "SMALLINT", "SMALLINT", "$", {"-32768", "32767", "NULL"}},
      {"c_usmallint", "SMALLINT UNSIGNED", "INT", "$", {"65535", "0", "NULL"}},
      {"c_mediumint", "MEDIUMINT", "INT", "$", {"-8388608", "8388607", "NULL"}},
      {"c_umediumint", "MEDIUMINT UNSIGNED", "INT", "$", {"16777215", "NULL", "1"}},
      {"c_int", "INT", "INT", "$", {"-2147483648", "2147483647", "NULL", "0"}},
      {"c_uint", "INT UNSIGNED", "BIGINT", "$", {"4294967295", "0", "NULL"}},
      {"c_bigint", "BIGINT", "BIGINT", "$", {"-9223372036854775808", "9223372036854775807", "NULL"}},
      // bigint.unsigned.handling.mode=precise: a Decimal of scale 0 (without
      // schemas its base64 bytes, decoded for the LARGEINT column).
      {"c_ubigint", "BIGINT UNSIGNED", "LARGEINT", "CAST($ AS CHAR)",
       {"18446744073709551615", "0", "NULL", "9223372036854775808"}},
      {"c_float", "FLOAT", "FLOAT", "$", {"3.14", "-1.5e38", "NULL", "0"}},
      {"c_double", "DOUBLE", "DOUBLE", "$", {"1.7976931348623157e308", "-2.2250738585072014e-308", "NULL", "0.1"}},
      {"c_decimal", "DECIMAL(20,5)", "DECIMAL(20,5)", "CAST($ AS CHAR)",
       {"123456789012345.12345", "-0.00001", "NULL", "0", "-999999999999999.99999"}},
      {"c_decimal38", "DECIMAL(38,10)", "DECIMAL(38,10)", "CAST($ AS CHAR)",
       {"-1234567890123456789012345678.0123456789", "NULL", "0.0000000001"}},
      {"c_bit1", "BIT(1)", "BOOLEAN", "IF($ IS NULL, NULL, JSON_EXTRACT(IF($ = 1, 'true', 'false'), '$'))", {"b'1'", "b'0'", "NULL"}},
      // Bits: the bytes little-endian (Debezium reverses MySQL's big-endian order), base64.
      {"c_bit10", "BIT(10)", "STRING", "TO_BASE64(REVERSE(UNHEX(LPAD(HEX($), 4, '0'))))",
       {"b'1000000001'", "b'0'", "NULL", "b'1111111111'"}},
      {"c_char", "CHAR(10)", "CHAR(40)", "$", {"'ab'", "'ü€😀'", "NULL", "''"}},
      {"c_varchar", "VARCHAR(50)", "VARCHAR(200)", "$", kHostile},
      {"c_text", "LONGTEXT", "STRING", "$", kHostile},
      {"c_binary", "BINARY(4)", "STRING", "TO_BASE64($)", {"X'00FF1000'", "NULL", "X'41'"}},
      {"c_varbinary", "VARBINARY(16)", "STRING", "TO_BASE64($)", {"X'00FF10'", "X''", "NULL"}},
      {"c_blob", "BLOB", "STRING", "REPLACE(TO_BASE64($), '\\n', '')", {"REPEAT(X'AB01', 100)", "NULL", "X''"}},
      {"c_date", "DATE", "DATE", "DATE_FORMAT($, '%Y-%m-%d')",
       {"'0001-01-01'", "'9999-12-31'", "NULL", "'1969-12-31'", "'2024-02-29'"}},
      {"c_time", "TIME(6)", "STRING", kTime,
       {"'00:00:00'", "'838:59:59'", "NULL", "'-838:59:59'", "'12:34:56.5'", "'-00:00:01.25'"},
       // Without schemas a MicroTime is just microseconds.
       "BIGINT", "CAST(ROUND(TIME_TO_SEC($) * 1000000) AS SIGNED)"},
      {"c_datetime", "DATETIME", "DATETIME", "DATE_FORMAT($, '%Y-%m-%d %H:%i:%s')",
       {"'0001-01-01 00:00:00'", "'9999-12-31 23:59:59'", "NULL", "'1969-07-20 20:17:40'", "'2040-07-01 12:00:00'"}},
      {"c_datetime6", "DATETIME(6)", "DATETIME(6)", "DATE_FORMAT($, '%Y-%m-%d %H:%i:%s.%f')",
       {"'1000-01-01 00:00:00.000001'", "'9999-12-31 23:59:59.999999'", "NULL", "'1960-02-29 12:00:00.5'"}},
      // TIMESTAMP: an instant (1970..2038 in MariaDB), ZonedTimestamp in UTC,
      // converted to decoding.time_zone; literals are read in the row's session zone.
      {"c_timestamp", "TIMESTAMP(6) NULL", "DATETIME(6)",
       "DATE_FORMAT(CONVERT_TZ($, @@session.time_zone, 'Europe/Berlin'), '%Y-%m-%d %H:%i:%s.%f')",
       {"'2024-03-31 00:59:59.999999'", "'2024-03-31 01:00:00'", "NULL", "'2024-10-27 00:59:59'",
        "'2024-10-27 01:00:00'", "'1970-01-02 12:00:00'", "'2038-01-18 03:14:07.999999'"}},
      {"c_year", "YEAR", "SMALLINT", "$", {"1901", "2155", "NULL", "2024"}},
      {"c_enum", "ENUM('sad','ok','happy','ü x')", "VARCHAR(32)", "$", {"'happy'", "'ü x'", "NULL", "'sad'"}},
      {"c_set", "SET('a','b','c d')", "VARCHAR(32)", "$", {"'a,c d'", "''", "NULL", "'b'"}},
      {"c_json", "JSON", "JSON", "JSON_EXTRACT($, '$')",
       {R"('{"a":1,"b":[true,null],"s":"x\\"y 😀"}')", R"('"just a string"')",
        R"('"{\\"looks\\":\\"like an object\\"}"')", "'123.5'", "'true'", "'null'", "NULL", R"('[1,"two",{"three":3}]')",
        "'{}'"}},
  };
}

// Session zones of the rows (offsets, and Europe/Berlin from the loaded tz tables).
const std::vector<std::string> kSessionZones = {"+00:00", "-08:00", "+05:30", "Europe/Berlin", "+13:00"};

std::string set_zone(const std::string& zone) { return "SET time_zone = '" + zone + "';\n"; }

std::vector<std::string> source_rows(const MariaDbServer& db, const std::string& table, const NamedExprs& cols) {
  std::string obj;
  for (const auto& [name, expr] : cols) obj += (obj.empty() ? "" : ", ") + ("'" + name + "', " + expr);
  // Expected TIMESTAMPs are rendered from UTC.
  return split_lines(db.sql("src", "SET time_zone = '+00:00';\nSELECT JSON_OBJECT(" + obj + ") FROM " + table + ";"));
}

std::vector<WorkTable> my_work_tables() {
  return work_tables({{"price", "CAST(price AS CHAR)"},
                      {"ts", "DATE_FORMAT(ts, '%Y-%m-%d %H:%i:%s.%f')"},
                      {"doc", "JSON_EXTRACT(doc, '$')"},
                      {"amount", "CAST(amount AS CHAR)"}});
}

// A row event's timestamp, Debezium's source.ts_ms, is its statement's start
// in whole seconds, which NOW() in the statement's trigger returns.
const SettingsDialect kSettings{
    "CREATE TABLE w_gone (seq BIGINT AUTO_INCREMENT PRIMARY KEY, tbl VARCHAR(16), id BIGINT, qty INT, note TEXT, "
    "at TIMESTAMP NULL);\n"
    "CREATE TRIGGER w_soft_del AFTER DELETE ON w_soft FOR EACH ROW INSERT INTO w_gone (tbl, id, qty, note, at) "
    "VALUES ('w_soft', OLD.id, OLD.qty, OLD.note, NOW());\n"
    "CREATE TRIGGER w_soft_key AFTER UPDATE ON w_soft FOR EACH ROW INSERT INTO w_gone (tbl, id, qty, note, at) "
    "SELECT 'w_soft', OLD.id, OLD.qty, OLD.note, NOW() FROM DUAL WHERE OLD.id <> NEW.id;\n"
    "CREATE TRIGGER w_keep_del AFTER DELETE ON w_keep FOR EACH ROW INSERT INTO w_gone (tbl, id, qty, note, at) "
    "VALUES ('w_keep', OLD.id, OLD.qty, OLD.note, NOW());\n"
    "CREATE TRIGGER w_keep_key AFTER UPDATE ON w_keep FOR EACH ROW INSERT INTO w_gone (tbl, id, qty, note, at) "
    "SELECT 'w_keep', OLD.id, OLD.qty, OLD.note, NOW() FROM DUAL WHERE OLD.id <> NEW.id;\n",
    // source_rows reads in UTC.
    "DATE_FORMAT(CONVERT_TZ(g.at, '+00:00', 'Europe/Berlin'), '%Y-%m-%d %H:%i:%s.000')",
    "JSON_EXTRACT(IF({} = 1, 'true', 'false'), '$')"};

// The Avro mode writes Apicurio's own framings (the key's global id in 8
// bytes after magic byte 0, the value's in a header); PostgreSQL's writes
// Confluent's, so the real converter's framings are each read once.
const std::vector<Mode> kModes = {
    {"mys", "my_schema", true}, {"myn", "my_plain", false}, {"myv", "my_avro", true, true, true}};
// Each connector's binlog client needs a server id of its own.
int server_id(const Mode& m) { return m.avro ? 5103 : m.schemas ? 5101 : 5102; }

// Per-table settings (scenario.hpp). Without schemas, epoch integers of
// DATETIME columns take their unit from the Doris column's scale (w_orders.ts
// and c_datetime6 DATETIME(6): us; c_datetime DATETIME: ms), as Debezium's
// adaptive precision mode wrote them: no epoch_units needed.
std::string routing(const Mode& m) { return routing_tables(m); }

// w_evo's schema changes (scenario.hpp) in MariaDB.
const std::vector<std::string> kEvolution = {
    "INSERT INTO w_evo SELECT seq, seq, CONCAT('v', seq), CONCAT('o', seq), seq FROM seq_21_to_30;",
    "ALTER TABLE w_evo ADD COLUMN b INT;",
    "INSERT INTO w_evo (id, a, s, old, gone, b) SELECT seq, seq, CONCAT('v', seq), CONCAT('o', seq), seq, 2 * seq "
    "FROM seq_31_to_40;",
    "UPDATE w_evo SET b = 1 WHERE id % 5 = 0;",
    "ALTER TABLE w_evo ADD COLUMN c INT DEFAULT 7;",
    "INSERT INTO w_evo (id, a, s, old, gone, b, c) SELECT seq, seq, CONCAT('v', seq), CONCAT('o', seq), seq, seq, "
    "seq FROM seq_41_to_50;",
    "ALTER TABLE w_evo MODIFY COLUMN a BIGINT;",
    "UPDATE w_evo SET a = 5000000000 + id WHERE id % 4 = 0;",
    "ALTER TABLE w_evo MODIFY COLUMN s VARCHAR(50);",
    "UPDATE w_evo SET s = REPEAT('x', 45) WHERE id % 6 = 0;",
    "ALTER TABLE w_evo RENAME COLUMN old TO renamed;",
    "UPDATE w_evo SET renamed = CONCAT('r', id) WHERE id % 7 = 0;",
    "ALTER TABLE w_evo DROP COLUMN gone;",
    "INSERT INTO w_evo (id, a, s, renamed, b, c) SELECT seq, seq, CONCAT('v', seq), CONCAT('o', seq), seq, seq "
    "FROM seq_51_to_60;",
    "DELETE FROM w_evo WHERE id % 9 = 0;",
};

struct Scenario : ScenarioState {
  std::unique_ptr<MariaDbServer> db;
  Matrix matrix{type_matrix(), kSessionZones, set_zone, 10};

  Scenario() {
    run([this] { setup(); });
  }

  void setup() {
    auto& broker = KafkaBroker::shared();
    start_jvms(broker.bootstrap());  // the JVMs start meanwhile
    db = std::make_unique<MariaDbServer>();
    // Zone tables for Europe/Berlin only (CONVERT_TZ in the expected values).
    db->sql("mysql", run_checked({"mariadb-tzinfo-to-sql", "/usr/share/zoneinfo/Europe/Berlin", "Europe/Berlin"},
                                 db->dir()));
    std::string ddl = "CREATE DATABASE src;\nUSE src;\nCREATE TABLE types (id INT PRIMARY KEY";
    for (const auto& c : matrix.columns) ddl += ",\n  " + c.name + " " + c.source_type;
    ddl += ");\n"
           "CREATE TABLE w_orders (id BIGINT PRIMARY KEY, qty INT NOT NULL DEFAULT 0, note TEXT, big LONGTEXT, "
           "price DECIMAL(12,2), ts DATETIME(6), doc JSON);\n"
           "CREATE TABLE w_lines (order_id BIGINT, line INT, sku VARCHAR(20) NOT NULL, amount DECIMAL(10,3), "
           "PRIMARY KEY (order_id, line));\n"
           "CREATE TABLE w_evo (id BIGINT PRIMARY KEY, a INT, s VARCHAR(10), old TEXT, gone INT);\n"
           "INSERT INTO w_evo SELECT seq, seq, CONCAT('v', seq), CONCAT('o', seq), seq FROM seq_1_to_20;\n"
           "CREATE TABLE marker (id INT PRIMARY KEY);\nINSERT INTO marker VALUES (0);\n";
    ddl += kLongStringTablesDdl;
    ddl += kSettingsTablesDdl + kSettings.gone_ddl;
    db->sql("", ddl);

    snapshot(matrix, mariadb_dialect(), kModes, my_work_tables(), [&](const std::string& sql) { db->sql("src", sql); });

    for (const auto& m : kModes) {
      create_connector(m, {
          {"connector.class", "io.debezium.connector.mysql.MySqlConnector"},
          {"database.hostname", db->host()},
          {"database.port", std::to_string(db->port())},
          {"database.user", db->user()},
          {"database.password", db->password()},
          {"database.server.id", std::to_string(server_id(m))},
          {"database.include.list", "src"},
          {"include.schema.changes", "false"},
          {"schema.history.internal", "io.debezium.storage.file.history.FileSchemaHistory"},
          {"schema.history.internal.file.filename", (connect->dir() / ("history-" + m.prefix)).string()},
          // BIGINT UNSIGNED beyond 2^63 needs the Decimal form.
          {"bigint.unsigned.handling.mode", "precise"},
          // The default maps years 0..69 / 70..99 to 2000.. / 1900.., so
          // DATETIME '0001-01-01' would arrive as 2001-01-01.
          {"enable.time.adjuster", "false"},
      }, "src\\.w_evo\\..*");
    }
    for (const auto& m : kModes) connect->wait_running(m.prefix);
    wait_for_snapshot(broker.bootstrap(), kModes, "src", matrix.rows, *connect, 180s);

    daemons = start_daemons(kModes, broker.bootstrap(), *emu, routing, *registry);

    std::string stream;
    for (int r = matrix.rows; r < 2 * matrix.rows; ++r) stream += matrix.insert(r, 3);
    db->sql("src", stream);
    run_workload_with_evolution(*workload, kEvolution, [&](const std::string& sql) { db->sql("src", sql); });
    db->sql("src", matrix.changes());
    db->sql("src", "INSERT INTO marker VALUES (1);");
    wait_for_marker(broker.bootstrap(), kModes, "src", *connect, 120s);
    // The marker row is written last; once it is in Kafka, the end offsets
    // must also stand still for a moment (other topics' batches in flight).
    for (auto prev = end_offsets(broker.bootstrap(), "my");;) {
      std::this_thread::sleep_for(1500ms);
      auto now = end_offsets(broker.bootstrap(), "my");
      if (now == prev) return;
      prev = std::move(now);
    }
  }
};

Scenario& scenario() {
  static Scenario s;
  return s;
}

void check(const Mode& m) {
  auto& s = scenario();
  SourceCheck c{"src", &s.matrix, my_work_tables(), [&s](const std::string& table, const NamedExprs& cols) {
                  return source_rows(*s.db, table, cols);
                }, &kSettings};
  check_mode(m, c, s);
}

}  // namespace

TEST_CASE("MariaDB via Debezium's MySQL connector, JsonConverter with schemas: every row in Doris equals the source",
          "[sources][mariadb]") {
  check(kModes[0]);
}

TEST_CASE("MariaDB via Debezium's MySQL connector, JsonConverter without schemas: every row in Doris equals the source",
          "[sources][mariadb]") {
  check(kModes[1]);
}

// Catch 2's console reporter indents a wrapped name to just after its last
// ": " and loops without end when that falls near the line's end (a longer
// name here filled the disk): keep the colon well before column 72.
TEST_CASE("MariaDB via Debezium, Apicurio Avro converter and registry: every row in Doris equals the source",
          "[sources][mariadb][avro]") {
  check(kModes[2]);
}
