// Table-driven tests of the pure classifier against every status/message
// variant of ../shared/reference/doris-stream-load.md (1.x, 2.x, 3.x wording).
#include <catch2/catch.hpp>

#include "core/doris/classify.hpp"

using namespace cdc2doris;
using namespace cdc2doris::doris;

namespace {

// Doris' own shape: rapidjson PrettyWriter, trailing newline (reference §0).
std::string load_body(const std::string& status, const std::string& message, const std::string& extra = "",
                      long txn = 1001) {
  return "{\n    \"TxnId\": " + std::to_string(txn) +
         ",\n    \"Label\": \"l1\",\n    \"Comment\": \"\",\n    \"TwoPhaseCommit\": \"true\",\n    \"Status\": \"" +
         status + "\",\n" + extra + "    \"Message\": \"" + message +
         "\",\n    \"NumberTotalRows\": 3,\n    \"NumberLoadedRows\": 2,\n    \"NumberFilteredRows\": 1,\n"
         "    \"NumberUnselectedRows\": 0,\n    \"LoadBytes\": 120,\n    \"LoadTimeMs\": 7,\n"
         "    \"BeginTxnTimeMs\": 1,\n    \"StreamLoadPutTimeMs\": 1,\n    \"ReadDataTimeMs\": 0,\n"
         "    \"WriteDataTimeMs\": 3,\n    \"ReceiveDataTimeMs\": 2,\n    \"CommitAndPublishTimeMs\": 0\n}\n";
}
std::string exists_body(const std::string& job, const std::string& message) {
  return load_body("Label Already Exists", message, "    \"ExistingJobStatus\": \"" + job + "\",\n", -1);
}
std::string twopc(const std::string& status, const std::string& msg) {
  return "{\n    \"status\": \"" + status + "\",\n    \"msg\": \"" + msg + "\"\n}\n";
}
const std::string kT = "TStatus: errCode = 2, detailMessage = ";

struct Row {
  const char* name;
  Operation op;
  int http;
  std::string body;
  Verdict verdict;
  std::optional<ErrorKind> kind = std::nullopt;
  std::optional<Disposition> disposition = std::nullopt;
  std::optional<LabelState::State> existing = std::nullopt;
  std::optional<int64_t> txn = std::nullopt;  // txn id expected in the error context / existing label
};

const Operation L = Operation::StreamLoad, C = Operation::Commit, A = Operation::Abort, M = Operation::Metadata,
                P = Operation::Probe;
const auto R = Disposition::Retry, F = Disposition::Fail, X = Disposition::Fatal;

std::vector<Row> rows() {
  return {
      // ---- stream load: success family (§3.2)
      {"success", L, 200, load_body("Success", "OK"), Verdict::Success},
      {"success with filtered rows", L, 200,
       load_body("Success", "OK", "    \"ErrorURL\": \"http://be:8040/api/_load_error_log?file=x\",\n"),
       Verdict::Success},
      {"publish timeout 2.x", L, 200,
       load_body("Publish Timeout", "[PUBLISH_TIMEOUT]TStatus: transaction commit successfully, BUT data will be "
                                    "visible later"),
       Verdict::PublishTimeout},
      {"publish timeout other wording", L, 200, load_body("Publish Timeout", "publish timeout"),
       Verdict::PublishTimeout},
      {"probe success", P, 200, load_body("Success", "OK"), Verdict::Success},
      // ---- label already exists (§3.3)
      {"label exists RUNNING", L, 200,
       exists_body("RUNNING", "[LABEL_ALREADY_EXISTS]" + kT + "Label [l1] has already been used, relate to txn [12345]"),
       Verdict::LabelExists, ErrorKind::LabelExists, R, LabelState::Running, 12345},
      {"label exists PRECOMMITTED", P, 200,
       exists_body("PRECOMMITTED",
                   "[LABEL_ALREADY_EXISTS]" + kT + "Label [l1] has already been used, relate to txn [12346]"),
       Verdict::LabelExists, ErrorKind::LabelExists, R, LabelState::Precommitted, 12346},
      {"label exists FINISHED", L, 200,
       exists_body("FINISHED", "[LABEL_ALREADY_EXISTS]" + kT + "Label [l1] has already been used, relate to txn [9]"),
       Verdict::LabelExists, ErrorKind::LabelExists, F, LabelState::Finished, 9},
      {"label exists empty job status reads as not finished", L, 200,
       exists_body("", "[LABEL_ALREADY_EXISTS]" + kT + "Label [l1] has already been used, relate to txn [10]"),
       Verdict::LabelExists, ErrorKind::LabelExists, R, LabelState::Running, 10},
      {"label exists 1.x wording", L, 200,
       exists_body("RUNNING", "errCode = 2, detailMessage = Label [l1] has already been used, relate to txn [77]"),
       Verdict::LabelExists, ErrorKind::LabelExists, R, LabelState::Running, 77},
      {"label exists cloud suffix", L, 200,
       exists_body("FINISHED", "[LABEL_ALREADY_EXISTS]" + kT +
                                   "Label [l1] has already been used, relate to txn [5], status=[TXN_STATUS_VISIBLE]"),
       Verdict::LabelExists, ErrorKind::LabelExists, F, LabelState::Finished, 5},
      {"label exists bare (no txn)", L, 200, exists_body("RUNNING", "Label [l1] has already been used."),
       Verdict::LabelExists, ErrorKind::LabelExists, R, LabelState::Running},
      // ---- data quality (§8)
      {"too many filtered rows", L, 200,
       load_body("Fail", "[DATA_QUALITY_ERROR]too many filtered rows",
                 "    \"ErrorURL\": \"http://be:8040/api/_load_error_log?file=__shard_1/error_log\",\n"),
       Verdict::Failed, ErrorKind::DataQuality, F},
      {"unqualified data", L, 200, load_body("Fail", "[DATA_QUALITY_ERROR]Encountered unqualified data, stop processing"),
       Verdict::Failed, ErrorKind::DataQuality, F},
      {"cancelled wrapping data quality", L, 200,
       load_body("Fail", "[CANCELLED]cancelled: [DATA_QUALITY_ERROR]Encountered unqualified data, stop processing. "
                         "cur path: ."),
       Verdict::Failed, ErrorKind::DataQuality, F},
      {"partial update new key", L, 200,
       load_body("Fail", "[E-7003]Can't append new rows in partial update when partial_update_new_key_behavior is "
                         "ERROR. Row with key=[1] is not in table."),
       Verdict::Failed, ErrorKind::DataQuality, F},
      // ---- retryable
      {"running txn limit", L, 200,
       load_body("Fail", "[ANALYSIS_ERROR]" + kT + "current running txns on db 10001 is 1000, larger than limit 1000",
                 "", -1),
       Verdict::Failed, ErrorKind::TxnLimit, R},
      {"too many versions newest", L, 200,
       load_body("Fail", "[E-235]failed to init rowset builder. version count: 2001, exceed limit: 2000, tablet: 1. "
                         "Please reduce the frequency of loading data or adjust the max_tablet_version_num or "
                         "time_series_max_tablet_version_num in be.conf to a larger value."),
       Verdict::Failed, ErrorKind::TooManyVersions, R},
      {"too many versions code name", L, 200, load_body("Fail", "[TOO_MANY_VERSION]version count: 501"),
       Verdict::Failed, ErrorKind::TooManyVersions, R},
      {"too many versions old", L, 200,
       load_body("Fail", "tablet writer write failed, tablet_id=1, txn_id=2, err=-235"), Verdict::Failed,
       ErrorKind::TooManyVersions, R},
      {"too many segments", L, 200, load_body("Fail", "[E-238]too many segments in rowset"), Verdict::Failed,
       ErrorKind::TooManyVersions, R},
      {"fe no backend old", L, 200, twopc("FAILED", "No backend load available., policy: {...}"), Verdict::Failed,
       ErrorKind::NoBackend, R},
      {"fe no backend new", L, 200,
       twopc("FAILED", "No backend available for load, please check the status of your backends. policy: {}"),
       Verdict::Failed, ErrorKind::NoBackend, R},
      {"body length mismatch", L, 200, load_body("Fail", "[INTERNAL_ERROR]receive body don't equal with body bytes"),
       Verdict::Failed, ErrorKind::ServerError, R},
      {"unknown internal error", L, 200, load_body("Fail", "[INTERNAL_ERROR]something new happened\\n\\t0# doris::x"),
       Verdict::Failed, ErrorKind::ServerError, R},
      {"mem limit", L, 200, load_body("Fail", "[MEM_LIMIT_EXCEEDED]memory limit exceeded"), Verdict::Failed,
       ErrorKind::ServerError, R},
      {"http 500", L, 500, "boom", Verdict::Failed, ErrorKind::ServerError, R},
      {"http 503", L, 503, "", Verdict::Failed, ErrorKind::ServerError, R},
      {"http 408", C, 408, "", Verdict::Failed, ErrorKind::ServerError, R},
      {"unparsable 200", L, 200, "<html>oops</html>", Verdict::Failed, ErrorKind::ServerError, R},
      {"empty 200", C, 200, "", Verdict::Failed, ErrorKind::ServerError, R},
      {"2pc shape on a load", L, 200, "{\"foo\": 1}", Verdict::Failed, ErrorKind::ServerError, R},
      // ---- fatal: auth
      {"fe unauthorized", L, 200, R"({"msg":"Unauthorized","code":401,"data":"Need auth information.","count":0})",
       Verdict::Failed, ErrorKind::Auth, X},
      {"old fe http 401", L, 401, "", Verdict::Failed, ErrorKind::Auth, X},
      {"be wrong password", L, 200,
       load_body("Fail", "[ANALYSIS_ERROR]" + kT + "Access denied for user 'root' (using password: YES)", "", -1),
       Verdict::Failed, ErrorKind::Auth, X},
      {"be no basic auth newest", L, 200, load_body("Fail", "[NOT_AUTHORIZED]no valid Basic authorization", "", -1),
       Verdict::Failed, ErrorKind::Auth, X},
      {"be no basic auth 2.x", L, 200, load_body("Fail", "[INTERNAL_ERROR]no valid Basic authorization", "", -1),
       Verdict::Failed, ErrorKind::Auth, X},
      {"fe load privilege", L, 200,
       twopc("FAILED", "Access denied; you need (at least one of) the LOAD privilege(s) for this operation"),
       Verdict::Failed, ErrorKind::Auth, X},
      // ---- fatal: unknown db/table
      {"unknown database 2.1+", L, 200,
       load_body("Fail", "[NOT_FOUND]TStatus: errCode = 7, detailMessage = unknown database, database=nodb", "", -1),
       Verdict::Failed, ErrorKind::UnknownTable, X},
      {"unknown table 2.1+", L, 200,
       load_body("Fail", "[NOT_FOUND]TStatus: errCode = 7, detailMessage = table not found, tableName=t", "", -1),
       Verdict::Failed, ErrorKind::UnknownTable, X},
      {"unknown table older", L, 200,
       load_body("Fail", "[ANALYSIS_ERROR]" + kT + "table not found, tableName=t", "", -1), Verdict::Failed,
       ErrorKind::UnknownTable, X},
      {"unknown table 1.x", L, 200, load_body("Fail", "errCode = 7, detailMessage = unknown table, tableName=t", "", -1),
       Verdict::Failed, ErrorKind::UnknownTable, X},
      {"group commit table missing", L, 200, twopc("FAILED", "OlapTable not found."), Verdict::Failed,
       ErrorKind::UnknownTable, X},
      // ---- fatal: bad request / header
      {"label format", L, 200,
       load_body("Fail", "[ANALYSIS_ERROR]" + kT + "Label format error. regex: ^[-_A-Za-z0-9:]{1,128}$, label: a.b", "",
                 -1),
       Verdict::Failed, ErrorKind::BadRequest, X},
      {"no 100-continue", L, 200, twopc("FAILED", "There is no 100-continue header"), Verdict::Failed,
       ErrorKind::BadRequest, X},
      {"partial row for a table without merge-on-write", L, 200,
       load_body("Fail", "[ANALYSIS_ERROR]" + kT + "Only unique key merge on write support partial update"),
       Verdict::Failed, ErrorKind::BadRequest, X},
      {"no database selected", L, 200, twopc("FAILED", "No database selected."), Verdict::Failed, ErrorKind::BadRequest,
       X},
      {"unknown format", L, 200, load_body("Fail", "[INTERNAL_ERROR]unknown data format, format=xml"), Verdict::Failed,
       ErrorKind::BadRequest, X},
      {"json compression old BE", L, 200, load_body("Fail", "compress data of JSON format is not supported."),
       Verdict::Failed, ErrorKind::BadRequest, X},
      {"2pc disabled 1.0", L, 200, load_body("Fail", "Two phase commit (2PC) for stream load was disabled"),
       Verdict::Failed, ErrorKind::BadRequest, X},
      {"no framing", L, 200,
       load_body("Fail", "[INVALID_ARGUMENT]content_length is empty and transfer-encoding!=chunked, please set "
                         "content_length or transfer-encoding=chunked"),
       Verdict::Failed, ErrorKind::BadRequest, X},
      {"both framings", L, 200,
       load_body("Fail", "[INVALID_ARGUMENT]please do not set both content_length and transfer-encoding"),
       Verdict::Failed, ErrorKind::BadRequest, X},
      {"sequence column missing", L, 200,
       load_body("Fail", "[ANALYSIS_ERROR]" + kT + "Table t has sequence column, need to specify the sequence column"),
       Verdict::Failed, ErrorKind::BadRequest, X},
      {"bad merge type", L, 200, load_body("Fail", "[ANALYSIS_ERROR]Invalid merge type FOO"), Verdict::Failed,
       ErrorKind::BadRequest, X},
      {"bad partial mode", L, 200,
       load_body("Fail", "Invalid unique_key_partial_mode X, must be one of 'UPSERT', 'UPDATE_FIXED_COLUMNS' or "
                         "'UPDATE_FLEXIBLE_COLUMNS'"),
       Verdict::Failed, ErrorKind::BadRequest, X},
      {"bad timeout header", L, 200, load_body("Fail", "[INVALID_ARGUMENT]Invalid timeout format"), Verdict::Failed,
       ErrorKind::BadRequest, X},
      {"group commit value", L, 200,
       twopc("FAILED", "Header `group_commit` can only be `sync_mode`, `async_mode` or `off_mode`."), Verdict::Failed,
       ErrorKind::BadRequest, X},
      {"be 404 path", L, 404, "Not Found", Verdict::Failed, ErrorKind::BadRequest, X},
      {"body too large", L, 200, load_body("Fail", "[INVALID_ARGUMENT]body size 20000 exceeds the limit 10240"),
       Verdict::Failed, ErrorKind::BodyTooLarge, F},
      {"json body too large", L, 200, load_body("Fail", "json body size 200 exceeds the limit 100"), Verdict::Failed,
       ErrorKind::BodyTooLarge, F},
      {"body too large old", L, 200, load_body("Fail", "body exceed max size: 10, limit: 5"), Verdict::Failed,
       ErrorKind::BodyTooLarge, F},
      {"redirect", L, 307, "", Verdict::Redirect},

      // ---- 2PC commit (§4)
      {"commit ok", C, 200, twopc("Success", "transaction [18036] commit successfully."), Verdict::Success},
      {"commit by label ok", C, 200, twopc("Success", "label [l1] commit successfully."), Verdict::Success},
      {"commit already committed", C, 200, twopc("ANALYSIS_ERROR", kT + "transaction [1] is already committed, not pre-committed."),
       Verdict::AlreadyDone},
      {"commit already visible", C, 200, twopc("ANALYSIS_ERROR", kT + "transaction [1] is already visible, not pre-committed."),
       Verdict::AlreadyDone},
      {"commit already visible 1.x", C, 200,
       twopc("ANALYSIS_ERROR", "errCode = 2, detailMessage = transaction [5] is already visible, not pre-committed."),
       Verdict::AlreadyDone},
      {"commit aborted by timeout", C, 200,
       twopc("ANALYSIS_ERROR", kT + "transaction [2] is already aborted. abort reason: timeout by txn manager"),
       Verdict::Aborted},
      {"commit aborted by user", C, 200, twopc("ANALYSIS_ERROR", kT + "transaction [2] is already aborted. abort reason: User Abort"),
       Verdict::Aborted},
      {"commit unknown txn", C, 200, twopc("ANALYSIS_ERROR", kT + "transaction [3] not found"),
       Verdict::NotFoundOrAborted},
      {"commit unknown label", C, 200, twopc("ANALYSIS_ERROR", kT + "transaction not found, label=l9"),
       Verdict::NotFoundOrAborted},
      {"commit label not running", C, 200, twopc("ANALYSIS_ERROR", kT + "running transaction not found, label=l9"),
       Verdict::Failed, ErrorKind::LabelNotRunning, F},
      {"commit still prepare", C, 200, twopc("ANALYSIS_ERROR", kT + "transaction [4] is prepare, not pre-committed."),
       Verdict::Failed, ErrorKind::TxnNotPrecommitted, R, std::nullopt, 4},
      {"commit unknown db", C, 200, twopc("ANALYSIS_ERROR", kT + "unknown database, database=nodb"), Verdict::Failed,
       ErrorKind::UnknownTable, X},
      {"commit table dropped", C, 200, twopc("ANALYSIS_ERROR", kT + "table not found, tableName=t"), Verdict::Failed,
       ErrorKind::UnknownTable, X},
      {"commit bad txn id", C, 200, twopc("INTERNAL_ERROR", "convert txn_id [abc] failed, reason=stoll"),
       Verdict::Failed, ErrorKind::BadRequest, X},
      {"commit bad op", C, 200, twopc("INTERNAL_ERROR", "transaction operation should be 'commit' or 'abort'"),
       Verdict::Failed, ErrorKind::BadRequest, X},
      {"commit fe no txn", C, 200, twopc("FAILED", "No transaction id or label selected."), Verdict::Failed,
       ErrorKind::BadRequest, X},
      {"commit fe no txn old", C, 200, twopc("FAILED", "No transaction id selected."), Verdict::Failed,
       ErrorKind::BadRequest, X},
      {"commit fe no op", C, 200, twopc("FAILED", "No transaction operation('commit' or 'abort') selected."),
       Verdict::Failed, ErrorKind::BadRequest, X},
      {"commit access denied", C, 200,
       twopc("ANALYSIS_ERROR", kT + "Access denied for user 'u' (using password: YES)"), Verdict::Failed,
       ErrorKind::Auth, X},
      {"commit fe unauthorized", C, 200, R"({"msg":"Unauthorized","code":401,"data":"Access denied","count":0})",
       Verdict::Failed, ErrorKind::Auth, X},
      {"commit unknown failure", C, 200, twopc("INTERNAL_ERROR", "rpc timeout"), Verdict::Failed,
       ErrorKind::ServerError, R},
      // ---- 2PC abort
      {"abort ok", A, 200, twopc("Success", "transaction [7] abort successfully."), Verdict::Success},
      {"abort by label ok", A, 200, twopc("Success", "label [l1] abort successfully."), Verdict::Success},
      {"abort already aborted", A, 200,
       twopc("ANALYSIS_ERROR", kT + "transaction [7] is already aborted, abort reason: User Abort"),
       Verdict::AlreadyDone},
      {"abort unknown txn", A, 200, twopc("ANALYSIS_ERROR", kT + "transaction [7] not found"),
       Verdict::NotFoundOrAborted},
      {"abort unknown label", A, 200, twopc("ANALYSIS_ERROR", kT + "transaction not found, label=l1"),
       Verdict::NotFoundOrAborted},
      {"abort label not running", A, 200, twopc("ANALYSIS_ERROR", kT + "running transaction not found, label=l1"),
       Verdict::NotFoundOrAborted},
      {"abort committed", A, 200, twopc("ANALYSIS_ERROR", kT + "transaction [7] is already COMMITTED, could not abort."),
       Verdict::Failed, ErrorKind::AlreadyCommitted, F, std::nullopt, 7},
      {"abort visible", A, 200, twopc("ANALYSIS_ERROR", kT + "transaction [7] is already VISIBLE, could not abort."),
       Verdict::Failed, ErrorKind::AlreadyCommitted, F},
      {"abort unknown db", A, 200, twopc("ANALYSIS_ERROR", kT + "unknown database, database=x"), Verdict::Failed,
       ErrorKind::UnknownTable, X},
      // ---- FE metadata (ResponseBody)
      {"metadata ok", M, 200, R"({"msg":"success","code":0,"data":{"backends":[]},"count":0})", Verdict::Success},
      {"metadata streaming ok", M, 200, R"({"data":{"type":"result_set","meta":[],"data":[],"time":1},"msg":"success","code":0})",
       Verdict::Success},
      {"metadata missing table", M, 200,
       R"({"msg":"Error","code":1,"data":"errCode = 2, detailMessage = Unknown table 'x'","count":0})",
       Verdict::Failed, ErrorKind::UnknownTable, X},
      {"metadata sql error", M, 200,
       R"({"msg":"Error","code":1,"data":"Failed to execute sql: syntax error","count":0})", Verdict::Failed,
       ErrorKind::ServerError, R},
      {"metadata missing stmt", M, 200,
       R"({"msg":"Bad Request","code":403,"data":"Missing statement request body","count":0})", Verdict::Failed,
       ErrorKind::BadRequest, X},
      {"metadata not ready", M, 200, R"({"msg":"Server is not ready","code":503,"data":null,"count":0})",
       Verdict::Failed, ErrorKind::ServerError, R},
      {"metadata unauthorized", M, 200, R"({"msg":"Unauthorized","code":401,"data":"x","count":0})", Verdict::Failed,
       ErrorKind::Auth, X},
  };
}

}  // namespace

TEST_CASE("classify: every reference variant", "[doris][classify]") {
  for (const Row& row : rows()) {
    DYNAMIC_SECTION(row.name) {
      ClassifyContext ctx;
      ctx.op = row.op;
      ctx.db = "db1";
      ctx.table = (row.op == C || row.op == A) ? "" : "t1";
      ctx.label = "l1";
      ctx.endpoint = "127.0.0.1:8040";
      auto c = classify(row.http, row.body, ctx);
      CHECK(to_string(c.verdict) == std::string(to_string(row.verdict)));
      if (row.kind) {
        REQUIRE(c.error);
        CHECK(to_string(c.error->kind()) == std::string(to_string(*row.kind)));
        CHECK(to_string(c.error->disposition()) == std::string(to_string(*row.disposition)));
        // Every error is located.
        CHECK(c.error->context().table == (ctx.table.empty() ? "db1" : "db1.t1"));
        CHECK(c.error->context().label == "l1");
        CHECK(c.error->context().endpoint == "127.0.0.1:8040");
        CHECK(c.error->context().http_status == row.http);
      } else if (row.verdict != Verdict::LabelExists) {
        CHECK_FALSE(c.error);
      }
      if (row.existing) {
        REQUIRE(c.existing);
        CHECK(to_string(c.existing->state) == std::string(to_string(*row.existing)));
        REQUIRE(c.error);
        REQUIRE(c.error->existing_label);
        CHECK(c.error->existing_label->state == *row.existing);
      }
      if (row.txn) {
        REQUIRE(c.error);
        CHECK(c.error->context().txn_id == row.txn);
        if (c.existing) CHECK(c.existing->txn_id == row.txn);
      }
    }
  }
}

TEST_CASE("classify: load result fields are parsed", "[doris][classify]") {
  ClassifyContext ctx;
  ctx.op = Operation::StreamLoad;
  ctx.db = "db1";
  ctx.table = "t1";
  ctx.label = "l1";
  auto c = classify(200,
                    load_body("Success", "OK", "    \"ErrorURL\": \"http://be:8040/api/_load_error_log?file=x\",\n",
                              4242),
                    ctx);
  REQUIRE(c.verdict == Verdict::Success);
  CHECK(c.load.txn_id == 4242);
  CHECK(c.load.label == "l1");
  CHECK(c.load.total_rows == 3);
  CHECK(c.load.loaded_rows == 2);
  CHECK(c.load.filtered_rows == 1);
  CHECK(c.load.load_bytes == 120);
  CHECK(c.load.load_time_ms == 7);
  CHECK(c.load.error_url == "http://be:8040/api/_load_error_log?file=x");
  CHECK(c.doris_status == "Success");
}

TEST_CASE("classify: errors carry Doris status, message and txn id", "[doris][classify]") {
  ClassifyContext ctx;
  ctx.op = Operation::StreamLoad;
  ctx.db = "db1";
  ctx.table = "t1";
  ctx.label = "l1";
  auto c = classify(200,
                    load_body("Fail", "[DATA_QUALITY_ERROR]too many filtered rows",
                              "    \"ErrorURL\": \"http://be:8040/api/_load_error_log?file=y\",\n", 55),
                    ctx);
  REQUIRE(c.error);
  CHECK(c.error->context().txn_id == 55);
  CHECK(c.error->context().doris_status == "Fail");
  CHECK(c.error->context().doris_message == "[DATA_QUALITY_ERROR]too many filtered rows");
  CHECK(c.error->error_url == "http://be:8040/api/_load_error_log?file=y");
  CHECK(c.error->what().find("txn_id=55") != std::string::npos);
  CHECK(c.load.filtered_rows == 1);
}

TEST_CASE("classify: 2PC errors parse the txn id from the message", "[doris][classify]") {
  ClassifyContext ctx;
  ctx.op = Operation::Commit;
  ctx.db = "db1";
  ctx.by_label = true;
  auto c = classify(200, twopc("ANALYSIS_ERROR", kT + "transaction [31] is prepare, not pre-committed."), ctx);
  REQUIRE(c.error);
  CHECK(c.error->context().txn_id == 31);
  CHECK(c.error->context().doris_status == "ANALYSIS_ERROR");
}

TEST_CASE("classify: a missing privilege is fatal and names the GRANT that fixes it", "[doris][classify]") {
  ClassifyContext c;
  c.db = "shop";
  c.table = "orders";
  c.label = "l1";
  c.user = "loader";
  struct Case {
    Operation op;
    std::string body;
    std::string fix;
  };
  const std::vector<Case> cases{
      // FE in front of a load: RestBaseResult from BaseController.checkTblAuth.
      {Operation::StreamLoad,
       R"({"status":"FAILED","msg":"Access denied; you need (at least one of) the Admin_priv,Load_priv privilege(s) for this operation"})",
       "GRANT LOAD_PRIV ON shop.orders TO 'loader'@'%'"},
      // BE load begin: FrontendServiceImpl.checkPasswordAndPrivs.
      {Operation::StreamLoad,
       load_body("Fail", "[ANALYSIS_ERROR]" + kT +
                             "Access denied; you need (at least one of) the (LOAD) privilege(s) for this operation"),
       "GRANT LOAD_PRIV ON shop.orders TO 'loader'@'%'"},
      // 2PC commit on the BE.
      {Operation::Commit,
       twopc("ANALYSIS_ERROR", kT + "Access denied; you need (at least one of) the (LOAD) privilege(s) for this operation"),
       "GRANT LOAD_PRIV ON shop.orders TO 'loader'@'%'"},
      // DDL over the HTTP SQL API: ERR_TABLEACCESS_DENIED_ERROR names the table.
      {Operation::Metadata,
       R"({"msg":"Error","code":1,"data":"Failed to execute sql: errCode = 2, detailMessage = ALTER TABLE command denied to user 'loader'@'10.0.0.1' for table 'shop: items'","count":0})",
       "GRANT ALTER_PRIV ON shop.items TO 'loader'@'%'"},
      {Operation::Metadata,
       R"({"msg":"Error","code":1,"data":"Failed to execute sql: errCode = 2, detailMessage = CREATE command denied to user 'loader'@'10.0.0.1' for table 'shop: new_t'","count":0})",
       "GRANT CREATE_PRIV ON shop.new_t TO 'loader'@'%'"},
  };
  for (const auto& k : cases) {
    c.op = k.op;
    INFO(k.body);
    auto r = classify(200, k.body, c);
    REQUIRE(r.verdict == Verdict::Failed);
    REQUIRE(r.error);
    CHECK(r.error->kind() == ErrorKind::Auth);
    CHECK(r.error->disposition() == Disposition::Fatal);
    CHECK_THAT(r.error->what(), Catch::Contains("user 'loader' lacks a privilege; fix: " + k.fix));
  }
  // A wrong password stays an authentication error without a GRANT.
  c.op = Operation::StreamLoad;
  auto pw = classify(200, load_body("Fail", "[ANALYSIS_ERROR]" + kT + "Access denied for user 'loader' (using password: YES)"), c);
  REQUIRE(pw.error);
  CHECK(pw.error->kind() == ErrorKind::Auth);
  CHECK_THAT(pw.error->what(), !Catch::Contains("GRANT"));
}
