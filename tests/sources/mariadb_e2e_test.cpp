// MariaDB -> Debezium 3.6 MySQL connector on Kafka Connect 4.1 -> Kafka ->
// cdc2doris -> Doris emulator, all real processes. Debezium 3.6 has no MariaDB
// connector on Maven Central; its MySQL connector streams from MariaDB 10.11
// when the server reports a MySQL 5.7-style version (see mariadb_server.hpp).
// Two connectors at once, JsonConverter with schemas (prefix mys, Doris db
// my_schema) and without (myn, my_plain), each consumed by its own daemon. A
// type matrix (snapshot and streamed rows, updates, a key change, deletes,
// several session zones) and a seeded random workload (inserts, updates of
// random column subsets, deletes, key changes, multi-table and rolled-back
// transactions); when the daemon committed every record, each Doris row must
// equal the source row rendered by the mariadb client the way
// docs/decoding.md says Doris holds it.
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <random>
#include <thread>

#include "tests/sources/source_e2e.hpp"
#include "tests/sources/workload.hpp"
#include "tests/support/kafka_broker.hpp"
#include "tests/support/kafka_connect.hpp"
#include "tests/support/kafka_util.hpp"
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
constexpr int kMatrixRows = 10;

std::string matrix_insert(const std::vector<Column>& cols, int row, int shift) {
  std::string names = "id", vals = std::to_string(row);
  for (const auto& c : cols) {
    names += ", " + c.name;
    vals += ", " + c.values[static_cast<size_t>(row + shift) % c.values.size()];
  }
  return "SET time_zone = '" + kSessionZones[static_cast<size_t>(row) % kSessionZones.size()] +
         "';\nINSERT INTO types (" + names + ") VALUES (" + vals + ");\n";
}

std::vector<std::string> source_rows(const MariaDbServer& db, const std::string& table,
                                     const std::vector<std::pair<std::string, std::string>>& cols) {
  std::string obj;
  for (const auto& [name, expr] : cols) obj += (obj.empty() ? "" : ", ") + ("'" + name + "', " + expr);
  // Expected TIMESTAMPs are rendered from UTC.
  return split_lines(db.sql("src", "SET time_zone = '+00:00';\nSELECT JSON_OBJECT(" + obj + ") FROM " + table + ";"));
}

struct WorkTable {
  std::string name;
  std::vector<std::pair<std::string, std::string>> key;
  std::vector<std::pair<std::string, std::string>> cols;
  std::vector<std::pair<std::string, std::string>> expected;
};

std::vector<WorkTable> work_tables() {
  return {
      {"w_orders",
       {{"id", "BIGINT"}},
       {{"qty", "INT"}, {"note", "STRING"}, {"big", "STRING"}, {"price", "DECIMAL(12,2)"}, {"ts", "DATETIME(6)"},
        {"doc", "JSON"}},
       {{"id", "id"}, {"qty", "qty"}, {"note", "note"}, {"big", "big"}, {"price", "CAST(price AS CHAR)"},
        {"ts", "DATE_FORMAT(ts, '%Y-%m-%d %H:%i:%s.%f')"}, {"doc", "JSON_EXTRACT(doc, '$')"}}},
      {"w_lines",
       {{"order_id", "BIGINT"}, {"line", "INT"}},
       {{"sku", "VARCHAR(80)"}, {"amount", "DECIMAL(10,3)"}},
       {{"order_id", "order_id"}, {"line", "line"}, {"sku", "sku"}, {"amount", "CAST(amount AS CHAR)"}}},
  };
}

struct Mode {
  std::string prefix;
  std::string doris_db;
  bool schemas;
  int server_id;
};
const Mode kModes[] = {{"mys", "my_schema", true, 5101}, {"myn", "my_plain", false, 5102}};

// Per-table settings, under the target names: w_orders takes its Doris
// sequence column from the source position; without schemas, epoch integers
// of DATETIME columns get their unit (the magnitude rule cannot tell
// microseconds of year 9999 from nanoseconds).
// w_evo's source changes its columns while the workload runs
// (docs/schema-evolution.md): with schemas its Doris table is created from
// the snapshot and evolved under `full`; schemaless records cannot say
// renames, drops or widenings, so that daemon leaves the table out.
std::string routing_tables(const Mode& m) {
  std::string y = m.schemas ? std::string() : std::string("  exclude: ['.*\\.w_evo']\n");
  y += "  tables:\n    " + m.doris_db + ".w_orders:\n      sequence_col: src_pos\n"
       "      sequence_from_source_position: true\n";
  if (m.schemas) y += "    " + m.doris_db + ".w_evo:\n      auto_create: true\n      schema_evolution: full\n";
  if (!m.schemas) {
    y += "      epoch_units:\n        ts: us\n";
    y += "    " + m.doris_db + ".types:\n      epoch_units:\n        c_datetime: ms\n        c_datetime6: us\n";
  }
  return y;
}

struct Scenario {
  std::unique_ptr<KafkaConnect> connect;
  std::unique_ptr<MariaDbServer> db;
  std::unique_ptr<Emulator> emu;
  std::map<std::string, std::unique_ptr<Daemon>> daemons;
  std::vector<Column> matrix = type_matrix();
  std::unique_ptr<Workload> workload;
  uint32_t seed = 0;
  std::string setup_error;

  Scenario() {
    try {
      setup();
    } catch (const std::exception& e) {
      setup_error = e.what();
    }
  }

  void setup() {
    auto& broker = KafkaBroker::shared();
    connect = std::make_unique<KafkaConnect>(broker.bootstrap());  // the JVM starts meanwhile
    db = std::make_unique<MariaDbServer>();
    // Zone tables for Europe/Berlin only (CONVERT_TZ in the expected values).
    db->sql("mysql", run_checked({"mariadb-tzinfo-to-sql", "/usr/share/zoneinfo/Europe/Berlin", "Europe/Berlin"},
                                 db->dir()));
    std::string ddl = "CREATE DATABASE src;\nUSE src;\nCREATE TABLE types (id INT PRIMARY KEY";
    for (const auto& c : matrix) ddl += ",\n  " + c.name + " " + c.source_type;
    ddl += ");\n"
           "CREATE TABLE w_orders (id BIGINT PRIMARY KEY, qty INT NOT NULL DEFAULT 0, note TEXT, big LONGTEXT, "
           "price DECIMAL(12,2), ts DATETIME(6), doc JSON);\n"
           "CREATE TABLE w_lines (order_id BIGINT, line INT, sku VARCHAR(20) NOT NULL, amount DECIMAL(10,3), "
           "PRIMARY KEY (order_id, line));\n"
           "CREATE TABLE w_evo (id BIGINT PRIMARY KEY, a INT, s VARCHAR(10), old TEXT, gone INT);\n"
           "INSERT INTO w_evo SELECT seq, seq, CONCAT('v', seq), CONCAT('o', seq), seq FROM seq_1_to_20;\n"
           "CREATE TABLE marker (id INT PRIMARY KEY);\nINSERT INTO marker VALUES (0);\n";
    db->sql("", ddl);

    const char* seed_env = std::getenv("CDC2DORIS_SOURCE_SEED");
    seed = seed_env ? static_cast<uint32_t>(std::stoul(seed_env)) : std::random_device{}();
    workload = std::make_unique<Workload>(seed, mariadb_dialect());
    std::string snap;
    for (int r = 0; r < kMatrixRows; ++r) snap += matrix_insert(matrix, r, 0);
    db->sql("src", snap);
    db->sql("src", workload->transactions(60));

    emu = std::make_unique<Emulator>(EmulatorOptions{});
    for (const auto& m : kModes) {
      emu->sql("", "CREATE DATABASE " + m.doris_db);
      std::vector<std::pair<std::string, std::string>> cols;
      for (const auto& c : matrix) cols.emplace_back(c.name, c.doris(m.schemas));
      emu->sql(m.doris_db, doris_ddl("types", {{"id", "INT"}}, cols));
      // w_orders orders its rows by the source position (binlog position /
      // LSN) in a Doris sequence column, configured under the target name.
      for (const auto& t : work_tables())
        emu->sql(m.doris_db, doris_ddl(t.name, t.key, t.cols, t.name == "w_orders" ? "src_pos" : ""));
      emu->sql(m.doris_db, "CREATE TABLE marker (id INT NOT NULL) UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1");
    }

    for (const auto& m : kModes) {
      const std::string s = m.schemas ? "true" : "false";
      connect->create_connector(m.prefix, {
          {"connector.class", "io.debezium.connector.mysql.MySqlConnector"},
          {"tasks.max", "1"},
          {"database.hostname", db->host()},
          {"database.port", std::to_string(db->port())},
          {"database.user", db->user()},
          {"database.password", db->password()},
          {"database.server.id", std::to_string(m.server_id)},
          {"database.include.list", "src"},
          {"topic.prefix", m.prefix},
          {"include.schema.changes", "false"},
          {"schema.history.internal", "io.debezium.storage.file.history.FileSchemaHistory"},
          {"schema.history.internal.file.filename", (connect->dir() / ("history-" + m.prefix)).string()},
          // BIGINT UNSIGNED beyond 2^63 needs the Decimal form.
          {"bigint.unsigned.handling.mode", "precise"},
          // The default maps years 0..69 / 70..99 to 2000.. / 1900.., so
          // DATETIME '0001-01-01' would arrive as 2001-01-01.
          {"enable.time.adjuster", "false"},
          {"key.converter", "org.apache.kafka.connect.json.JsonConverter"},
          {"key.converter.schemas.enable", s},
          {"value.converter", "org.apache.kafka.connect.json.JsonConverter"},
          {"value.converter.schemas.enable", s},
          // The exact source types (VARCHAR(10), INT) for w_evo's created and widened columns.
          {"column.propagate.source.type", "src\\.w_evo\\..*"},
      });
    }
    for (const auto& m : kModes) connect->wait_running(m.prefix);
    wait_for_topics(broker.bootstrap(), 180s);

    for (const auto& m : kModes)
      daemons[m.prefix] = std::make_unique<Daemon>("daemon-" + m.prefix, broker.bootstrap(),
                                                   "^" + m.prefix + "\\\\..*", emu->fe(), m.doris_db,
                                                   routing_tables(m));

    std::string stream;
    for (int r = kMatrixRows; r < 2 * kMatrixRows; ++r) stream += matrix_insert(matrix, r, 3);
    db->sql("src", stream);
    // w_evo's schema changes, each statement its own transaction, rows of
    // the old and new shapes around each, while the workload goes on.
    const char* evo[] = {
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
    for (int slice = 0; slice < 4; ++slice) {
      db->sql("src", workload->transactions(50));
      for (size_t i = static_cast<size_t>(slice) * 4; i < std::min(std::size(evo), static_cast<size_t>(slice + 1) * 4); ++i)
        db->sql("src", evo[i]);
      std::this_thread::sleep_for(300ms);
    }
    std::string upd;
    for (int r = 0; r < 4; ++r) {
      upd += "SET time_zone = '" + kSessionZones[static_cast<size_t>(r + 2) % kSessionZones.size()] +
             "';\nUPDATE types SET ";
      bool first = true;
      for (const auto& c : matrix) {
        upd += std::string(first ? "" : ", ") + c.name + " = " + c.values[static_cast<size_t>(r + 7) % c.values.size()];
        first = false;
      }
      upd += " WHERE id = " + std::to_string(r * 3) + ";\n";
    }
    upd += "DELETE FROM types WHERE id IN (1, " + std::to_string(kMatrixRows + 1) + ");\n";
    upd += "UPDATE types SET id = 1000 WHERE id = 2;\n";
    db->sql("src", upd);
    db->sql("src", "INSERT INTO marker VALUES (1);");
    wait_for_marker(broker.bootstrap(), 120s);
  }

  void wait_for_topics(const std::string& bootstrap, std::chrono::seconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      bool all = true;
      for (const auto& m : kModes) {
        auto ends = end_offsets(bootstrap, m.prefix + ".");
        for (const char* t : {"types", "w_orders", "w_lines", "marker"}) {
          auto it = ends.find(m.prefix + ".src." + t + "[0]");
          if (it == ends.end() || it->second == 0) all = false;
        }
        auto it = ends.find(m.prefix + ".src.types[0]");
        if (it == ends.end() || it->second < kMatrixRows) all = false;
      }
      if (all) return;
      if (std::chrono::steady_clock::now() > deadline) {
        std::string have;
        for (const auto& [tp, end] : end_offsets(bootstrap, "my")) have += tp + "=" + std::to_string(end) + " ";
        throw std::runtime_error("the Debezium snapshot did not reach Kafka (" + have + "):\n" +
                                 connect->status(kModes[0].prefix) + "\n" + connect->log_tail());
      }
      std::this_thread::sleep_for(500ms);
    }
  }

  // The marker row is written last; once it is in Kafka, the end offsets
  // must also stand still for a moment (other topics' batches in flight).
  void wait_for_marker(const std::string& bootstrap, std::chrono::seconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    for (const auto& m : kModes) {
      for (;;) {
        auto ends = end_offsets(bootstrap, m.prefix + ".src.marker");
        auto it = ends.find(m.prefix + ".src.marker[0]");
        if (it != ends.end() && it->second >= 2) break;
        if (std::chrono::steady_clock::now() > deadline)
          throw std::runtime_error("the last change did not reach Kafka (" + m.prefix + "):\n" + connect->log_tail());
        std::this_thread::sleep_for(300ms);
      }
    }
    for (auto prev = end_offsets(bootstrap, "my");;) {
      std::this_thread::sleep_for(1500ms);
      auto now = end_offsets(bootstrap, "my");
      if (now == prev) return;
      prev = std::move(now);
    }
  }
};

Scenario& scenario() {
  static Scenario s;
  return s;
}

void dump_topic(const std::string& topic, const std::map<std::string, int64_t>& ends) {
  const char* dir = std::getenv("CDC2DORIS_SOURCE_DUMP_DIR");
  if (dir == nullptr || *dir == 0) return;
  auto it = ends.find(topic + "[0]");
  if (it == ends.end()) return;
  auto recs = consume_all(KafkaBroker::shared().bootstrap(), topic, static_cast<size_t>(it->second), 60s);
  std::ofstream out(std::string(dir) + "/" + topic + ".records");
  for (const auto& r : recs) out << r.offset << " " << r.key.value_or("null") << " " << r.value.value_or("null") << "\n";
}

void check_mode(const Mode& m) {
  auto& s = scenario();
  REQUIRE(s.setup_error == "");
  INFO("workload seed " << s.seed << " (CDC2DORIS_SOURCE_SEED reproduces it)");
  auto& d = *s.daemons.at(m.prefix);
  const auto ends = end_offsets(KafkaBroker::shared().bootstrap(), m.prefix + ".");
  const std::string lag = wait_committed(*s.emu, d, ends, 180s);
  INFO("daemon log:\n" << d.log_tail());
  REQUIRE(lag == "");

  std::vector<std::pair<std::string, std::string>> types_expected{{"id", "id"}};
  for (const auto& c : s.matrix) types_expected.emplace_back(c.name, expected_expr(c, m.schemas));
  const auto src_types = source_rows(*s.db, "types", types_expected);
  CHECK(src_types.size() == 2 * kMatrixRows - 2);
  {
    INFO("table types");
    const auto diff = compare_rows(src_types, s.emu->rows(m.doris_db, "types"), {"id"});
    CHECK(diff == "");
    if (!diff.empty()) dump_topic(m.prefix + ".src.types", ends);
  }
  size_t workload_rows = 0;
  for (const auto& t : work_tables()) {
    INFO("table " << t.name);
    std::vector<std::string> key;
    for (const auto& k : t.key) key.push_back(k.first);
    const auto src = source_rows(*s.db, t.name, t.expected);
    workload_rows += src.size();
    const auto doris_rows = s.emu->rows(m.doris_db, t.name);
    const auto diff = compare_rows(src, doris_rows, key);
    CHECK(diff == "");
    if (t.name == "w_orders") {  // the sequence column is set by the target-keyed setting
      size_t unset = 0;
      for (const auto& r : doris_rows) unset += r.find("\"src_pos\":null") != std::string::npos;
      CHECK(unset == 0);
    }
    if (!diff.empty()) dump_topic(m.prefix + ".src." + t.name, ends);
  }
  if (m.schemas) {
    // Created from the snapshot; b added, c added with its default (the rows
    // already there read 7 in both), a INT -> BIGINT, s VARCHAR(10) ->
    // VARCHAR(50), old renamed (its values kept), gone dropped.
    INFO("table w_evo");
    const auto src = source_rows(*s.db, "w_evo",
                                 {{"id", "id"}, {"a", "a"}, {"s", "s"}, {"renamed", "renamed"}, {"b", "b"}, {"c", "c"}});
    CHECK(src.size() == 54);
    CHECK(compare_rows(src, s.emu->rows(m.doris_db, "w_evo"), {"id"}) == "");
    const std::string desc = s.emu->query(m.doris_db, "DESC w_evo");
    for (const char* col : {R"x(["id","BIGINT")x", R"x(["a","BIGINT")x", R"x(["s","VARCHAR(200)")x",
                            R"x(["renamed","TEXT")x", R"x(["b","INT")x", R"x(["c","INT")x"})
      CHECK_THAT(desc, Catch::Contains(col));
    CHECK(desc.find("\"gone\"") == std::string::npos);
  }
  size_t records = 0;
  for (const auto& [tp, end] : ends) records += static_cast<size_t>(end);
  WARN("mode " << m.prefix << ": " << records << " Kafka records (incl. tombstones), " << src_types.size()
               << " type-matrix rows, " << workload_rows << " workload rows compared");
}

}  // namespace

TEST_CASE("MariaDB via Debezium's MySQL connector, JsonConverter with schemas: every row in Doris equals the source",
          "[sources][mariadb]") {
  check_mode(kModes[0]);
}

TEST_CASE("MariaDB via Debezium's MySQL connector, JsonConverter without schemas: every row in Doris equals the source",
          "[sources][mariadb]") {
  check_mode(kModes[1]);
}
