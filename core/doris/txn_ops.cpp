// The short FE/BE calls, each retried with backoff (Core::retry): 2PC
// commit/abort, the label probe, and FE JSON requests (schema, health, SQL).
#include "core/doris/detail/core.hpp"

namespace cdc2doris::doris::detail {

awaitable<TxnResult> Core::txn_op(Operation op, std::string db, std::optional<int64_t> txn_id, std::string label) {
  ClassifyContext cc;
  cc.op = op;
  cc.db = db;
  cc.label = label;
  cc.txn_id = txn_id;
  cc.by_label = !txn_id;
  if (stopping) co_return shut_down();
  co_return co_await retry([&](int) -> awaitable<TxnResult> {
    Endpoint fe = pick_fe();
    http::request<http::string_body> req{http::verb::put, "/api/" + db + "/_stream_load_2pc", 11};
    set_common_headers(req, fe);
    req.set(http::field::expect, "100-continue");
    req.set("txn_operation", op == Operation::Commit ? "commit" : "abort");
    if (txn_id)
      req.set("txn_id", std::to_string(*txn_id));
    else
      req.set("label", label);
    auto answer = co_await send_attempt(fe, std::move(req), cc, std::string(to_string(op)) + " failed");
    if (!answer) co_return std::move(answer.error());
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
        co_return DorisError(ErrorKind::ServerError, Disposition::Retry,
                             std::string(to_string(op)) + " failed: redirect not followable", ErrorContext{});
      default: break;
    }
    co_return failed_attempt(std::move(c), a, to_string(op));
  });
}

awaitable<DorisResult<LabelState>> Core::probe(LoadSpec spec) {
  spec.two_phase_commit = true;
  ClassifyContext cc;
  cc.op = Operation::Probe;
  cc.db = spec.db;
  cc.table = spec.table;
  cc.label = spec.label;
  using Probed = DorisResult<LabelState>;
  if (stopping) co_return shut_down();
  // Final: what ends the probe whatever its disposition (the abort below
  // was retried on its own).
  auto r = co_await retry([&](int) -> awaitable<DorisResult<Final<Probed>>> {
    Endpoint target;
    if (cfg.route == Route::ViaFe) {
      target = pick_fe();
    } else {
      auto be = co_await pick_be();
      if (!be) co_return load_error(ErrorKind::NoBackend, Disposition::Retry, "label probe: no backend known", spec, "");
      target = *be;
    }
    http::request<http::string_body> req{http::verb::put, "/api/" + spec.db + "/" + spec.table + "/_stream_load", 11};
    set_common_headers(req, target);
    set_load_headers(req, spec, false);
    // Empty body, Content-Length: 0.
    auto answer = co_await send_attempt(target, std::move(req), cc, "label probe failed");
    if (!answer) co_return std::move(answer.error());
    const Answer& a = *answer;
    cc.endpoint = a.from.host_port();
    cc.user = cfg.user;
    auto c = classify(a.status, a.body, cc);
    if (c.verdict == Verdict::LabelExists) co_return Final<Probed>{*c.existing};
    if (c.verdict == Verdict::Success || c.verdict == Verdict::PublishTimeout) {
      // The probe itself began a txn under the label: abort it so the label is
      // free again (aborted labels are reusable at once, reference §6).
      if (c.load.txn_id < 0)
        co_return Final<Probed>{load_error(ErrorKind::ServerError, Disposition::Retry,
                                           "label probe: answer without TxnId", spec, cc.endpoint)};
      auto aborted = co_await txn_op(Operation::Abort, spec.db, c.load.txn_id, "");
      if (!aborted) co_return Final<Probed>{std::move(aborted.error())};
      co_return Final<Probed>{LabelState{LabelState::Unused, std::nullopt}};
    }
    co_return failed_attempt(std::move(c), a, "label probe");
  });
  co_return final_or_error(std::move(r));
}

awaitable<DorisResult<json::value>> Core::fe_json(http::verb verb, std::string target, std::string body,
                                                               ClassifyContext cc) {
  cc.op = Operation::Metadata;
  if (stopping) co_return shut_down();
  co_return co_await retry([&](int) -> awaitable<DorisResult<json::value>> {
    Endpoint fe = pick_fe();
    http::request<http::string_body> req{verb, target, 11};
    set_common_headers(req, fe);
    if (!body.empty()) {
      req.set(http::field::content_type, "application/json;charset=UTF-8");
      req.body() = body;
    }
    auto answer = co_await send_attempt(fe, std::move(req), cc, "metadata request failed");
    if (!answer) co_return std::move(answer.error());
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
    co_return failed_attempt(std::move(c), a, "metadata request");
  });
}

awaitable<DorisResult<Answer>> Core::send_attempt(Endpoint ep, http::request<http::string_body> req,
                                                              const ClassifyContext& cc, std::string what) {
  try {
    co_return co_await send(ep, std::move(req));
  } catch (const TransportFailure& f) {
    quarantine(f.ep, f.what());
    co_return transport_error(f, cc, what);
  }
}

// A 5xx sender is quarantined like one that broke the connection: an FE or
// BE answering 500/503 is usually starting or stopping, and the next attempt
// should rotate to another endpoint rather than wait on the same one.
DorisError Core::failed_attempt(Classification c, const Answer& a, std::string_view what) {
  if (!c.error) c.error.emplace(ErrorKind::ServerError, Disposition::Retry, std::string(what) + ": unexpected answer");
  if (c.error->disposition() == Disposition::Retry && a.status >= 500)
    quarantine(a.from, "HTTP " + std::to_string(a.status));
  return std::move(*c.error);
}

DorisError Core::shut_down() { return DorisError(ErrorKind::Shutdown, Disposition::Fail, "doris client shut down"); }

}  // namespace cdc2doris::doris::detail
