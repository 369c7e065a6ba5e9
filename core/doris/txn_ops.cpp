// The short FE/BE calls, each retried with backoff: 2PC commit/abort, the
// label probe, and FE JSON requests (schema, health, SQL).
#include "core/doris/detail/core.hpp"

namespace cdc2doris::doris::detail {

awaitable<TxnResult> Core::txn_op(Operation op, std::string db, std::optional<int64_t> txn_id, std::string label) {
  ClassifyContext cc;
  cc.op = op;
  cc.db = db;
  cc.label = label;
  cc.txn_id = txn_id;
  cc.by_label = !txn_id;
  std::optional<DorisError> last;
  for (int attempt = 0; attempt < cfg.retry.max_attempts && !stopping; ++attempt) {
    if (attempt) co_await sleep(backoff.delay(attempt - 1));
    Endpoint fe = pick_fe();
    http::request<http::string_body> req{http::verb::put, "/api/" + db + "/_stream_load_2pc", 11};
    set_common_headers(req, fe);
    req.set(http::field::expect, "100-continue");
    req.set("txn_operation", op == Operation::Commit ? "commit" : "abort");
    if (txn_id)
      req.set("txn_id", std::to_string(*txn_id));
    else
      req.set("label", label);
    auto answer = co_await send_attempt(fe, std::move(req), cc, std::string(to_string(op)) + " failed", last);
    if (!answer) continue;
    const Answer& a = *answer;
    cc.endpoint = a.from.host_port();
    cc.user = cfg.user;
    auto c = classify(a.status, a.body, cc);
    switch (c.verdict) {
      case Verdict::Success: co_return TxnOutcome::Done;
      case Verdict::AlreadyDone: co_return TxnOutcome::AlreadyDone;
      case Verdict::NotFoundOrAborted: co_return TxnOutcome::NotFoundOrAborted;
      case Verdict::Aborted: co_return TxnOutcome::Aborted;
      case Verdict::Redirect:
        last = DorisError(ErrorKind::ServerError, Disposition::Retry,
                          std::string(to_string(op)) + " failed: redirect not followable", ErrorContext{});
        continue;
      default: break;
    }
    if (auto final_error = keep_for_retry(std::move(c), a, to_string(op), last)) co_return std::move(*final_error);
  }
  co_return after_retries(std::move(last));
}

awaitable<std::variant<LabelState, DorisError>> Core::probe(LoadSpec spec) {
  spec.two_phase_commit = true;
  ClassifyContext cc;
  cc.op = Operation::Probe;
  cc.db = spec.db;
  cc.table = spec.table;
  cc.label = spec.label;
  std::optional<DorisError> last;
  for (int attempt = 0; attempt < cfg.retry.max_attempts && !stopping; ++attempt) {
    if (attempt) co_await sleep(backoff.delay(attempt - 1));
    Endpoint target;
    if (cfg.route == Route::ViaFe) {
      target = pick_fe();
    } else {
      auto be = co_await pick_be();
      if (!be) {
        last = load_error(ErrorKind::NoBackend, Disposition::Retry, "label probe: no backend known", spec, "");
        continue;
      }
      target = *be;
    }
    http::request<http::string_body> req{http::verb::put, "/api/" + spec.db + "/" + spec.table + "/_stream_load", 11};
    set_common_headers(req, target);
    set_load_headers(req, spec, false);
    // Empty body, Content-Length: 0.
    auto answer = co_await send_attempt(target, std::move(req), cc, "label probe failed", last);
    if (!answer) continue;
    const Answer& a = *answer;
    cc.endpoint = a.from.host_port();
    cc.user = cfg.user;
    auto c = classify(a.status, a.body, cc);
    if (c.verdict == Verdict::LabelExists) co_return *c.existing;
    if (c.verdict == Verdict::Success || c.verdict == Verdict::PublishTimeout) {
      // The probe itself began a txn under the label: abort it so the label is
      // free again (aborted labels are reusable at once, reference §6).
      if (c.load.txn_id < 0)
        co_return load_error(ErrorKind::ServerError, Disposition::Retry, "label probe: answer without TxnId", spec,
                             cc.endpoint);
      auto r = co_await txn_op(Operation::Abort, spec.db, c.load.txn_id, "");
      if (auto* e = std::get_if<DorisError>(&r)) co_return std::move(*e);
      co_return LabelState{LabelState::Unused, std::nullopt};
    }
    if (auto final_error = keep_for_retry(std::move(c), a, "label probe", last)) co_return std::move(*final_error);
  }
  co_return after_retries(std::move(last));
}

awaitable<std::variant<json::value, DorisError>> Core::fe_json(http::verb verb, std::string target, std::string body,
                                                               ClassifyContext cc) {
  cc.op = Operation::Metadata;
  std::optional<DorisError> last;
  for (int attempt = 0; attempt < cfg.retry.max_attempts && !stopping; ++attempt) {
    if (attempt) co_await sleep(backoff.delay(attempt - 1));
    Endpoint fe = pick_fe();
    http::request<http::string_body> req{verb, target, 11};
    set_common_headers(req, fe);
    if (!body.empty()) {
      req.set(http::field::content_type, "application/json;charset=UTF-8");
      req.body() = body;
    }
    auto answer = co_await send_attempt(fe, std::move(req), cc, "metadata request failed", last);
    if (!answer) continue;
    const Answer& a = *answer;
    cc.endpoint = a.from.host_port();
    cc.user = cfg.user;
    auto c = classify(a.status, a.body, cc);
    if (c.verdict == Verdict::Success) {
      boost::system::error_code ec;
      auto v = json::parse(a.body, ec);
      if (!ec) co_return std::move(v);
      c.error.emplace(ErrorKind::ServerError, Disposition::Retry, "metadata request: unparsable answer");
    }
    if (auto final_error = keep_for_retry(std::move(c), a, "metadata request", last))
      co_return std::move(*final_error);
  }
  co_return after_retries(std::move(last));
}

awaitable<std::optional<Answer>> Core::send_attempt(Endpoint ep, http::request<http::string_body> req,
                                                   const ClassifyContext& cc, std::string what,
                                                   std::optional<DorisError>& last) {
  try {
    co_return co_await send(ep, std::move(req));
  } catch (const TransportFailure& f) {
    quarantine(f.ep, f.what());
    last = transport_error(f, cc, what);
  }
  co_return std::nullopt;
}

// A 5xx sender is quarantined like one that broke the connection: an FE or
// BE answering 500/503 is usually starting or stopping, and the next attempt
// should rotate to another endpoint rather than wait on the same one.
std::optional<DorisError> Core::keep_for_retry(Classification c, const Answer& a, std::string_view what,
                                               std::optional<DorisError>& last) {
  if (!c.error) c.error.emplace(ErrorKind::ServerError, Disposition::Retry, std::string(what) + ": unexpected answer");
  if (c.error->disposition() != Disposition::Retry) return std::move(c.error);
  if (a.status >= 500) quarantine(a.from, "HTTP " + std::to_string(a.status));
  last = std::move(c.error);
  return std::nullopt;
}

DorisError Core::after_retries(std::optional<DorisError> last) {
  // No attempt ran: the client was stopping before the first one.
  if (!last) return DorisError(ErrorKind::Shutdown, Disposition::Fail, "doris client shut down");
  return std::move(*last);
}

}  // namespace cdc2doris::doris::detail
