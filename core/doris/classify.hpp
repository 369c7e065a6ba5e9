#pragma once
// The one pure function that turns a Doris HTTP answer into a decision
// (issue 5 §5). No I/O, no clock, no globals: everything it needs comes in as
// arguments, so every row of the reference can be tested as a table.
//
// Doris answers almost everything with HTTP 200 and a JSON body (reference
// §0), in four shapes:
//   Stream Load (BE)      {"TxnId":..,"Status":"Success|Publish Timeout|Label Already Exists|Fail","Message":..}
//   2PC (BE)              {"status":"Success|<CODE_NAME>","msg":..}
//   RestBaseResult (FE)   {"status":"OK|FAILED","msg":..}
//   ResponseBody (FE)     {"msg":..,"code":0|1|401|403|404|500|503,"data":..,"count":0}
// Messages differ across 1.x/2.x/3.x ("[CODE]TStatus: errCode = 2,
// detailMessage = ..." vs bare "errCode = 2, detailMessage = ..."), so they are
// matched case-insensitively by substring, never by equality.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/doris/client.hpp"

namespace cdc2doris::doris {

enum class Operation {
  StreamLoad,  // PUT _stream_load with a body
  Probe,       // PUT _stream_load, empty body, to learn a label's state (§3.4)
  Commit,      // _stream_load_2pc txn_operation: commit
  Abort,       // _stream_load_2pc txn_operation: abort
  Metadata,    // FE ResponseBody endpoints: _schema, query, backends
};
const char* to_string(Operation op);

struct ClassifyContext {
  Operation op = Operation::StreamLoad;
  std::string db;
  std::string table;  // empty for 2PC/metadata on a db
  std::string label;
  std::optional<int64_t> txn_id;
  std::string endpoint;  // host:port that answered
  bool by_label = false; // 2PC addressed by label instead of txn id
  std::string user;      // the Doris user, named in the GRANT a missing privilege needs
};

enum class Verdict {
  Success,            // load PRECOMMITTED (or visible without 2PC); 2PC done; metadata code 0
  PublishTimeout,     // load committed, visible later: success
  AlreadyDone,        // 2PC idempotent replay (commit: committed/visible; abort: aborted)
  NotFoundOrAborted,  // commit: unknown txn (expired, forgotten: its outcome unknown); abort: nothing to abort
  Aborted,            // commit: the FE still knows the txn and says it is ABORTED (never visible)
  LabelExists,        // load/probe: label used; `existing` says how far it got
  Redirect,           // 3xx: the transport follows Location
  Failed,             // `error` says what and what to do
};
const char* to_string(Verdict v);

struct Classification {
  Verdict verdict = Verdict::Failed;
  std::optional<DorisError> error;  // set for Failed and LabelExists
  std::optional<LabelState> existing;
  LoadResult load;                  // fields parsed from a Stream Load body
  std::string doris_status;
  std::string doris_message;
};

// A refusal for a missing privilege (Doris' "Access denied; you need (at
// least one of) the ... privilege(s)", "<CMD> command denied to user ...")
// is an Auth error, fatal, whose message names the privilege, the user, the
// database/table and the GRANT statement that fixes it.
Classification classify(int http_status, std::string_view body, const ClassifyContext& ctx);

// The GRANT statement a refusal needs ("" when `doris_message` is no
// privilege refusal). Shared with `cdc2doris check --connect`.
std::string privilege_fix(std::string_view doris_message, const std::string& db, const std::string& table,
                          const std::string& user);
// "GRANT <priv> ON <db|*>.<table|*> TO '<user>'@'%'".
std::string grant_statement(const std::string& priv, const std::string& db, const std::string& table,
                            const std::string& user);

}  // namespace cdc2doris::doris
