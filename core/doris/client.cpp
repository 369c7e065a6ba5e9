#include "core/doris/client.hpp"

namespace cdc2doris::doris {

LoadStream::~LoadStream() = default;

DorisResult<void> LoadStream::write_from(std::string& rows) {
  auto err = write(rows);
  rows.clear();
  return err;
}
DorisResult<void> LoadStream::end_body() { return {}; }

DorisClient::~DorisClient() = default;

DorisResult<void> DorisClient::health() {
  auto r = sql("", "SHOW DATABASES");
  if (!r) return r.error();
  return {};
}

DorisError with_error_log(const DorisError& e, std::vector<std::string> lines) {
  std::string message = e.message();
  if (!lines.empty()) {
    message += "; Doris rejected (first lines behind ErrorURL):";
    for (const auto& l : lines) {
      // One line per rejected row, which may be long: enough to see column,
      // value and reason without flooding /status.
      constexpr size_t kMax = 512;
      message += " [";
      message += l.size() > kMax ? l.substr(0, kMax) + "…" : l;
      message += "]";
    }
  }
  DorisError out(e.kind(), e.disposition(), std::move(message), e.context());
  out.existing_label = e.existing_label;
  out.error_url = e.error_url;
  out.error_log = std::move(lines);
  return out;
}

const char* to_string(ErrorKind k) {
  switch (k) {
    case ErrorKind::Transport: return "transport";
    case ErrorKind::Timeout: return "timeout";
    case ErrorKind::ServerError: return "server-error";
    case ErrorKind::NoBackend: return "no-backend";
    case ErrorKind::TxnLimit: return "txn-limit";
    case ErrorKind::TooManyVersions: return "too-many-versions";
    case ErrorKind::TxnNotPrecommitted: return "txn-not-precommitted";
    case ErrorKind::LabelExists: return "label-exists";
    case ErrorKind::DataQuality: return "data-quality";
    case ErrorKind::TxnGone: return "txn-gone";
    case ErrorKind::LabelNotRunning: return "label-not-running";
    case ErrorKind::AlreadyCommitted: return "already-committed";
    case ErrorKind::BodyTooLarge: return "body-too-large";
    case ErrorKind::Auth: return "auth";
    case ErrorKind::UnknownTable: return "unknown-table";
    case ErrorKind::BadRequest: return "bad-request";
    case ErrorKind::Cancelled: return "cancelled";
    case ErrorKind::Shutdown: return "shutdown";
  }
  return "?";
}

const char* to_string(LabelState::State s) {
  switch (s) {
    case LabelState::Unused: return "UNUSED";
    case LabelState::Running: return "RUNNING";
    case LabelState::Precommitted: return "PRECOMMITTED";
    case LabelState::Finished: return "FINISHED";
  }
  return "?";
}

const char* to_string(TxnOutcome o) {
  switch (o) {
    case TxnOutcome::Done: return "done";
    case TxnOutcome::AlreadyDone: return "already-done";
    case TxnOutcome::NotFoundOrAborted: return "not-found-or-aborted";
    case TxnOutcome::Aborted: return "aborted";
  }
  return "?";
}

namespace {
TxnResult wait(std::future<TxnResult> f, const std::string& db) {
  try {
    return f.get();
  } catch (const std::future_error&) {
    // The client was destroyed while the operation was in flight.
    ErrorContext ctx;
    ctx.table = db;
    return DorisError(ErrorKind::Shutdown, Disposition::Fail, "doris client shut down", std::move(ctx));
  }
}
}  // namespace

TxnResult DorisClient::commit(const std::string& db, int64_t txn_id) { return wait(commit_async(db, txn_id), db); }
TxnResult DorisClient::abort(const std::string& db, int64_t txn_id) { return wait(abort_async(db, txn_id), db); }
TxnResult DorisClient::commit_by_label(const std::string& db, const std::string& label) {
  return wait(commit_by_label_async(db, label), db);
}
TxnResult DorisClient::abort_by_label(const std::string& db, const std::string& label) {
  return wait(abort_by_label_async(db, label), db);
}

}  // namespace cdc2doris::doris
