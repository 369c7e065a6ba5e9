// In-process tests of the emulator engine: values, SQL, header-phase checks,
// the transaction state machine with every §4.2 message, table models,
// timeouts and write-ahead recovery. No sockets.
#include "tools/doris_emulator/engine.hpp"
#include "tools/fixtures/temp_dir.hpp"

#include <boost/json.hpp>
#include <catch2/catch.hpp>
#include <zlib.h>

#include <fstream>

using namespace cdc2doris::emu;
namespace json = boost::json;

namespace {

const std::string kRoot = "Basic cm9vdDo=";  // root:

struct Fix {
  Engine e;
  explicit Fix(Config c = {}) : e(std::move(c)) {
    e.recover();
    e.execute_sql("", "CREATE DATABASE IF NOT EXISTS d");
  }
  json::object load(const std::string& table, const std::string& body, std::map<std::string, std::string> h = {},
                    bool chunked = false, std::string authz = kRoot) {
    LoadRequest r;
    r.db = "d";
    r.table = table;
    r.headers = std::move(h);
    r.authorization = std::move(authz);
    if (!chunked) r.content_length = static_cast<int64_t>(body.size());
    r.chunked = chunked;
    Reply early;
    auto l = e.start_load(r, &early);
    if (!l) return json::parse(early.body).as_object();
    // Feed in small pieces so line splitting across chunks is exercised.
    for (size_t p = 0; p < body.size(); p += 7) l->feed(body.data() + p, std::min<size_t>(7, body.size() - p));
    return json::parse(l->finish().body).as_object();
  }
  json::object txn(const std::string& op, const std::string& id, const std::string& label = "") {
    std::map<std::string, std::string> h{{"txn_operation", op}};
    if (!id.empty()) h["txn_id"] = id;
    if (!label.empty()) h["label"] = label;
    return json::parse(e.txn_2pc("d", h, kRoot, 0).body).as_object();
  }
  std::vector<std::string> rows(const std::string& t) {
    std::vector<std::string> out;
    std::string s = *e.rows_jsonl("d", t);
    size_t p = 0;
    while (p < s.size()) {
      auto nl = s.find('\n', p);
      out.push_back(s.substr(p, nl - p));
      p = nl + 1;
    }
    return out;
  }
};

std::string S(const json::object& o, const char* k) { return std::string(o.at(k).as_string()); }
int64_t I(const json::object& o, const char* k) { return o.at(k).as_int64(); }

std::string conv(const std::string& type, InValue v) {
  std::string err;
  auto t = parse_type(type, &err);
  REQUIRE(t);
  std::string out, why;
  if (!convert(*t, v, &out, nullptr, &why)) return "FAIL";
  return out;
}
InValue str(std::string_view s) { return InValue{InValue::Str, s, false}; }
InValue num(std::string_view s) { return InValue{InValue::Num, s, false}; }

const std::string kFe = "TStatus: errCode = 2, detailMessage = ";

}  // namespace

TEST_CASE("values: exact decimals, ranges, dates, strings", "[emulator][values]") {
  CHECK(conv("DECIMAL(10,2)", num("1.005")) == "\"1.01\"");
  CHECK(conv("DECIMAL(10,2)", num("-1.004")) == "\"-1.00\"");
  CHECK(conv("DECIMAL(38,10)", str("1234567890123456789012345678.0123456789")) ==
        "\"1234567890123456789012345678.0123456789\"");
  CHECK(conv("DECIMAL(5,2)", num("1234.5")) == "FAIL");
  CHECK(conv("DECIMAL(10,2)", num("1e2")) == "\"100.00\"");
  CHECK(conv("DECIMAL(10,2)", num("0.05")) == "\"0.05\"");
  CHECK(conv("DECIMAL(10,4)", num("1.5e-3")) == "\"0.0015\"");
  CHECK(conv("DECIMAL(10,2)", num("123.456e1")) == "\"1234.56\"");
  CHECK(conv("DECIMAL(5,2)", str("00012.30")) == "\"12.30\"");
  CHECK(conv("DECIMAL(3,0)", num("-0.5")) == "\"-1\"");
  CHECK(conv("DECIMAL(3,2)", num("0.995")) == "\"1.00\"");
  CHECK(conv("DECIMAL(4,2)", num("99.995")) == "FAIL");
  CHECK(conv("DECIMAL(10,2)", num("0e999999")) == "\"0.00\"");
  CHECK(conv("DECIMAL(10,2)", num("-0.001")) == "\"0.00\"");
  CHECK(conv("DECIMAL(10,2)", num("1.2.3")) == "FAIL");
  CHECK(conv("DATETIME(6)", str("0999-01-02 03:04:05.000007")) == "\"0999-01-02 03:04:05.000007\"");
  CHECK(conv("TINYINT", num("127")) == "127");
  CHECK(conv("TINYINT", num("128")) == "FAIL");
  CHECK(conv("BIGINT", str("-9223372036854775808")) == "-9223372036854775808");
  CHECK(conv("BIGINT", num("1.5")) == "FAIL");
  CHECK(conv("LARGEINT", str("170141183460469231731687303715884105727")) ==
        "\"170141183460469231731687303715884105727\"");
  CHECK(conv("DATE", str("2024-02-29")) == "\"2024-02-29\"");
  CHECK(conv("DATE", str("2023-02-29")) == "FAIL");
  CHECK(conv("DATETIME(3)", str("2024-01-01T10:00:00.123456")) == "\"2024-01-01 10:00:00.123\"");
  CHECK(conv("DATETIME(6)", str("2024-01-01 10:00:00.5")) == "\"2024-01-01 10:00:00.500000\"");
  CHECK(conv("DATETIME", str("2024-01-01 25:00:00")) == "FAIL");
  CHECK(conv("VARCHAR(3)", str("abcd")) == "FAIL");
  CHECK(conv("CHAR(4)", str("ab\"c")) == "\"ab\\\"c\"");
  CHECK(conv("BOOLEAN", str("TRUE")) == "true");
  CHECK(conv("DOUBLE", num("0.1")) == "0.1");
  CHECK(conv("JSON", InValue{InValue::Raw, "{\"a\": [1, 2]}", false}) == "{\"a\":[1,2]}");
  CHECK(conv("JSON", str("{\"b\":1}")) == "{\"b\":1}");
  CHECK(conv("JSON", str("not json")) == "FAIL");
  std::string err;
  CHECK_FALSE(parse_type("DECIMAL(40,2)", &err));
  CHECK_FALSE(parse_type("GEOMETRY", &err));
}

TEST_CASE("sql: DDL, DESC, SHOW and errors", "[emulator][sql]") {
  Fix f;
  f.e.execute_sql("d", "CREATE TABLE `t` (id INT NOT NULL, v VARCHAR(8) DEFAULT 'x', c DECIMAL(10,2)) "
                       "UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1 PROPERTIES (\"replication_num\" = \"1\")");
  CHECK_THROWS_WITH(f.e.execute_sql("d", "CREATE TABLE t (id INT) DUPLICATE KEY(id)"),
                    "errCode = 2, detailMessage = Table 't' already exists");
  auto show = json::parse(f.e.query("d", "SHOW TABLES", true)).as_object();
  CHECK(json::serialize(show) ==
        R"({"data":{"type":"result_set","meta":[{"name":"Tables_in_d","type":"CHAR"}],"data":[["t"]],"time":0},"msg":"success","code":0})");
  auto nonstream = json::parse(f.e.query("d", "SHOW TABLES", false)).as_object();
  CHECK(nonstream.at("count").as_int64() == 0);
  auto err = json::parse(f.e.query("d", "INSERT INTO t VALUES (1)", true)).as_object();
  CHECK(json::serialize(err) ==
        R"({"msg":"Error","code":1,"data":"Failed to execute sql: errCode = 2, detailMessage = Unsupported statement type","count":0})");
  f.e.execute_sql("d", "ALTER TABLE t ADD COLUMN n BIGINT DEFAULT \"7\"");
  f.e.execute_sql("d", "ALTER TABLE t RENAME COLUMN v vv");
  // Doris refuses a MODIFY that drops the default (Column.checkSchemaChangeAllowed): it is restated.
  CHECK_THROWS_WITH(f.e.execute_sql("d", "ALTER TABLE t MODIFY COLUMN vv VARCHAR(20)"),
                    Catch::Contains("Can not change default value"));
  f.e.execute_sql("d", "ALTER TABLE t MODIFY COLUMN vv VARCHAR(20) DEFAULT 'x'");
  f.e.execute_sql("d", "ALTER TABLE t DROP COLUMN c");
  CHECK_THROWS_WITH(f.e.execute_sql("d", "ALTER TABLE t DROP COLUMN id"),
                    Catch::Contains("Can not drop key column in Unique data model table"));
  auto desc = json::parse(f.e.query("d", "DESC t", true)).as_object();
  auto& rows = desc.at("data").as_object().at("data").as_array();
  REQUIRE(rows.size() == 3);
  CHECK(json::serialize(rows[1]) == R"x(["vv","VARCHAR(20)","YES","false","x","REPLACE"])x");
  auto schema = json::parse(f.e.schema_json("d", "t")).as_object();
  CHECK(S(schema.at("data").as_object(), "keysType") == "UNIQUE_KEYS");
  f.e.execute_sql("d", "TRUNCATE TABLE t");
  f.e.execute_sql("d", "DROP TABLE t");
  CHECK_THROWS_WITH(f.e.execute_sql("d", "DROP TABLE t"), Catch::Contains("Unknown table 't'"));
  CHECK(f.e.query("d", "SELECT 1", true).find("\"code\":1") != std::string::npos);
}

TEST_CASE("stream load: header-phase failures carry TxnId -1 and exact messages", "[emulator][load]") {
  Config c;
  c.streaming_load_max_mb = 1;
  Fix f(c);
  f.e.execute_sql("d", "CREATE TABLE t (id INT, v STRING) UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1");
  auto msg = [&](std::map<std::string, std::string> h, std::string authz = kRoot, const std::string& table = "t") {
    auto r = f.load(table, "", std::move(h), false, std::move(authz));
    CHECK(I(r, "TxnId") == -1);
    CHECK(S(r, "Status") == "Fail");
    return S(r, "Message");
  };
  CHECK(msg({}, "") == "[NOT_AUTHORIZED]no valid Basic authorization");
  CHECK(msg({}, "Basic cm9vdDp4") == "[ANALYSIS_ERROR]" + kFe + "Access denied for user 'root' (using password: YES)");
  CHECK(msg({{"format", "xml"}}) == "[INVALID_ARGUMENT]unknown data format, format=xml");
  CHECK(msg({}, kRoot, "nope") == "[NOT_FOUND]TStatus: errCode = 7, detailMessage = table not found, tableName=nope");
  CHECK(msg({{"label", "a.b"}}) ==
        "[ANALYSIS_ERROR]" + kFe + "Label format error. regex: ^[-_A-Za-z0-9:]{1,128}$, label: a.b");
  CHECK(msg({{"group_commit", "bad"}}) == "[INVALID_ARGUMENT]group_commit can only be [async_mode, sync_mode, off_mode]");
  CHECK(msg({{"partitions", "p1"}, {"temporary_partitions", "p2"}}) ==
        "[INVALID_ARGUMENT]Can not specify both partitions and temporary partitions");
  {
    LoadRequest r;
    r.db = "d";
    r.table = "t";
    r.authorization = kRoot;
    Reply early;
    CHECK_FALSE(f.e.start_load(r, &early));
    CHECK(early.body.find("content_length is empty and transfer-encoding!=chunked, please set content_length or "
                          "transfer-encoding=chunked") != std::string::npos);
    r.content_length = 5;
    r.chunked = true;
    CHECK_FALSE(f.e.start_load(r, &early));
    CHECK(early.body.find("[INVALID_ARGUMENT]please do not set both content_length and transfer-encoding") !=
          std::string::npos);
    r.chunked = false;
    r.content_length = 2 * 1024 * 1024;
    CHECK_FALSE(f.e.start_load(r, &early));
    CHECK(early.body.find("body size 2097152 exceeds the limit 1048576") != std::string::npos);
    r.db = "nodb";
    r.content_length = 0;
    CHECK_FALSE(f.e.start_load(r, &early));
    CHECK(early.body.find("[NOT_FOUND]TStatus: errCode = 7, detailMessage = unknown database, database=nodb") !=
          std::string::npos);
  }
  // Plan errors happen after begin: the txn exists and is aborted.
  auto r = f.load("t", "", {{"strict_mode", "maybe"}});
  CHECK(I(r, "TxnId") > 0);
  CHECK(S(r, "Message") == "[INVALID_ARGUMENT]Invalid strict mode format. Must be bool type");
  CHECK(S(f.load("t", "", {{"merge_type", "MERGE"}}), "Message") ==
        "[ANALYSIS_ERROR]" + kFe + "Excepted DELETE ON clause when merge type is MERGE.");
  CHECK(S(f.load("t", "", {{"delete", "id=1"}}), "Message") ==
        "[ANALYSIS_ERROR]" + kFe + "Not support DELETE ON clause when merge type is not MERGE.");
  CHECK(S(f.load("t", "", {{"merge_type", "upsert"}}), "Message") == "[INVALID_ARGUMENT]Invalid merge type upsert");
  CHECK(S(f.load("t", "", {{"unique_key_update_mode", "x"}}), "Message") ==
        "[INVALID_ARGUMENT]Invalid unique_key_partial_mode x, must be one of 'UPSERT', 'UPDATE_FIXED_COLUMNS' or "
        "'UPDATE_FLEXIBLE_COLUMNS'");
}

TEST_CASE("stream load: response field order and empty body", "[emulator][load]") {
  Fix f;
  f.e.execute_sql("d", "CREATE TABLE t (id INT, v STRING) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1");
  LoadRequest r;
  r.db = "d";
  r.table = "t";
  r.authorization = kRoot;
  r.content_length = 0;
  r.headers = {{"label", "probe"}, {"two_phase_commit", "true"}, {"comment", "hi"}};
  Reply early;
  auto l = f.e.start_load(r, &early);
  REQUIRE(l);
  std::string body = l->finish().body;
  std::vector<std::string> keys;
  for (size_t p = 0; (p = body.find("\n    \"", p)) != std::string::npos; ++p)
    keys.push_back(body.substr(p + 6, body.find('"', p + 6) - p - 6));
  CHECK(keys == std::vector<std::string>{"TxnId", "Label", "Comment", "TwoPhaseCommit", "Status", "Message",
                                         "NumberTotalRows", "NumberLoadedRows", "NumberFilteredRows",
                                         "NumberUnselectedRows", "LoadBytes", "LoadTimeMs", "BeginTxnTimeMs",
                                         "StreamLoadPutTimeMs", "ReadDataTimeMs", "WriteDataTimeMs",
                                         "ReceiveDataTimeMs", "CommitAndPublishTimeMs"});
  CHECK(body.rfind("{\n    \"TxnId\": ", 0) == 0);
  CHECK(body.substr(body.size() - 3) == "\n}\n");
  auto o = json::parse(body).as_object();
  CHECK(S(o, "Status") == "Success");
  CHECK(S(o, "TwoPhaseCommit") == "true");
  CHECK(S(o, "Comment") == "hi");
  CHECK(I(o, "NumberTotalRows") == 0);
}

TEST_CASE("2PC: every state transition and message", "[emulator][txn]") {
  Fix f;
  f.e.execute_sql("d", "CREATE TABLE t (id INT, v STRING) UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1");
  std::map<std::string, std::string> pc{{"format", "json"}, {"two_phase_commit", "true"}};
  auto h = [&](const std::string& label) {
    auto m = pc;
    m["label"] = label;
    return m;
  };
  auto r1 = f.load("t", "{\"id\":1,\"v\":\"a\"}\n", h("L1"));
  REQUIRE(S(r1, "Status") == "Success");
  std::string id = std::to_string(I(r1, "TxnId"));
  CHECK(f.rows("t").empty());  // invisible while PRECOMMITTED
  // Label exists while PRECOMMITTED.
  auto dup = f.load("t", "", h("L1"));
  CHECK(S(dup, "Status") == "Label Already Exists");
  CHECK(S(dup, "ExistingJobStatus") == "PRECOMMITTED");
  CHECK(S(dup, "Message") == "[LABEL_ALREADY_EXISTS]" + kFe + "Label [L1] has already been used, relate to txn [" + id + "]");
  auto ok = f.txn("commit", id);
  CHECK(json::serialize(ok) == R"({"status":"Success","msg":"transaction [)" + id + R"(] commit successfully."})");
  CHECK(f.rows("t") == std::vector<std::string>{R"({"id":1,"v":"a"})"});
  CHECK(S(f.txn("commit", id), "msg") == kFe + "transaction [" + id + "] is already visible, not pre-committed.");
  CHECK(S(f.txn("abort", id), "msg") == kFe + "transaction [" + id + "] is already VISIBLE, could not abort.");
  CHECK(S(f.load("t", "", h("L1")), "ExistingJobStatus") == "FINISHED");
  CHECK(S(f.txn("commit", "999999"), "msg") == kFe + "transaction [999999] not found");
  CHECK(S(f.txn("abort", "999999"), "status") == "ANALYSIS_ERROR");
  auto bad = f.txn("commit", "abc");
  CHECK(json::serialize(bad) == R"({"status":"INTERNAL_ERROR","msg":"convert txn_id [abc] failed, reason=stoll"})");
  CHECK(S(f.txn("publish", id), "msg") == "transaction operation should be 'commit' or 'abort'");

  // Abort by label, then messages for an aborted txn; aborted labels are reusable.
  auto r2 = f.load("t", "{\"id\":2}\n", h("L2"));
  std::string id2 = std::to_string(I(r2, "TxnId"));
  CHECK(json::serialize(f.txn("abort", "", "L2")) == R"({"status":"Success","msg":"label [L2] abort successfully."})");
  CHECK(S(f.txn("commit", id2), "msg") == kFe + "transaction [" + id2 + "] is already aborted. abort reason: User Abort");
  CHECK(S(f.txn("abort", id2), "msg") == kFe + "transaction [" + id2 + "] is already aborted, abort reason: User Abort");
  CHECK(S(f.txn("commit", "", "L2"), "msg") == kFe + "running transaction not found, label=L2");
  CHECK(S(f.txn("commit", "", "nolabel"), "msg") == kFe + "transaction not found, label=nolabel");
  auto r3 = f.load("t", "{\"id\":3}\n", h("L2"));
  CHECK(S(r3, "Status") == "Success");
  // Commit by label + txn id: both prefixes.
  std::string id3 = std::to_string(I(r3, "TxnId"));
  CHECK(S(f.txn("commit", id3, "L2"), "msg") == "label [L2] transaction [" + id3 + "] commit successfully.");

  // A PREPARE txn (load still streaming): label RUNNING, commit refused, abort allowed.
  LoadRequest lr;
  lr.db = "d";
  lr.table = "t";
  lr.authorization = kRoot;
  lr.chunked = true;
  lr.headers = h("L4");
  Reply early;
  auto streaming = f.e.start_load(lr, &early);
  REQUIRE(streaming);
  std::string id4 = std::to_string(streaming->txn_id());
  CHECK(S(f.load("t", "", h("L4")), "ExistingJobStatus") == "RUNNING");
  CHECK(S(f.txn("commit", id4), "msg") == kFe + "transaction [" + id4 + "] is prepare, not pre-committed.");
  CHECK(S(f.txn("abort", "", "L4"), "status") == "Success");
  streaming->feed("{\"id\":4}\n", 9);
  auto fin = json::parse(streaming->finish().body).as_object();
  CHECK(S(fin, "Status") == "Fail");
  CHECK(S(fin, "Message").find("is already aborted") != std::string::npos);

  // Non-2PC: visible at once; COMMITTED (publish pending) messages.
  f.e.add_fault(R"({"type":"publish_timeout","visible_after_ms":60000})");
  auto r5 = f.load("t", "{\"id\":5}\n", {{"format", "json"}, {"label", "L5"}});
  CHECK(S(r5, "Status") == "Publish Timeout");
  CHECK(S(r5, "Message") == "[PUBLISH_TIMEOUT]TStatus: transaction commit successfully, BUT data will be visible later");
  std::string id5 = std::to_string(I(r5, "TxnId"));
  CHECK(S(f.txn("commit", id5), "msg") == kFe + "transaction [" + id5 + "] is already committed, not pre-committed.");
  CHECK(S(f.txn("abort", id5), "msg") == kFe + "transaction [" + id5 + "] is already COMMITTED, could not abort.");
  CHECK(f.rows("t").size() == 2);
  f.e.tick(now_ms() + 61000);
  CHECK(f.rows("t").size() == 3);

  auto wrong_db = json::parse(f.e.txn_2pc("zz", {{"txn_operation", "commit"}, {"txn_id", id}}, kRoot, 0).body).as_object();
  CHECK(S(wrong_db, "msg") == kFe + "unknown database, database=zz");
  auto denied = json::parse(f.e.txn_2pc("d", {{"txn_operation", "commit"}, {"txn_id", id}}, "Basic cm9vdDp4", 0).body).as_object();
  CHECK(S(denied, "msg").find("Access denied for user 'root'") != std::string::npos);
}

TEST_CASE("timeouts, label retention and running-txn limit", "[emulator][txn]") {
  Config c;
  c.precommit_timeout_s = 5;
  c.label_retention_s = 10;
  c.txn_clean_interval_s = 1;
  c.max_running_txns = 2;
  Fix f(c);
  f.e.execute_sql("d", "CREATE TABLE t (id INT) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1");
  std::map<std::string, std::string> h{{"two_phase_commit", "true"}};
  h["label"] = "a";
  std::string a = std::to_string(I(f.load("t", "1\n", h), "TxnId"));
  h["label"] = "b";
  CHECK(S(f.load("t", "2\n", h), "Status") == "Success");
  h["label"] = "c";
  auto lim = f.load("t", "3\n", h);
  CHECK(S(lim, "Message") == "[ANALYSIS_ERROR]" + kFe + "current running txns on db 10001 is 2, larger than limit 2");
  f.e.tick(now_ms() + 6000);
  CHECK(S(f.txn("commit", a), "msg") == kFe + "transaction [" + a + "] is already aborted. abort reason: timeout by txn manager");
  h["label"] = "a";
  CHECK(S(f.load("t", "1\n", h), "Status") == "Success");  // aborted label reusable
  f.txn("commit", "", "a");
  f.e.tick(now_ms() + 20000);  // retention passed for the finished txns
  CHECK(S(f.txn("commit", a), "msg") == kFe + "transaction [" + a + "] not found");
  auto again = f.load("t", "1\n", h);
  CHECK(S(again, "Status") == "Success");
}

TEST_CASE("finished txns forgotten by count, oldest first, by the periodic cleaner", "[emulator][txn]") {
  // label_num_threshold per database (DatabaseTransactionMgr.unprotectedRemoveUselessTxns):
  // beyond it the oldest finished txns go, whatever their age; running ones never count.
  cdc2doris::test::TempDir dir("emu-label-count");
  Config c;
  c.data_dir = dir.path().string();
  c.label_num_threshold = 3;
  c.txn_clean_interval_s = 30;
  std::vector<std::string> ids;
  {
    Fix f(c);
    f.e.execute_sql("d", "CREATE TABLE t (id INT) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1");
    f.e.execute_sql("d", "CREATE TABLE t2 (id INT) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1");
    const int64_t t0 = now_ms();
    f.e.tick(t0);  // the cleaner's first round: nothing finished yet
    for (int i = 1; i <= 4; ++i) {
      auto r = f.load(i % 2 ? "t" : "t2", std::to_string(i) + "\n", {{"label", "l" + std::to_string(i)}});
      REQUIRE(S(r, "Status") == "Success");
      ids.push_back(std::to_string(I(r, "TxnId")));
    }
    // Aborted txns count too; a running (PRECOMMITTED) one does not.
    auto ab = f.load("t", "5\n", {{"label", "l5"}, {"two_phase_commit", "true"}});
    ids.push_back(std::to_string(I(ab, "TxnId")));
    f.txn("abort", ids.back());
    auto run = f.load("t", "6\n", {{"label", "l6"}, {"two_phase_commit", "true"}});
    const std::string running = std::to_string(I(run, "TxnId"));
    f.e.tick(t0 + 10000);  // between two cleaner rounds: nothing forgotten yet
    CHECK(S(f.load("t", "1\n", {{"label", "l1"}}), "Status") == "Label Already Exists");
    f.e.tick(t0 + 30000);
    // Five finished in one database (two tables), threshold 3: the two oldest go.
    CHECK(S(f.txn("commit", ids[0]), "msg") == kFe + "transaction [" + ids[0] + "] not found");
    CHECK(S(f.txn("commit", ids[1]), "msg") == kFe + "transaction [" + ids[1] + "] not found");
    CHECK_THAT(S(f.txn("commit", ids[2]), "msg"), Catch::Matchers::Contains("already visible"));
    CHECK(S(f.txn("commit", running), "status") == "Success");  // became final after the round
  }
  // The order of finishing survives a restart: the next round forgets l3
  // (oldest of l3, l4, l5-aborted, l6) and keeps the newest three.
  Fix g(c);
  g.e.tick(now_ms());
  CHECK(S(g.txn("commit", ids[2]), "msg") == kFe + "transaction [" + ids[2] + "] not found");
  CHECK_THAT(S(g.txn("commit", ids[3]), "msg"), Catch::Matchers::Contains("already visible"));
  CHECK(S(g.load("t", "2\n", {{"label", "l2"}}), "Status") == "Success");  // a forgotten label is free again
}

TEST_CASE("unique model: upsert, delete sign, sequence column, merge types", "[emulator][model]") {
  Fix f;
  f.e.execute_sql("d", "CREATE TABLE u (id BIGINT, v VARCHAR(10)) UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1");
  std::map<std::string, std::string> js{{"format", "json"}, {"hidden_columns", "__DORIS_DELETE_SIGN__"}};
  f.load("u",
         "{\"id\":2,\"v\":\"b\",\"__DORIS_DELETE_SIGN__\":0}\n{\"id\":1,\"v\":\"a\",\"__DORIS_DELETE_SIGN__\":0}\n"
         "{\"id\":1,\"v\":\"a2\",\"__DORIS_DELETE_SIGN__\":0}\n{\"id\":10,\"v\":\"x\",\"__DORIS_DELETE_SIGN__\":0}\n",
         js);
  CHECK(f.rows("u") == std::vector<std::string>{R"({"id":1,"v":"a2"})", R"({"id":2,"v":"b"})", R"({"id":10,"v":"x"})"});
  f.load("u", "{\"id\":2,\"v\":\"b\",\"__DORIS_DELETE_SIGN__\":1}\n", js);
  CHECK(f.rows("u").size() == 2);
  f.load("u", "10\tzz\n", {{"merge_type", "DELETE"}});
  CHECK(f.rows("u") == std::vector<std::string>{R"({"id":1,"v":"a2"})"});
  f.load("u", "1\tdel\n3\tkeep\n", {{"merge_type", "MERGE"}, {"delete", "v=\"del\""}});
  CHECK(f.rows("u") == std::vector<std::string>{R"({"id":3,"v":"keep"})"});

  f.e.execute_sql("d", "CREATE TABLE s (id INT, v STRING, ver BIGINT) UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1 "
                       "PROPERTIES (\"function_column.sequence_col\" = \"ver\")");
  std::map<std::string, std::string> sj{{"format", "json"}, {"hidden_columns", "__DORIS_DELETE_SIGN__"}};
  f.load("s", "{\"id\":1,\"v\":\"new\",\"ver\":5}\n{\"id\":1,\"v\":\"old\",\"ver\":3}\n", sj);
  CHECK(f.rows("s") == std::vector<std::string>{R"({"id":1,"v":"new","ver":5})"});
  f.load("s", "{\"id\":1,\"v\":\"older\",\"ver\":4}\n", sj);
  CHECK(f.rows("s") == std::vector<std::string>{R"({"id":1,"v":"new","ver":5})"});
  f.load("s", "{\"id\":1,\"v\":\"x\",\"ver\":2,\"__DORIS_DELETE_SIGN__\":1}\n", sj);  // stale delete ignored
  CHECK(f.rows("s").size() == 1);
  f.load("s", "{\"id\":1,\"v\":\"x\",\"ver\":6,\"__DORIS_DELETE_SIGN__\":1}\n", sj);
  CHECK(f.rows("s").empty());
  f.load("s", "{\"id\":1,\"v\":\"resurrect\",\"ver\":5}\n", sj);  // tombstone has ver 6
  CHECK(f.rows("s").empty());

  f.e.execute_sql("d", "CREATE TABLE h (id INT, v STRING) UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1 "
                       "PROPERTIES (\"function_column.sequence_type\" = \"BIGINT\")");
  CHECK(S(f.load("h", "", {{"format", "json"}}), "Message") ==
        "[ANALYSIS_ERROR]" + kFe + "Table h has sequence column, need to specify the sequence column");
  f.load("h", "{\"id\":1,\"v\":\"b\",\"lsn\":9}\n{\"id\":1,\"v\":\"a\",\"lsn\":8}\n",
         {{"format", "json"}, {"function_column.sequence_col", "lsn"}, {"columns", "id,v,lsn"}});
  CHECK(f.rows("h") == std::vector<std::string>{R"({"id":1,"v":"b"})"});
}

TEST_CASE("duplicate model, data quality, formats, gzip", "[emulator][model]") {
  Fix f;
  f.e.execute_sql("d", "CREATE TABLE dup (id INT NOT NULL, v VARCHAR(3), n INT) DUPLICATE KEY(id) "
                       "DISTRIBUTED BY HASH(id) BUCKETS 1");
  CHECK(S(f.load("dup", "1\ta\t1\n1\ta\t1\n"), "Status") == "Success");
  CHECK(f.rows("dup").size() == 2);  // duplicates kept, in insertion order
  auto bad = f.load("dup", "2\ttoolong\t1\n3\tok\t1\n");
  CHECK(S(bad, "Message") == "[DATA_QUALITY_ERROR]too many filtered rows");
  CHECK(I(bad, "NumberLoadedRows") == 0);
  CHECK(I(bad, "NumberFilteredRows") == 1);
  CHECK(S(bad, "ErrorURL").find("/api/_load_error_log?file=__shard_") != std::string::npos);
  std::string file = S(bad, "ErrorURL").substr(S(bad, "ErrorURL").find("file=") + 5);
  CHECK(f.e.error_log(file)->find("the length of input is too long than schema") != std::string::npos);
  auto tol = f.load("dup", "2\ttoolong\t1\n3\tok\t1\n", {{"max_filter_ratio", "0.5"}});
  CHECK(S(tol, "Status") == "Success");
  CHECK(I(tol, "NumberFilteredRows") == 1);
  // Non-strict: bad int becomes NULL; strict: filtered.
  CHECK(S(f.load("dup", "4\tx\tnotanint\n"), "Status") == "Success");
  CHECK(f.rows("dup").back() == R"({"id":4,"v":"x","n":null})");
  CHECK(S(f.load("dup", "5\tx\tnotanint\n", {{"strict_mode", "true"}}), "Status") == "Fail");
  // CSV with separators, column count mismatch, columns mapping.
  CHECK(I(f.load("dup", "6,y\n", {{"column_separator", ","}, {"max_filter_ratio", "1"}}), "NumberFilteredRows") == 1);
  f.load("dup", "z|7\n", {{"column_separator", "|"}, {"columns", "v,id"}});
  CHECK(f.rows("dup").back() == R"({"id":7,"v":"z","n":null})");
  // JSON array with strip_outer_array; garbage lines are filtered, not fatal.
  auto arr = f.load("dup", R"([{"id":8,"v":"a"},{"id":9,"v":"b"}])", {{"format", "json"}, {"strip_outer_array", "true"}});
  CHECK(I(arr, "NumberLoadedRows") == 2);
  auto garbage = f.load("dup", "{\"id\":10}\n{oops\n\x01\x02\n", {{"format", "json"}, {"max_filter_ratio", "1"}});
  CHECK(I(garbage, "NumberLoadedRows") == 1);
  CHECK(I(garbage, "NumberFilteredRows") == 2);
  // gzip body.
  std::string plain = "{\"id\":11,\"v\":\"g\"}\n{\"id\":12,\"v\":\"g\"}\n";
  z_stream zs{};
  deflateInit2(&zs, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
  std::string gz(256, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(plain.data());
  zs.avail_in = static_cast<uInt>(plain.size());
  zs.next_out = reinterpret_cast<Bytef*>(gz.data());
  zs.avail_out = static_cast<uInt>(gz.size());
  deflate(&zs, Z_FINISH);
  gz.resize(zs.total_out);
  deflateEnd(&zs);
  auto g = f.load("dup", gz, {{"format", "json"}, {"compress_type", "gz"}}, true);
  CHECK(S(g, "Status") == "Success");
  CHECK(I(g, "NumberLoadedRows") == 2);
  CHECK(I(g, "LoadBytes") == static_cast<int64_t>(gz.size()));
  auto cs = f.e.checksum("d", "dup");
  REQUIRE(cs);
  CHECK(cs->second == static_cast<int64_t>(f.rows("dup").size()));
}

TEST_CASE("faults in the engine: fail_load, too_many_versions, fail_commit, expire, drop_labels", "[emulator][faults]") {
  Fix f;
  f.e.execute_sql("d", "CREATE TABLE t (id INT) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1");
  f.e.add_fault(R"({"type":"fail_load","table":"t","message":"[INTERNAL_ERROR]boom"})");
  auto r = f.load("t", "1\n");
  CHECK(S(r, "Message") == "[INTERNAL_ERROR]boom");
  CHECK(I(r, "TxnId") > 0);
  CHECK(S(f.load("t", "1\n"), "Status") == "Success");  // count 1 consumed
  f.e.add_fault(R"({"type":"fail_load","phase":"header","status":"Fail","message":"[CANCELLED]early"})");
  auto hdr = f.load("t", "1\n");
  CHECK(I(hdr, "TxnId") == -1);
  CHECK(S(hdr, "Message") == "[CANCELLED]early");
  f.e.add_fault(R"({"type":"too_many_versions"})");
  CHECK(S(f.load("t", "1\n"), "Message").rfind("[E-235]failed to init rowset builder. version count: 2001, exceed limit: 2000", 0) == 0);
  f.e.add_fault(R"({"type":"running_txn_limit"})");
  CHECK(S(f.load("t", "1\n"), "Message").find("larger than limit") != std::string::npos);

  std::map<std::string, std::string> pc{{"two_phase_commit", "true"}, {"label", "x"}};
  std::string id = std::to_string(I(f.load("t", "1\n", pc), "TxnId"));
  f.e.add_fault(R"({"type":"fail_commit","apply":true})");
  CHECK(S(f.txn("commit", id), "msg") == kFe + "injected commit failure");
  CHECK(S(f.txn("commit", id), "msg").find("is already visible") != std::string::npos);  // the commit had happened
  pc["label"] = "y";
  std::string id2 = std::to_string(I(f.load("t", "1\n", pc), "TxnId"));
  f.e.add_fault(R"({"type":"fail_commit","status":"INTERNAL_ERROR","message":"nope"})");
  CHECK(json::serialize(f.txn("commit", id2)) == R"({"status":"INTERNAL_ERROR","msg":"nope"})");
  auto ex = json::parse(f.e.add_fault(R"({"type":"expire_precommitted"})")).as_object();
  CHECK(ex.at("aborted").as_int64() == 1);
  CHECK(S(f.txn("commit", id2), "msg").find("abort reason: timeout by txn manager") != std::string::npos);
  auto dropped = json::parse(f.e.add_fault(R"({"type":"drop_labels","db":"d"})")).as_object();
  CHECK(dropped.at("dropped").as_int64() >= 2);
  CHECK(S(f.txn("commit", id), "msg") == kFe + "transaction [" + id + "] not found");
  CHECK_THROWS(f.e.add_fault(R"({"type":"nonsense"})"));
  CHECK_THROWS(f.e.add_fault("not json"));
}

TEST_CASE("write-ahead log: state survives restart, torn tail is cut", "[emulator][persistence]") {
  cdc2doris::test::TempDir dir("emu-wal");
  Config c;
  c.data_dir = dir.path().string();
  std::string pre_id, com_id;
  {
    Fix f(c);
    f.e.execute_sql("d", "CREATE TABLE t (id INT, v STRING) UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1");
    std::map<std::string, std::string> pc{{"two_phase_commit", "true"}, {"label", "pre"}};
    pre_id = std::to_string(I(f.load("t", "1\tpending\n", pc), "TxnId"));
    pc["label"] = "com";
    com_id = std::to_string(I(f.load("t", "2\tcommitted\n", pc), "TxnId"));
    f.txn("commit", com_id);
    f.load("t", "3\tplain\n", {{"label", "plain"}});
    f.e.execute_sql("d", "ALTER TABLE t ADD COLUMN n INT DEFAULT \"0\"");
    LoadRequest lr;  // left streaming: must be aborted by the restart
    lr.db = "d";
    lr.table = "t";
    lr.authorization = kRoot;
    lr.chunked = true;
    lr.headers = {{"label", "streaming"}};
    Reply early;
    auto l = f.e.start_load(lr, &early);
    REQUIRE(l);
  }
  {
    std::ofstream(dir.path() / "wal.log", std::ios::app) << "\x10\x00\x00\x00garbage";  // torn record
  }
  Fix g(c);
  CHECK(g.rows("t") == std::vector<std::string>{R"({"id":2,"v":"committed","n":0})", R"({"id":3,"v":"plain","n":0})"});
  auto ok = g.txn("commit", pre_id);
  CHECK(S(ok, "status") == "Success");
  CHECK(g.rows("t").front() == R"({"id":1,"v":"pending","n":0})");
  CHECK(S(g.load("t", "", {{"label", "com"}}), "ExistingJobStatus") == "FINISHED");
  auto txns = g.e.txns_json("d");
  CHECK(txns.find("load cancelled because the emulator restarted") != std::string::npos);
  std::string next_id = std::to_string(I(g.load("t", "4\tx\t1\n", {{"label", "after"}}), "TxnId"));
  CHECK(std::stoll(next_id) > std::stoll(com_id));
}

namespace {

// The headers cdc2doris' client sends for a fixed-column partial update.
std::map<std::string, std::string> partial_headers(const std::string& columns) {
  return {{"format", "json"}, {"read_json_by_line", "true"}, {"partial_columns", "true"}, {"columns", columns}};
}

const char* kProfile =
    "CREATE TABLE p (id BIGINT NOT NULL, name VARCHAR(20), balance DECIMAL(10,2), city STRING DEFAULT \"nowhere\") "
    "UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1 "
    "PROPERTIES (\"enable_unique_key_merge_on_write\" = \"true\", \"enable_unique_key_skip_bitmap_column\" = \"true\")";

}  // namespace

TEST_CASE("partial update: listed columns change, the others keep their stored values", "[emulator][partial]") {
  Fix f;
  f.e.execute_sql("d", kProfile);
  f.load("p", "{\"id\":1,\"name\":\"ann\",\"balance\":10,\"city\":\"rome\"}\n"
              "{\"id\":2,\"name\":\"bob\",\"balance\":20,\"city\":\"oslo\"}\n",
         {{"format", "json"}});
  // Exactly what the client sends: partial_columns + columns incl. the delete sign.
  auto r = f.load("p",
                  "{\"id\":1,\"balance\":\"11.5\",\"__DORIS_DELETE_SIGN__\":0}\n"
                  "{\"id\":1,\"balance\":12,\"__DORIS_DELETE_SIGN__\":0}\n",  // same key twice: applied in order
                  partial_headers("id,balance,__DORIS_DELETE_SIGN__"));
  CHECK(S(r, "Status") == "Success");
  CHECK(I(r, "NumberLoadedRows") == 2);
  CHECK(f.rows("p") == std::vector<std::string>{R"({"id":1,"name":"ann","balance":"12.00","city":"rome"})",
                                                 R"({"id":2,"name":"bob","balance":"20.00","city":"oslo"})"});
  // unique_key_update_mode (case-insensitive) is the same thing; a listed
  // column missing from a JSON row is set to NULL, not kept.
  f.load("p", "{\"id\":2,\"city\":\"bergen\"}\n",
         {{"format", "json"}, {"unique_key_update_mode", "update_FIXED_columns"}, {"columns", "id,name,city"}});
  CHECK(f.rows("p")[1] == R"({"id":2,"name":null,"balance":"20.00","city":"bergen"})");
  // Without `columns` a fixed partial update is a plain upsert (newest Doris).
  f.load("p", "{\"id\":2,\"name\":\"b2\"}\n", {{"format", "json"}, {"partial_columns", "true"}});
  CHECK(f.rows("p")[1] == R"({"id":2,"name":"b2","balance":null,"city":"nowhere"})");
}

TEST_CASE("partial update: new keys APPEND with defaults or fail with E-7003 under ERROR", "[emulator][partial]") {
  Fix f;
  f.e.execute_sql("d", kProfile);
  f.load("p", "{\"id\":1,\"name\":\"ann\",\"balance\":10,\"city\":\"rome\"}\n", {{"format", "json"}});
  auto h = partial_headers("id,name");
  auto r = f.load("p", "{\"id\":5,\"name\":\"eve\"}\n", h);  // APPEND is the default
  CHECK(S(r, "Status") == "Success");
  CHECK(f.rows("p")[1] == R"({"id":5,"name":"eve","balance":null,"city":"nowhere"})");
  h["partial_update_new_key_behavior"] = "append";
  CHECK(S(f.load("p", "{\"id\":6,\"name\":\"fay\"}\n", h), "Status") == "Success");
  CHECK(f.rows("p").size() == 3);

  h["partial_update_new_key_behavior"] = "ERROR";
  h["two_phase_commit"] = "true";
  r = f.load("p", "{\"id\":1,\"name\":\"a2\"}\n{\"id\":20,\"name\":\"new\"}\n", h);
  CHECK(S(r, "Status") == "Fail");
  CHECK(S(r, "Message") ==
        "[E-7003]Can't append new rows in partial update when partial_update_new_key_behavior is ERROR. "
        "Row with key=[20] is not in table.");
  CHECK(I(r, "NumberLoadedRows") == 0);
  CHECK(f.e.txns_json("d").find("\"state\":\"ABORTED\"") != std::string::npos);
  CHECK(f.rows("p")[0] == R"({"id":1,"name":"ann","balance":"10.00","city":"rome"})");  // nothing applied
  // Existing keys only: fine under ERROR.
  r = f.load("p", "{\"id\":1,\"name\":\"a2\"}\n", h);
  CHECK(S(r, "Status") == "Success");
  f.txn("commit", std::to_string(I(r, "TxnId")));
  CHECK(f.rows("p")[0] == R"({"id":1,"name":"a2","balance":"10.00","city":"rome"})");

  h["partial_update_new_key_behavior"] = "sometimes";
  CHECK(S(f.load("p", "{\"id\":1}\n", h), "Message") ==
        "[INVALID_ARGUMENT]Invalid partial_update_new_key_behavior SOMETIMES, must be one of {'APPEND', 'ERROR'}");

  // A NOT NULL column without default that a new row leaves out: the row is filtered.
  f.e.execute_sql("d", "CREATE TABLE nn (id INT NOT NULL, a INT NOT NULL, b INT) UNIQUE KEY(id) "
                       "DISTRIBUTED BY HASH(id) BUCKETS 1");
  f.load("nn", "{\"id\":1,\"a\":1,\"b\":1}\n", {{"format", "json"}});
  r = f.load("nn", "{\"id\":1,\"b\":2}\n{\"id\":2,\"b\":2}\n", partial_headers("id,b"));
  CHECK(S(r, "Message") == "[DATA_QUALITY_ERROR]too many filtered rows");
  CHECK(I(r, "NumberFilteredRows") == 1);
  auto h2 = partial_headers("id,b");
  h2["max_filter_ratio"] = "0.5";
  r = f.load("nn", "{\"id\":1,\"b\":2}\n{\"id\":2,\"b\":2}\n", h2);
  CHECK(S(r, "Status") == "Success");
  CHECK(f.rows("nn") == std::vector<std::string>{R"({"id":1,"a":1,"b":2})"});
}

TEST_CASE("partial update: header checks, non-UNIQUE tables, key columns", "[emulator][partial]") {
  Fix f;
  f.e.execute_sql("d", kProfile);
  f.e.execute_sql("d", "CREATE TABLE dup (id INT, v INT) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1");
  CHECK(S(f.load("p", "{}\n", {{"format", "json"}, {"unique_key_update_mode", "partial"}}), "Message") ==
        "[INVALID_ARGUMENT]Invalid unique_key_partial_mode partial, must be one of 'UPSERT', 'UPDATE_FIXED_COLUMNS' "
        "or 'UPDATE_FLEXIBLE_COLUMNS'");
  CHECK(S(f.load("dup", "{\"id\":1}\n", partial_headers("id")), "Message") ==
        "[ANALYSIS_ERROR]" + kFe + "Only unique key merge on write support partial update");
  CHECK(S(f.load("p", "{\"name\":\"x\"}\n", partial_headers("name,balance")), "Message") ==
        "[ANALYSIS_ERROR]" + kFe + "Partial update should include all key columns, missing: id");
  CHECK(S(f.load("p", "1\tx\n", {{"unique_key_update_mode", "UPDATE_FLEXIBLE_COLUMNS"}}), "Message") ==
        "[INVALID_ARGUMENT]flexible partial update only support json format as input file currently");
  CHECK(S(f.load("p", "{}\n",
                 {{"format", "json"}, {"unique_key_update_mode", "UPDATE_FLEXIBLE_COLUMNS"},
                  {"hidden_columns", "__DORIS_DELETE_SIGN__"}}),
          "Message") == "[INVALID_ARGUMENT]Don't support flexible partial update when 'hidden_columns' is specified");
  CHECK(S(f.load("p", "{}\n",
                 {{"format", "json"}, {"unique_key_update_mode", "UPDATE_FLEXIBLE_COLUMNS"}, {"columns", "id"}}),
          "Message") == "[INVALID_ARGUMENT]Don't support flexible partial update when 'columns' is specified");
  // UPSERT is a normal load.
  CHECK(S(f.load("p", "{\"id\":9}\n", {{"format", "json"}, {"unique_key_update_mode", "Upsert"}}), "Status") ==
        "Success");
  // Flexible columns need the skip-bitmap hidden column (table property).
  f.e.execute_sql("d", "CREATE TABLE nb (id INT, v INT) UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1");
  CHECK(S(f.load("nb", "{\"id\":1}\n", {{"format", "json"}, {"unique_key_update_mode", "UPDATE_FLEXIBLE_COLUMNS"}}),
          "Message") ==
        "[ANALYSIS_ERROR]" + kFe +
            "Flexible partial update can only support table with skip bitmap hidden column. But table nb doesn't "
            "have it. You can use `ALTER TABLE nb ENABLE FEATURE \"UPDATE_FLEXIBLE_COLUMNS\";` to add it to the table.");
  // SHOW CREATE TABLE shows the properties (how the daemon detects the mode).
  auto show = f.e.query("d", "SHOW CREATE TABLE p", false);
  CHECK(show.find("enable_unique_key_skip_bitmap_column") != std::string::npos);
  CHECK(show.find("CREATE TABLE") != std::string::npos);
}

TEST_CASE("partial update: sequence column reused when not given, delete sign deletes", "[emulator][partial]") {
  Fix f;
  f.e.execute_sql("d", "CREATE TABLE s (id INT, v STRING, w STRING, ver BIGINT) UNIQUE KEY(id) "
                       "DISTRIBUTED BY HASH(id) BUCKETS 1 PROPERTIES (\"function_column.sequence_col\" = \"ver\")");
  f.load("s", "{\"id\":1,\"v\":\"a\",\"w\":\"x\",\"ver\":5}\n{\"id\":2,\"v\":\"b\",\"w\":\"y\",\"ver\":5}\n",
         {{"format", "json"}});
  // No sequence in the update: the stored 5 is reused, so the update applies.
  f.load("s", "{\"id\":1,\"v\":\"a2\"}\n", partial_headers("id,v"));
  CHECK(f.rows("s")[0] == R"({"id":1,"v":"a2","w":"x","ver":5})");
  // With a sequence: an older one loses, a newer one wins and is stored.
  f.load("s", "{\"id\":1,\"w\":\"old\",\"ver\":4}\n", partial_headers("id,w,ver"));
  CHECK(f.rows("s")[0] == R"({"id":1,"v":"a2","w":"x","ver":5})");
  f.load("s", "{\"id\":1,\"w\":\"new\",\"ver\":7}\n", partial_headers("id,w,ver"));
  CHECK(f.rows("s")[0] == R"({"id":1,"v":"a2","w":"new","ver":7})");
  // Delete sign in a partial row deletes the key (sequence reused: 5 >= 5).
  f.load("s", "{\"id\":2,\"__DORIS_DELETE_SIGN__\":1}\n", partial_headers("id,__DORIS_DELETE_SIGN__"));
  CHECK(f.rows("s").size() == 1);
  // ... and leaves a tombstone with that sequence: an older full row cannot resurrect it.
  f.load("s", "{\"id\":2,\"v\":\"zombie\",\"w\":\"z\",\"ver\":4}\n", {{"format", "json"}});
  CHECK(f.rows("s").size() == 1);

  // Hidden sequence column: the header mapping gives it; an older one loses, equal replaces.
  f.e.execute_sql("d", "CREATE TABLE hs (id INT, v STRING, w STRING) UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1 "
                       "PROPERTIES (\"function_column.sequence_type\" = \"BIGINT\")");
  f.load("hs", "{\"id\":1,\"v\":\"a\",\"w\":\"x\",\"lsn\":10}\n",
         {{"format", "json"}, {"columns", "id,v,w,lsn"}, {"function_column.sequence_col", "lsn"}});
  // A fixed partial update must name the hidden sequence too (test_partial_update_seq_type).
  CHECK(S(f.load("hs", "{\"id\":1,\"w\":\"y\"}\n", partial_headers("id,w")), "Message") ==
        "[ANALYSIS_ERROR]" + kFe + "Table hs has sequence column, need to specify the sequence column");
  auto hw = partial_headers("id,w,lsn");
  hw["function_column.sequence_col"] = "lsn";
  f.load("hs", "{\"id\":1,\"w\":\"y\",\"lsn\":10}\n", hw);
  CHECK(f.rows("hs")[0] == R"({"id":1,"v":"a","w":"y"})");
  auto h = partial_headers("id,v,lsn");
  h["function_column.sequence_col"] = "lsn";
  f.load("hs", "{\"id\":1,\"v\":\"stale\",\"lsn\":9}\n", h);
  CHECK(f.rows("hs")[0] == R"({"id":1,"v":"a","w":"y"})");
  f.load("hs", "{\"id\":1,\"v\":\"fresh\",\"lsn\":11}\n", h);
  CHECK(f.rows("hs")[0] == R"({"id":1,"v":"fresh","w":"y"})");
  CHECK(S(f.load("hs", "{\"id\":1}\n", partial_headers("id,__DORIS_SEQUENCE_COL__")), "Message") ==
        "[ANALYSIS_ERROR]" + kFe +
            "Partial update should not include invisible column except delete sign column: __DORIS_SEQUENCE_COL__");
}

TEST_CASE("partial update: flexible columns per row", "[emulator][partial]") {
  Fix f;
  f.e.execute_sql("d", kProfile);
  f.load("p", "{\"id\":1,\"name\":\"ann\",\"balance\":10,\"city\":\"rome\"}\n"
              "{\"id\":2,\"name\":\"bob\",\"balance\":20,\"city\":\"oslo\"}\n",
         {{"format", "json"}});
  std::map<std::string, std::string> h{{"format", "json"}, {"unique_key_update_mode", "UPDATE_FLEXIBLE_COLUMNS"}};
  auto r = f.load("p",
                  "{\"id\":1,\"balance\":1}\n{\"id\":2,\"city\":\"bergen\",\"name\":null}\n"
                  "{\"id\":3,\"name\":\"cy\"}\n{\"id\":1,\"__DORIS_DELETE_SIGN__\":1}\n{\"name\":\"nokey\"}\n",
                  {{"format", "json"}, {"unique_key_update_mode", "UPDATE_FLEXIBLE_COLUMNS"}, {"max_filter_ratio", "0.5"}});
  CHECK(S(r, "Status") == "Success");
  CHECK(I(r, "NumberFilteredRows") == 1);  // the row without its key
  CHECK(f.rows("p") == std::vector<std::string>{R"({"id":2,"name":null,"balance":"20.00","city":"bergen"})",
                                                 R"({"id":3,"name":"cy","balance":null,"city":"nowhere"})"});
}

TEST_CASE("partial update: Doris' rules from its regression suites (flexible deletes, sequence defaults, table checks)",
          "[emulator][partial]") {
  Fix f;
  const std::string props =
      " UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 PROPERTIES (\"enable_unique_key_skip_bitmap_column\" = \"true\"";
  const std::map<std::string, std::string> flex{{"format", "json"}, {"unique_key_update_mode", "UPDATE_FLEXIBLE_COLUMNS"}};
  // Deleted and re-inserted in one load: a NOT NULL column without default gets the type default.
  f.e.execute_sql("d", "CREATE TABLE dn (k INT, a INT NULL DEFAULT \"7\", b BIGINT NOT NULL, c STRING NOT NULL)" + props + ")");
  f.load("dn", "{\"k\":1,\"a\":1,\"b\":1,\"c\":\"x\"}\n", {{"format", "json"}});
  CHECK(S(f.load("dn", "{\"k\":1,\"__DORIS_DELETE_SIGN__\":1}\n{\"k\":1,\"a\":5}\n", flex), "Status") == "Success");
  CHECK(f.rows("dn") == std::vector<std::string>{R"({"k":1,"a":5,"b":0,"c":""})"});
  // So does a new key of a flexible load (only fixed partial updates check the left-out columns).
  CHECK(I(f.load("dn", "{\"k\":2,\"a\":6}\n", flex), "NumberLoadedRows") == 1);
  CHECK(f.rows("dn")[1] == R"({"k":2,"a":6,"b":0,"c":""})");
  // A new key without the sequence map column takes its DEFAULT as sequence value: 20 < 31 loses.
  f.e.execute_sql("d", "CREATE TABLE sq (k INT, v INT NULL, s BIGINT NULL DEFAULT \"31\")" + props +
                           ", \"function_column.sequence_col\" = \"s\")");
  f.load("sq", "{\"k\":6,\"v\":1}\n", flex);
  f.load("sq", "{\"k\":6,\"v\":2,\"s\":20}\n", flex);
  CHECK(f.rows("sq") == std::vector<std::string>{R"({"k":6,"v":1,"s":31})"});
  f.load("sq", "{\"k\":6,\"v\":3,\"s\":40}\n", flex);
  CHECK(f.rows("sq") == std::vector<std::string>{R"({"k":6,"v":3,"s":40})"});
  // Merge-on-write off, light schema change off: no flexible loads (planner order: skip bitmap first).
  f.e.execute_sql("d", "CREATE TABLE mor (k INT, v INT)" + props + ", \"enable_unique_key_merge_on_write\" = \"false\")");
  CHECK(S(f.load("mor", "{\"k\":1}\n", flex), "Message") ==
        "[ANALYSIS_ERROR]" + kFe + "Only unique key merge on write support partial update");
  f.e.execute_sql("d", "CREATE TABLE nlsc (k INT, v INT)" + props + ", \"light_schema_change\" = \"false\")");
  CHECK(S(f.load("nlsc", "{\"k\":1}\n", flex), "Message") ==
        "[ANALYSIS_ERROR]" + kFe +
            "Flexible partial update can only support table with light_schema_change enabled. But table nlsc's "
            "property light_schema_change is false");
  // 'delete' is refused by the BE before the FE's DELETE ON check.
  auto h = flex;
  h["delete"] = "v > 5";
  CHECK(S(f.load("sq", "{\"k\":1}\n", h), "Message") ==
        "[INVALID_ARGUMENT]Don't support flexible partial update when 'delete' is specified");
  // ENABLE FEATURE adds the skip bitmap column to a table created without it.
  f.e.execute_sql("d", "CREATE TABLE ef (k INT, v INT) UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1");
  CHECK(S(f.load("ef", "{\"k\":1}\n", flex), "Status") == "Fail");
  f.e.execute_sql("d", "ALTER TABLE ef ENABLE FEATURE \"UPDATE_FLEXIBLE_COLUMNS\"");
  CHECK(S(f.load("ef", "{\"k\":1}\n", flex), "Status") == "Success");
  CHECK_THROWS_WITH(f.e.execute_sql("d", "ALTER TABLE ef ENABLE FEATURE \"UPDATE_FLEXIBLE_COLUMNS\""),
                    Catch::Contains("table ef has enabled update flexible columns feature already."));
  CHECK_THROWS_WITH(f.e.execute_sql("d", "CREATE TABLE hb (k INT, __DORIS_SKIP_BITMAP_COL__ BIGINT,) UNIQUE KEY(k)"),
                    Catch::Contains("Disable to create table column with name start with __DORIS_: __DORIS_SKIP_BITMAP_COL__"));
}

TEST_CASE("partial update: staged partial rows survive a restart and apply on commit", "[emulator][partial][persistence]") {
  cdc2doris::test::TempDir dir("emu-wal-partial");
  Config c;
  c.data_dir = dir.path().string();
  std::string pre_id;
  {
    Fix f(c);
    f.e.execute_sql("d", kProfile);
    f.load("p", "{\"id\":1,\"name\":\"ann\",\"balance\":10,\"city\":\"rome\"}\n", {{"format", "json"}});
    f.load("p", "{\"id\":1,\"balance\":11}\n{\"id\":2,\"name\":\"bob\"}\n", partial_headers("id,name,balance"));
    auto h = partial_headers("id,city,__DORIS_DELETE_SIGN__");
    h["two_phase_commit"] = "true";
    // Pre-committed before the restart, committed after it: merged then.
    pre_id = std::to_string(I(f.load("p", "{\"id\":1,\"city\":\"milan\"}\n{\"id\":2,\"__DORIS_DELETE_SIGN__\":1}\n", h),
                              "TxnId"));
  }
  Fix g(c);
  CHECK(g.rows("p") == std::vector<std::string>{R"({"id":1,"name":null,"balance":"11.00","city":"rome"})",
                                                 R"({"id":2,"name":"bob","balance":null,"city":"nowhere"})"});
  CHECK(S(g.txn("commit", pre_id), "status") == "Success");
  CHECK(g.rows("p") == std::vector<std::string>{R"({"id":1,"name":null,"balance":"11.00","city":"milan"})"});
  Fix h(c);  // replayed again, now including the commit
  CHECK(h.rows("p") == std::vector<std::string>{R"({"id":1,"name":null,"balance":"11.00","city":"milan"})"});
}

TEST_CASE("sql: MODIFY COLUMN follows Doris' schema-change rules, a running schema change refuses ALTER",
          "[emulator][sql][ddl]") {
  Config c;
  c.alter_job_ms = 0;
  Fix f(c);
  f.e.execute_sql("d", "CREATE TABLE m (id BIGINT NOT NULL, i INT NULL, v VARCHAR(20) NULL, n INT NOT NULL DEFAULT \"0\", "
                       "dt DATE NULL) UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1");
  auto refused = [&](const std::string& stmt) {
    try {
      f.e.execute_sql("d", stmt);
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  // Widenings pass (fe ColumnType.schemaChangeMatrix); a type change is a
  // heavy job, finished by the next housekeeping round here.
  f.e.execute_sql("d", "ALTER TABLE m MODIFY COLUMN i BIGINT NULL");
  f.e.tick(now_ms());
  f.e.execute_sql("d", "ALTER TABLE m MODIFY COLUMN v VARCHAR(200) NULL");
  f.e.execute_sql("d", "ALTER TABLE m MODIFY COLUMN n INT NOT NULL DEFAULT \"0\"");
  // Column.checkSchemaChangeAllowed refusals, in Doris' words.
  CHECK_THAT(refused("ALTER TABLE m MODIFY COLUMN i INT NULL"), Catch::Contains("Can not change BIGINT to INT"));
  CHECK_THAT(refused("ALTER TABLE m MODIFY COLUMN v VARCHAR(10) NULL"), Catch::Contains("Cannot shorten string length"));
  CHECK_THAT(refused("ALTER TABLE m MODIFY COLUMN i VARCHAR(5) NULL"),
             Catch::Contains("Can not change from wider type bigint to narrower type varchar(5)"));
  CHECK_THAT(refused("ALTER TABLE m MODIFY COLUMN i BIGINT NOT NULL DEFAULT \"1\""),
             Catch::Contains("Can not change from nullable to non-nullable"));
  CHECK_THAT(refused("ALTER TABLE m MODIFY COLUMN n INT NOT NULL"), Catch::Contains("Can not change default value"));
  CHECK_THAT(refused("ALTER TABLE m MODIFY COLUMN dt BOOLEAN NULL"), Catch::Contains("Can not change DATEV2 to BOOLEAN"));
  CHECK_THAT(refused("ALTER TABLE m DROP COLUMN id"), Catch::Contains("Can not drop key column in Unique data model table"));
  f.e.add_fault(R"({"type":"schema_change_running","count":1})");
  CHECK_THAT(refused("ALTER TABLE m ADD COLUMN x INT NULL"),
             Catch::Contains("Table[m]'s state(SCHEMA_CHANGE) is not NORMAL. Do not allow doing ALTER ops"));
  f.e.execute_sql("d", "ALTER TABLE m ADD COLUMN x INT NULL");
}

namespace {
json::array desc_rows(Fix& f, const std::string& table) {
  auto d = json::parse(f.e.query("d", "DESC " + table, true)).as_object();
  return d.at("data").as_object().at("data").as_array();
}
json::array show_alter(Fix& f) {
  auto d = json::parse(f.e.query("d", "SHOW ALTER TABLE COLUMN FROM d WHERE TableName = 'h'", true)).as_object();
  return d.at("data").as_object().at("data").as_array();
}
}  // namespace

TEST_CASE("heavy schema change: an asynchronous job that waits for earlier txns, loads go on", "[emulator][sql][ddl]") {
  cdc2doris::test::TempDir dir("emu-alter-job");
  Config c;
  c.data_dir = dir.path().string();
  c.alter_job_ms = 1000;
  Fix f(c);
  f.e.execute_sql("d", "CREATE TABLE h (id BIGINT, i INT NULL) UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1");
  f.e.execute_sql("d", "CREATE TABLE nolight (id BIGINT, i INT NULL) UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1 "
                       "PROPERTIES (\"light_schema_change\" = \"false\")");
  // Light: an ADD of a value column on a light table, a longer VARCHAR.
  f.e.execute_sql("d", "ALTER TABLE h ADD COLUMN s VARCHAR(5) NULL");
  f.e.execute_sql("d", "ALTER TABLE h MODIFY COLUMN s VARCHAR(50) NULL");
  CHECK(desc_rows(f, "h").size() == 3);
  CHECK(show_alter(f).empty());
  f.load("h", "{\"id\":1,\"i\":1}\n", {{"format", "json"}});
  // A txn begun before the job (pre-committed) holds it in WAITING_TXN.
  const auto pre = std::to_string(
      I(f.load("h", "{\"id\":2,\"i\":2}\n", {{"format", "json"}, {"two_phase_commit", "true"}}), "TxnId"));
  f.e.execute_sql("d", "ALTER TABLE h MODIFY COLUMN i BIGINT NULL");  // answered at once
  CHECK(json::serialize(desc_rows(f, "h")[1]) == R"(["i","INT","YES","false",null,"REPLACE"])");
  auto jobs = show_alter(f);
  REQUIRE(jobs.size() == 1);
  CHECK(jobs[0].as_array()[1] == "h");
  CHECK(jobs[0].as_array()[3] == "N/A");
  CHECK(jobs[0].as_array()[8] == json::value(std::to_string(std::stoll(pre) + 1)));  // the watershed txn id
  CHECK(jobs[0].as_array()[9] == "WAITING_TXN");
  CHECK(jobs[0].as_array()[12] == "2592000");
  CHECK_THROWS_WITH(f.e.execute_sql("d", "ALTER TABLE h ADD COLUMN x INT NULL"),
                    Catch::Contains("Table[h]'s state(SCHEMA_CHANGE) is not NORMAL. Do not allow doing ALTER ops"));
  f.e.tick(now_ms() + 5000);
  CHECK(show_alter(f)[0].as_array()[9] == "WAITING_TXN");
  // Loads keep working during the job, in the old shape.
  CHECK(S(f.load("h", "{\"id\":3,\"i\":3}\n", {{"format", "json"}}), "Status") == "Success");
  CHECK(S(f.txn("commit", pre), "status") == "Success");
  f.e.tick(now_ms());
  CHECK(show_alter(f)[0].as_array()[9] == "RUNNING");
  CHECK(show_alter(f)[0].as_array()[11] == "0/1");
  CHECK(desc_rows(f, "h").size() == 3);
  f.e.tick(now_ms() + 1500);
  jobs = show_alter(f);
  CHECK(jobs[0].as_array()[9] == "FINISHED");
  CHECK(jobs[0].as_array()[3] != "N/A");
  CHECK(json::serialize(desc_rows(f, "h")[1]) == R"(["i","BIGINT","YES","false",null,"REPLACE"])");
  CHECK(f.rows("h").size() == 3);
  // Without light schema change an ADD is a job too; the state survives a restart.
  f.e.execute_sql("d", "ALTER TABLE nolight ADD COLUMN x INT NULL");
  CHECK(desc_rows(f, "nolight").size() == 2);
  Fix g(c);
  auto all = json::parse(g.e.query("d", "SHOW ALTER TABLE COLUMN", true)).as_object().at("data").as_object().at("data").as_array();
  REQUIRE(all.size() == 2);
  CHECK(all[0].as_array()[9] == "FINISHED");
  CHECK(all[1].as_array()[9] == "WAITING_TXN");
  CHECK(json::serialize(desc_rows(g, "h")[1]) == R"(["i","BIGINT","YES","false",null,"REPLACE"])");
  g.e.tick(now_ms());
  g.e.tick(now_ms() + 1500);
  CHECK(desc_rows(g, "nolight").size() == 3);
  g.e.execute_sql("d", "ALTER TABLE nolight DROP COLUMN x");  // a job again: the column stays until it ends
  CHECK(desc_rows(g, "nolight").size() == 3);
}

TEST_CASE("2PC commit with a slow publish: Success at once, COMMITTED, visible later", "[emulator][txn]") {
  // fe GlobalTransactionMgr.commitTransaction2PC does not wait for the publish.
  Fix f;
  f.e.execute_sql("d", "CREATE TABLE t (id INT) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1");
  const auto id = std::to_string(I(f.load("t", "1\n", {{"two_phase_commit", "true"}, {"label", "slow"}}), "TxnId"));
  f.e.add_fault(R"({"type":"publish_timeout","visible_after_ms":60000})");
  CHECK(S(f.txn("commit", id), "status") == "Success");
  CHECK(f.rows("t").empty());  // not visible yet
  CHECK(S(f.txn("commit", id), "msg") == kFe + "transaction [" + id + "] is already committed, not pre-committed.");
  CHECK(S(f.load("t", "1\n", {{"label", "slow"}}), "ExistingJobStatus") == "FINISHED");
  // A later commit of the table is published after it (partition versions in order).
  const auto id2 = std::to_string(I(f.load("t", "2\n", {{"two_phase_commit", "true"}}), "TxnId"));
  CHECK(S(f.txn("commit", id2), "status") == "Success");
  f.e.tick(now_ms());
  CHECK(f.rows("t").empty());
  f.e.tick(now_ms() + 61000);
  CHECK(f.rows("t") == std::vector<std::string>{R"({"id":1})", R"({"id":2})"});
  CHECK(S(f.txn("commit", id), "msg") == kFe + "transaction [" + id + "] is already visible, not pre-committed.");
}

TEST_CASE("be_restart: the BE's loads in PREPARE are aborted with Doris' reason, pre-committed ones stay", "[emulator][faults]") {
  Fix f;
  f.e.set_be_addrs({"127.0.0.1:1", "127.0.0.1:2"});
  f.e.execute_sql("d", "CREATE TABLE t (id INT) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1");
  const auto pre = std::to_string(I(f.load("t", "1\n", {{"two_phase_commit", "true"}}), "TxnId"));
  LoadRequest r;
  r.db = "d";
  r.table = "t";
  r.authorization = kRoot;
  r.content_length = 4;
  r.be = 0;
  Reply early;
  auto running = f.e.start_load(r, &early);
  REQUIRE(running);
  running->feed("2\n", 2);
  auto ans = json::parse(f.e.add_fault(R"({"type":"be_restart","be":0,"ms":500})")).as_object();
  CHECK(I(ans, "aborted") == 1);
  CHECK(f.e.be_offline(0));
  running->feed("3\n", 2);
  auto fin = json::parse(running->finish().body).as_object();
  CHECK(S(fin, "Status") == "Fail");
  CHECK_THAT(S(fin, "Message"), Catch::Contains("abort reason: coordinate BE restart"));
  CHECK(S(f.txn("commit", pre), "status") == "Success");
  f.e.tick(now_ms() + 1000);
  CHECK_FALSE(f.e.be_offline(0));
  CHECK(f.rows("t") == std::vector<std::string>{R"({"id":1})"});
}
