#include "core/doris/classify.hpp"

#include <array>
#include <boost/json.hpp>

#include "core/doris/label.hpp"

namespace cdc2doris::doris {

namespace json = boost::json;

const char* to_string(Operation op) {
  switch (op) {
    case Operation::StreamLoad: return "stream load";
    case Operation::Probe: return "label probe";
    case Operation::Commit: return "commit";
    case Operation::Abort: return "abort";
    case Operation::Metadata: return "metadata request";
  }
  return "?";
}

const char* to_string(Verdict v) {
  switch (v) {
    case Verdict::Success: return "success";
    case Verdict::PublishTimeout: return "publish-timeout";
    case Verdict::AlreadyDone: return "already-done";
    case Verdict::NotFoundOrAborted: return "not-found-or-aborted";
    case Verdict::Aborted: return "aborted";
    case Verdict::LabelExists: return "label-exists";
    case Verdict::Redirect: return "redirect";
    case Verdict::Failed: return "failed";
  }
  return "?";
}

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

template <size_t N>
bool has_any(const std::string& lowered, const std::array<std::string_view, N>& needles) {
  for (auto n : needles)
    if (lowered.find(n) != std::string::npos) return true;
  return false;
}

struct Rule {
  ErrorKind kind;
  Disposition disposition;
  const char* what;
};

// Needles are lower case; the message is lowered once. Order matters: a
// data-quality failure wrapped in [CANCELLED] must not read as a generic
// cancellation, "transaction [1] not found" must not read as a missing table.
constexpr std::array<std::string_view, 4> kDataQuality{
    "data_quality_error", "too many filtered rows", "encountered unqualified data",
    "can't append new rows in partial update"};
constexpr std::array<std::string_view, 7> kAuth{
    "access denied", "not_authorized", "no valid basic authorization", "unauthorized",
    "need auth information", "authentication failed", "password is wrong"};
constexpr std::array<std::string_view, 6> kUnknownTable{
    "unknown database", "table not found", "unknown table", "database not found", "olaptable not found",
    "[not_found]"};
constexpr std::array<std::string_view, 1> kTxnLimit{"current running txns on db"};
constexpr std::array<std::string_view, 8> kTooManyVersions{
    "too_many_version", "e-235", "err=-235", "exceed limit: ", "version count:", "e-238", "err=-238",
    "too many segments"};
constexpr std::array<std::string_view, 3> kNoBackend{
    "no backend load available", "no backend available", "no available backend"};
constexpr std::array<std::string_view, 3> kTooLarge{"exceeds the limit", "body exceed max size", "exceed max size"};
constexpr std::array<std::string_view, 2> kTransient{"receive body don't equal", "receive body do not equal"};
constexpr std::array<std::string_view, 31> kBadRequest{
    "label format error", "unknown data format", "invalid strict mode", "invalid merge type",
    "invalid unique_key_partial_mode", "compress data of json format is not supported",
    "two phase commit (2pc) for stream load was disabled", "stream load 2pc is unsupported",
    "content_length is empty", "please do not set both", "there is no 100-continue header",
    "need to specify the sequence column", "excepted delete on clause", "not support delete on clause",
    "can not specify both partitions", "must be single-char", "group_commit can only be",
    "label and group_commit", "header `group_commit`", "no database selected", "no table selected",
    "invalid_argument", "no transaction id", "no transaction operation", "convert txn_id",
    "transaction operation should be", "missing statement", "unsupported statement type",
    "bad request", "invalid label",
    // fe NereidsStreamLoadPlanner: a partial row for a table that cannot take one.
    "only unique key merge on write support partial update"};

std::optional<Rule> message_rule(const std::string& m) {
  if (has_any(m, kDataQuality)) return Rule{ErrorKind::DataQuality, Disposition::Fail, "data quality"};
  if (has_any(m, kAuth)) return Rule{ErrorKind::Auth, Disposition::Fatal, "authentication/authorization failed"};
  if (has_any(m, kTxnLimit)) return Rule{ErrorKind::TxnLimit, Disposition::Retry, "running transaction limit reached"};
  if (has_any(m, kTooManyVersions))
    return Rule{ErrorKind::TooManyVersions, Disposition::Retry, "too many tablet versions"};
  if (has_any(m, kNoBackend)) return Rule{ErrorKind::NoBackend, Disposition::Retry, "no backend available"};
  if (has_any(m, kTransient)) return Rule{ErrorKind::ServerError, Disposition::Retry, "body transfer incomplete"};
  if (has_any(m, kTooLarge)) return Rule{ErrorKind::BodyTooLarge, Disposition::Fail, "body too large"};
  if (has_any(m, kUnknownTable)) return Rule{ErrorKind::UnknownTable, Disposition::Fatal, "unknown database or table"};
  if (has_any(m, kBadRequest)) return Rule{ErrorKind::BadRequest, Disposition::Fatal, "request rejected"};
  return std::nullopt;
}

Rule message_rule_or_retry(const std::string& m) {
  // Unknown failures (INTERNAL_ERROR, MEM_LIMIT_EXCEEDED, TIMEOUT, CANCELLED,
  // new wording) are retried: with deterministic labels a retry can never
  // duplicate, and the pipeline's backoff bounds the cost of a permanent one.
  if (auto r = message_rule(m)) return *r;
  return Rule{ErrorKind::ServerError, Disposition::Retry, "failed"};
}

const json::value* field(const json::object& o, std::string_view k) { return o.if_contains(k); }

std::string str_field(const json::object& o, std::string_view k) {
  auto* v = field(o, k);
  if (!v) return {};
  if (v->is_string()) return std::string(v->get_string());
  if (v->is_null()) return {};
  return json::serialize(*v);
}

std::optional<int64_t> int_field(const json::object& o, std::string_view k) {
  auto* v = field(o, k);
  if (!v) return std::nullopt;
  if (v->is_int64()) return v->get_int64();
  if (v->is_uint64()) return static_cast<int64_t>(v->get_uint64());
  if (v->is_double()) return static_cast<int64_t>(v->get_double());
  if (v->is_string()) {
    try {
      return std::stoll(std::string(v->get_string()));
    } catch (...) {
      return std::nullopt;
    }
  }
  return std::nullopt;
}

ErrorContext base_context(const ClassifyContext& c, int http_status) {
  ErrorContext e;
  if (!c.db.empty()) e.table = c.table.empty() ? c.db : c.db + "." + c.table;
  e.label = c.label;
  e.txn_id = c.txn_id;
  e.endpoint = c.endpoint;
  e.http_status = http_status;
  return e;
}

Classification failed(ErrorKind k, Disposition d, std::string msg, ErrorContext ectx) {
  Classification c;
  c.verdict = Verdict::Failed;
  c.doris_status = ectx.doris_status;
  c.doris_message = ectx.doris_message;
  c.error.emplace(k, d, std::move(msg), std::move(ectx));
  return c;
}

LabelState::State existing_state(std::string_view s) {
  // Reference §3.3: "" or anything unknown must read as "not finished".
  std::string l = lower(s);
  if (l == "finished") return LabelState::Finished;
  if (l == "precommitted") return LabelState::Precommitted;
  return LabelState::Running;
}

Classification label_exists(const ClassifyContext& c, ErrorContext ectx, std::string_view existing_job,
                            const std::string& message) {
  LabelState st;
  st.state = existing_state(existing_job);
  st.txn_id = parse_label_txn_id(message);
  if (st.txn_id) ectx.txn_id = st.txn_id;
  Classification out;
  out.verdict = Verdict::LabelExists;
  out.existing = st;
  out.doris_status = ectx.doris_status;
  out.doris_message = ectx.doris_message;
  // FINISHED: the label's data is already visible; repeating cannot help and
  // the coordinator must decide (it usually means the epoch was committed).
  // RUNNING/PRECOMMITTED: abort the txn by label/id, then retry.
  Disposition d = st.state == LabelState::Finished ? Disposition::Fail : Disposition::Retry;
  std::string msg = std::string(to_string(c.op)) + ": label already exists (" + to_string(st.state) + ")";
  out.error.emplace(ErrorKind::LabelExists, d, std::move(msg), std::move(ectx));
  out.error->existing_label = st;
  return out;
}

Classification classify_load_body(const ClassifyContext& c, const json::object& o, ErrorContext ectx) {
  std::string status = str_field(o, "Status");
  std::string message = str_field(o, "Message");
  ectx.doris_status = status;
  ectx.doris_message = message;
  Classification out;
  out.doris_status = status;
  out.doris_message = message;
  LoadResult& r = out.load;
  r.txn_id = int_field(o, "TxnId").value_or(-1);
  r.label = str_field(o, "Label");
  r.status = status;
  r.message = message;
  r.total_rows = int_field(o, "NumberTotalRows").value_or(0);
  r.loaded_rows = int_field(o, "NumberLoadedRows").value_or(0);
  r.filtered_rows = int_field(o, "NumberFilteredRows").value_or(0);
  r.unselected_rows = int_field(o, "NumberUnselectedRows").value_or(0);
  r.load_bytes = int_field(o, "LoadBytes").value_or(0);
  r.load_time_ms = int_field(o, "LoadTimeMs").value_or(0);
  r.error_url = str_field(o, "ErrorURL");
  r.endpoint = c.endpoint;
  if (r.txn_id >= 0) ectx.txn_id = r.txn_id;
  if (r.label.empty()) r.label = c.label;

  std::string ls = lower(status);
  if (ls == "success") {
    out.verdict = Verdict::Success;
    return out;
  }
  if (ls == "publish timeout") {
    // Committed; visibility is only delayed (reference §3.2: match on Status).
    out.verdict = Verdict::PublishTimeout;
    r.publish_timeout = true;
    return out;
  }
  std::string lm = lower(message);
  if (ls == "label already exists" || lm.find("has already been used") != std::string::npos)
    return label_exists(c, std::move(ectx), str_field(o, "ExistingJobStatus"), message);
  Rule rule = message_rule_or_retry(lm);
  auto res = failed(rule.kind, rule.disposition, std::string(to_string(c.op)) + " failed: " + rule.what, std::move(ectx));
  res.load = r;
  res.error->error_url = r.error_url;
  return res;
}

Classification classify_2pc(const ClassifyContext& c, const std::string& status, const std::string& msg,
                            ErrorContext ectx) {
  ectx.doris_status = status;
  ectx.doris_message = msg;
  if (!ectx.txn_id) ectx.txn_id = parse_transaction_id(msg);
  std::string ls = lower(status);
  Classification out;
  out.doris_status = status;
  out.doris_message = msg;
  if (ls == "success" || ls == "ok") {
    out.verdict = Verdict::Success;
    return out;
  }
  std::string m = lower(msg);
  auto has = [&](std::string_view n) { return m.find(n) != std::string::npos; };
  const bool committed = has("is already committed") || has("is already visible");
  const bool aborted = has("is already aborted");
  // "running transaction not found, label=" also contains "transaction not found".
  const bool label_not_running = has("running transaction not found");
  const bool not_found = !label_not_running && (has("transaction not found") || has("] not found"));
  if (c.op == Operation::Commit) {
    if (committed) {
      out.verdict = Verdict::AlreadyDone;
      return out;
    }
    // An aborted txn is provably not visible; an unknown one may have been
    // committed and then forgotten (label_num_threshold, label_keep_max_second).
    if (aborted) {
      out.verdict = Verdict::Aborted;
      return out;
    }
    if (not_found) {
      out.verdict = Verdict::NotFoundOrAborted;
      return out;
    }
    if (label_not_running)
      // Either VISIBLE or ABORTED: the FE does not say which (reference §4.2).
      return failed(ErrorKind::LabelNotRunning, Disposition::Fail,
                    "commit by label: no pre-committed transaction (finished or aborted; probe the label)",
                    std::move(ectx));
    if (has("not pre-committed"))
      return failed(ErrorKind::TxnNotPrecommitted, Disposition::Retry, "commit: transaction is not pre-committed yet",
                    std::move(ectx));
  } else {
    if (aborted) {
      out.verdict = Verdict::AlreadyDone;
      return out;
    }
    if (committed || has("could not abort"))
      return failed(ErrorKind::AlreadyCommitted, Disposition::Fail,
                    "abort: transaction is already committed and cannot be aborted", std::move(ectx));
    if (not_found || label_not_running) {
      out.verdict = Verdict::NotFoundOrAborted;
      return out;
    }
  }
  Rule rule = message_rule_or_retry(m);
  return failed(rule.kind, rule.disposition, std::string(to_string(c.op)) + " failed: " + rule.what, std::move(ectx));
}

// ResponseBody codes (reference §1.1).
Classification classify_response_body(const ClassifyContext& c, int64_t code, const json::object& o,
                                      ErrorContext ectx) {
  std::string msg = str_field(o, "msg");
  std::string data = field(o, "data") && field(o, "data")->is_string() ? str_field(o, "data") : std::string();
  ectx.doris_status = std::to_string(code);
  ectx.doris_message = data.empty() ? msg : msg + ": " + data;
  if (code == 0) {
    if (c.op == Operation::Metadata) {
      Classification out;
      out.verdict = Verdict::Success;
      out.doris_status = ectx.doris_status;
      out.doris_message = ectx.doris_message;
      return out;
    }
    return failed(ErrorKind::ServerError, Disposition::Retry,
                  std::string(to_string(c.op)) + ": unexpected answer shape", std::move(ectx));
  }
  std::string what = std::string(to_string(c.op)) + " failed: ";
  if (code == 401) return failed(ErrorKind::Auth, Disposition::Fatal, what + "unauthorized", std::move(ectx));
  if (code == 500 || code == 503)
    return failed(ErrorKind::ServerError, Disposition::Retry, what + "FE error", std::move(ectx));
  std::string lm = lower(ectx.doris_message);
  if (auto r = message_rule(lm)) return failed(r->kind, r->disposition, what + r->what, std::move(ectx));
  if (code == 403 || code == 404)
    return failed(ErrorKind::BadRequest, Disposition::Fatal, what + "request rejected", std::move(ectx));
  return failed(ErrorKind::ServerError, Disposition::Retry, what + "failed", std::move(ectx));
}

Classification classify_answer(int http_status, std::string_view body, const ClassifyContext& c) {
  ErrorContext ectx = base_context(c, http_status);
  const std::string op = to_string(c.op);
  if (http_status == 301 || http_status == 302 || http_status == 303 || http_status == 307 ||
      http_status == 308) {
    Classification out;
    out.verdict = Verdict::Redirect;
    return out;
  }
  if (http_status != 200) {
    ectx.doris_message = std::string(body.substr(0, 200));
    if (http_status == 401 || http_status == 403)
      return failed(ErrorKind::Auth, Disposition::Fatal, op + " failed: HTTP " + std::to_string(http_status),
                    std::move(ectx));
    if (http_status == 408 || http_status == 429 || http_status >= 500 || http_status < 200)
      return failed(ErrorKind::ServerError, Disposition::Retry, op + " failed: HTTP " + std::to_string(http_status),
                    std::move(ectx));
    if (http_status == 413)
      return failed(ErrorKind::BodyTooLarge, Disposition::Fail, op + " failed: HTTP 413", std::move(ectx));
    // 404 "Not Found": the path does not exist on this node (wrong port,
    // a Doris without label-based 2PC, ...): configuration, not transient.
    return failed(ErrorKind::BadRequest, Disposition::Fatal, op + " failed: HTTP " + std::to_string(http_status),
                  std::move(ectx));
  }
  boost::system::error_code ec;
  json::value v = json::parse(json::string_view(body.data(), body.size()), ec);
  if (ec || !v.is_object()) {
    // With deterministic labels a retry cannot duplicate; an unreadable 200
    // says nothing about the txn, so the caller aborts by label and retries.
    ectx.doris_message = std::string(body.substr(0, 200));
    return failed(ErrorKind::ServerError, Disposition::Retry, op + " failed: unparsable answer", std::move(ectx));
  }
  const json::object& o = v.get_object();
  if (o.contains("Status")) {
    if (c.op == Operation::StreamLoad || c.op == Operation::Probe) return classify_load_body(c, o, std::move(ectx));
    ectx.doris_status = str_field(o, "Status");
    ectx.doris_message = str_field(o, "Message");
    return failed(ErrorKind::ServerError, Disposition::Retry, op + ": unexpected answer shape", std::move(ectx));
  }
  if (auto code = int_field(o, "code"); code && o.contains("msg"))
    return classify_response_body(c, *code, o, std::move(ectx));
  if (o.contains("status") && o.contains("msg")) {
    std::string status = str_field(o, "status");
    std::string msg = str_field(o, "msg");
    if (c.op == Operation::Commit || c.op == Operation::Abort) return classify_2pc(c, status, msg, std::move(ectx));
    // RestBaseResult from the FE in front of a load (before any redirect).
    ectx.doris_status = status;
    ectx.doris_message = msg;
    std::string ls = lower(status);
    if (ls == "ok" || ls == "success") {
      if (c.op == Operation::Metadata) {
        Classification out;
        out.verdict = Verdict::Success;
        out.doris_status = status;
        out.doris_message = msg;
        return out;
      }
      return failed(ErrorKind::ServerError, Disposition::Retry, op + ": unexpected answer shape", std::move(ectx));
    }
    Rule rule = message_rule_or_retry(lower(msg));
    return failed(rule.kind, rule.disposition, op + " failed: " + rule.what, std::move(ectx));
  }
  ectx.doris_message = std::string(body.substr(0, 200));
  return failed(ErrorKind::ServerError, Disposition::Retry, op + ": unexpected answer shape", std::move(ectx));
}

}  // namespace

std::string privilege_fix(std::string_view doris_message, const std::string& db, const std::string& table,
                          const std::string& user) {
  const std::string m = lower(doris_message);
  auto has = [&](std::string_view n) { return m.find(n) != std::string::npos; };
  // fe BaseController.checkTblAuth / FrontendServiceImpl.checkPasswordAndPrivs
  // ("... the Admin_priv,Load_priv privilege(s) for this operation", "... the
  // (LOAD) privilege(s) ..."), ErrorCode.ERR_TABLEACCESS_DENIED_ERROR ("ALTER
  // TABLE command denied to user 'u'@'h' for table 'db: t'") and
  // ERR_DBACCESS_DENIED_ERROR ("Access denied for user 'u'@'h' to database 'd'").
  const bool needs = has("privilege(s) for this operation");
  const bool command = has("command denied to user");
  const bool database = has("access denied for user") && has("to database '");
  if (!needs && !command && !database) return {};
  std::string priv;
  if (needs) {
    if (has("load")) priv = "LOAD_PRIV";
    else if (has("alter")) priv = "ALTER_PRIV";
    else if (has("create")) priv = "CREATE_PRIV";
    else if (has("drop")) priv = "DROP_PRIV";
    else if (has("select")) priv = "SELECT_PRIV";
    else if (has("grant")) priv = "GRANT_PRIV";
  } else if (command) {
    const auto word = m.substr(0, m.find("command denied"));
    if (word.find("alter") != std::string::npos) priv = "ALTER_PRIV";
    else if (word.find("create") != std::string::npos) priv = "CREATE_PRIV";
    else if (word.find("drop") != std::string::npos) priv = "DROP_PRIV";
    else if (word.find("truncate") != std::string::npos || word.find("insert") != std::string::npos)
      priv = "LOAD_PRIV";
    else if (word.find("select") != std::string::npos) priv = "SELECT_PRIV";
  } else {
    priv = "CREATE_PRIV";
  }
  if (priv.empty()) return {};
  std::string d = db, t = table;
  // The table a DDL refusal names: "for table 'db: t'" / "to database 'd'".
  auto quoted_after = [&](std::string_view key) -> std::string {
    auto p = m.find(key);
    if (p == std::string::npos) return {};
    p += key.size();
    auto e = doris_message.find('\'', p);
    return e == std::string::npos ? std::string() : std::string(doris_message.substr(p, e - p));
  };
  if (auto named = quoted_after("for table '"); !named.empty()) {
    if (auto colon = named.find(": "); colon != std::string::npos) {
      d = named.substr(0, colon);
      t = named.substr(colon + 2);
    } else {
      t = named;
    }
  }
  if (auto named = quoted_after("to database '"); !named.empty()) {
    d = named;
    t.clear();
  }
  return grant_statement(priv, d, t, user);
}

std::string grant_statement(const std::string& priv, const std::string& db, const std::string& table,
                            const std::string& user) {
  return "GRANT " + priv + " ON " + (db.empty() ? "*" : db) + "." + (table.empty() ? "*" : table) + " TO '" +
         (user.empty() ? "<user>" : user) + "'@'%'";
}

Classification classify(int http_status, std::string_view body, const ClassifyContext& c) {
  Classification out = classify_answer(http_status, body, c);
  if (out.verdict != Verdict::Failed || !out.error) return out;
  const std::string fix = privilege_fix(out.doris_message, c.db, c.table, c.user);
  if (fix.empty()) return out;
  // Retrying cannot help: only a GRANT can. Fatal, so `run` stops with this
  // message instead of retrying a load Doris will always refuse.
  ErrorContext ectx = out.error->context();
  std::string msg = std::string(to_string(c.op)) + " failed: user '" + c.user + "' lacks a privilege; fix: " + fix;
  out.error.emplace(ErrorKind::Auth, Disposition::Fatal, std::move(msg), std::move(ectx));
  return out;
}

}  // namespace cdc2doris::doris
