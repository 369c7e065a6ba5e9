// Divergences from Doris found by replaying Doris' own regression suites
// (tests/doris_regression, issue 30), one case each, in process.
#include "tools/doris_emulator/engine.hpp"
#include "tools/doris_emulator/query_exec.hpp"

#include <boost/json.hpp>
#include <catch2/catch.hpp>

using namespace cdc2doris::emu;
namespace json = boost::json;

namespace {

struct RegFix {
  Engine e{Config{}};
  RegFix() {
    e.recover();
    e.execute_sql("", "CREATE DATABASE IF NOT EXISTS d");
  }
  json::object load(const std::string& table, const std::string& body, std::map<std::string, std::string> h) {
    LoadRequest r;
    r.db = "d";
    r.table = table;
    r.headers = std::move(h);
    r.authorization = "Basic cm9vdDo=";  // root:
    r.content_length = static_cast<int64_t>(body.size());
    Reply early;
    auto l = e.start_load(r, &early);
    if (!l) return json::parse(early.body).as_object();
    l->feed(body.data(), body.size());
    return json::parse(l->finish().body).as_object();
  }
  std::string rows(const std::string& t) { return *e.rows_jsonl("d", t); }
};

}  // namespace

TEST_CASE("regression: empty optional headers are ignored as by Doris' BE", "[emulator][regression]") {
  // load_json_null_to_nullable sets columns/jsonpaths/json_root/where/fuzzy_parse to ''.
  RegFix f;
  f.e.execute_sql("d", "CREATE TABLE t (k INT, v VARCHAR(8)) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1");
  auto r = f.load("t", "[{\"k\":1,\"v\":\"a\"}]",
                  {{"format", "json"}, {"strip_outer_array", "true"}, {"read_json_by_line", ""}, {"columns", ""},
                   {"jsonpaths", ""}, {"json_root", ""}, {"where", ""}, {"fuzzy_parse", ""},
                   {"max_filter_ratio", ""}, {"label", ""}});
  CHECK(r["Status"] == "Success");
  CHECK(r["NumberLoadedRows"] == 1);
  CHECK(!r["Label"].as_string().empty());
}

TEST_CASE("regression: csv_with_names skips its header line whatever skip_lines says", "[emulator][regression]") {
  RegFix f;
  f.e.execute_sql("d", "CREATE TABLE t (k INT, v INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1");
  auto r = f.load("t", "1,1\n2,2\n3,3\n4,4\n",
                  {{"format", "csv_with_names"}, {"column_separator", ","}, {"skip_lines", "3"}});
  CHECK(r["NumberLoadedRows"] == 3);
  r = f.load("t", "1,1\n2,2\n3,3\n4,4\n", {{"format", "csv"}, {"column_separator", ","}, {"skip_lines", "3"}});
  CHECK(r["NumberLoadedRows"] == 1);
}

TEST_CASE("regression: DEFAULT CURRENT_TIMESTAMP / CURRENT_DATE take the load's time", "[emulator][regression]") {
  RegFix f;
  f.e.execute_sql("d",
                  "CREATE TABLE t (k INT, ts DATETIME DEFAULT CURRENT_TIMESTAMP, d DATE default current_date) "
                  "DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1");
  auto r = f.load("t", "{\"k\":1}\n", {{"format", "json"}});
  REQUIRE(r["Status"] == "Success");
  auto row = json::parse(f.rows("t")).as_object();
  CHECK(row["ts"].is_string());
  CHECK(row["d"].is_string());
}

TEST_CASE("regression: a load failing on too many filtered rows reports 0 loaded rows (newest Doris)",
          "[emulator][regression]") {
  // Older suites (load_jsonb, load_json_column_exclude_schema_without_jsonpath) expect the
  // loaded count; the newest stream_load_executor.cpp resets number_loaded_rows to 0
  // whenever the fragment's status is not OK, "too many filtered rows" included.
  RegFix f;
  f.e.execute_sql("d", "CREATE TABLE t (k INT NOT NULL, v INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1");
  auto r = f.load("t", "1\t1\n\\N\t2\n3\t3\n", {});
  CHECK(r["Status"] == "Fail");
  CHECK(r["Message"] == "[DATA_QUALITY_ERROR]too many filtered rows");
  CHECK(r["NumberTotalRows"] == 3);
  CHECK(r["NumberLoadedRows"] == 0);
  CHECK(r["NumberFilteredRows"] == 1);
}

TEST_CASE("regression: two JSON objects on one line fail a read_json_by_line load", "[emulator][regression]") {
  RegFix f;
  f.e.execute_sql("d", "CREATE TABLE t (k INT, v INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1");
  auto r = f.load("t", "{\"k\":1,\"v\":1}, {\"k\":2,\"v\":2}\n{\"k\":3,\"v\":3}",
                  {{"format", "json"}, {"read_json_by_line", "true"}});
  CHECK(r["Status"] == "Fail");
  CHECK(r["Message"] == "[DATA_QUALITY_ERROR]Multiple JSON objects in a single line");
  r = f.load("t", "{\"k\":1,\"v\":1}  \n{\"k\":3,\"v\":3}\n", {{"format", "json"}, {"read_json_by_line", "true"}});
  CHECK(r["Status"] == "Success");
}

TEST_CASE("regression: SYNC is accepted on the query port", "[emulator][regression]") {
  RegFix f;
  QuerySession s(f.e, "root", "127.0.0.1", 1);
  CHECK_FALSE(s.run("sync").error);
}

TEST_CASE("regression: a trailing comma before ')' in CREATE TABLE is accepted", "[emulator][regression]") {
  // load_json_parse_failed's DDL.
  RegFix f;
  f.e.execute_sql("d", "CREATE TABLE t (`a` varchar(50) NULL, `b` varchar(50) NULL, ) DISTRIBUTED BY HASH(a) BUCKETS AUTO");
  auto r = f.load("t", "x\ty\n", {});
  CHECK(r["NumberLoadedRows"] == 1);
}

TEST_CASE("regression: an enclosed CSV field keeps its line delimiters", "[emulator][regression]") {
  // test_csv_enclose_multi_char_delimiter / enclose_normal.csv.
  RegFix f;
  f.e.execute_sql("d", "CREATE TABLE t (k INT, v STRING) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1");
  auto r = f.load("t", "1@@\"a$$$b\"$$$2@@\"c\\\"$$$\"",
                  {{"column_separator", "@@"}, {"line_delimiter", "$$$"}, {"enclose", "\""}, {"escape", "\\"},
                   {"trim_double_quotes", "true"}});
  CHECK(r["NumberTotalRows"] == 2);
  CHECK(r["NumberLoadedRows"] == 2);
  r = f.load("t", "3,\"x\ny\"\n4,z\n", {{"column_separator", ","}, {"enclose", "\""}});
  CHECK(r["NumberLoadedRows"] == 2);
  CHECK(f.rows("t").find("x\\ny") != std::string::npos);
}

TEST_CASE("regression: ARRAY cells in Doris' text form", "[emulator][regression]") {
  // test_stream_load's array_malformat.csv.
  RegFix f;
  f.e.execute_sql("d", "CREATE TABLE t (k INT, a ARRAY<DATE>, b ARRAY<DECIMAL(20,6)>) DUPLICATE KEY(k) "
                       "DISTRIBUTED BY HASH(k) BUCKETS 1");
  auto r = f.load("t", "1|['1991-01-01', '1992-02-02']|[1,\\N,1.3]\n2|1,2|[1,2\n", {{"column_separator", "|"}});
  CHECK(r["NumberLoadedRows"] == 2);
  std::string rows = f.rows("t");
  CHECK(rows.find(R"("a":["1991-01-01","1992-02-02"])") != std::string::npos);
  CHECK(rows.find(R"("b":["1.000000",null,"1.300000"])") != std::string::npos);
  CHECK(rows.find(R"({"k":2,"a":null,"b":null})") != std::string::npos);
}

TEST_CASE("regression: send_batch_parallelism is parsed as the BE's std::stoi does", "[emulator][regression]") {
  RegFix f;
  f.e.execute_sql("d", "CREATE TABLE t (k INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1");
  CHECK(f.load("t", "1\n", {{"send_batch_parallelism", "a"}})["Message"] ==
        "[INVALID_ARGUMENT]send_batch_parallelism must be an integer, stoi");
  CHECK(f.load("t", "1\n", {{"send_batch_parallelism", "21474836471"}})["Message"] ==
        "[INVALID_ARGUMENT]send_batch_parallelism out of range, stoi");
  CHECK(f.load("t", "1\n", {{"send_batch_parallelism", "1"}})["Status"] == "Success");
}

TEST_CASE("regression: SET GLOBAL time_zone is the zone of loads without a timezone header",
          "[emulator][regression]") {
  // datatype_p0/datetimev2/test_tz_streamload2.
  RegFix f;
  f.e.execute_sql("d", "CREATE TABLE t (k INT, ts DATETIME, d DATE) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1");
  QuerySession s(f.e, "root", "127.0.0.1", 1);
  REQUIRE_FALSE(s.run("SET GLOBAL time_zone = 'UTC'").error);
  CHECK(s.run("SET GLOBAL time_zone = 'Mars/Base'").error);
  f.load("t", "1,2024-04-11T06:00:13+08:00,2024-04-11T06:00:13+08:00\n", {{"column_separator", ","}});
  REQUIRE_FALSE(s.run("UNSET GLOBAL VARIABLE time_zone").error);
  f.load("t", "2,2024-04-11T06:00:13+08:00,2024-04-11T06:00:13+08:00\n", {{"column_separator", ","}});
  std::string rows = f.rows("t");
  CHECK(rows.find(R"({"k":1,"ts":"2024-04-10 22:00:13","d":"2024-04-11"})") != std::string::npos);
  CHECK(rows.find(R"({"k":2,"ts":"2024-04-11 06:00:13","d":"2024-04-11"})") != std::string::npos);
}

TEST_CASE("regression: BOOLEAN is described as TINYINT(1), TINYINT as TINYINT(4)", "[emulator][regression]") {
  // Doris' .out files show BOOLEAN as true/false (JDBC tinyInt1isBit) and TINYINT(1) columns as numbers.
  RegFix f;
  f.e.execute_sql("d", "CREATE TABLE t (k INT, b BOOLEAN, t TINYINT(1)) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1");
  QuerySession s(f.e, "root", "127.0.0.1", 1);
  REQUIRE_FALSE(s.run("USE d").error);
  auto q = s.run("SELECT b, t FROM t");
  REQUIRE(q.cols.size() == 2);
  CHECK(q.cols[0].type == mysql::Type::Tiny);
  CHECK(q.cols[0].length == 1);
  CHECK(q.cols[1].type == mysql::Type::Tiny);
  CHECK(q.cols[1].length == 0);  // the type's default, 4
}
