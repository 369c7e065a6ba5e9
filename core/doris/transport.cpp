// One HTTP exchange: connecting (TCP, then TLS with SNI and host name check),
// the keep-alive pool, request/answer with a fresh retry on a stale pooled
// connection, and following FE redirects.
#include <openssl/err.h>

#include <boost/asio/this_coro.hpp>
#include <set>

#include "core/doris/detail/core.hpp"

namespace cdc2doris::doris::detail {

awaitable<void> Core::sleep(std::chrono::milliseconds d) {
  if (d.count() <= 0) co_return;
  net::steady_timer t(co_await net::this_coro::executor, d);
  co_await t.async_wait(use_tuple);
}

awaitable<std::shared_ptr<Conn>> Core::connect(Endpoint ep) {
  auto ex = co_await net::this_coro::executor;
  auto conn = std::make_shared<Conn>(ex, ep.tls ? &*tls_ctx : nullptr, ep);
  tcp::resolver resolver(ex);
  auto [rec, results] =
      co_await resolver.async_resolve(ep.host, std::to_string(ep.port), tcp::resolver::numeric_service, use_tuple);
  if (rec) throw TransportFailure(ep, rec, "resolve");
  conn->tcp().expires_after(cfg.timeouts.connect);
  auto [cec, _] = co_await conn->tcp().async_connect(results, use_tuple);
  if (cec) throw TransportFailure(ep, cec, "connect");
  error_code ignore;
  conn->tcp().socket().set_option(tcp::no_delay(true), ignore);
  if (ep.tls) {
    auto& s = conn->tls();
    if (!SSL_set_tlsext_host_name(s.native_handle(), ep.host.c_str()))
      throw TransportFailure(ep, error_code(static_cast<int>(::ERR_get_error()), net::error::get_ssl_category()),
                             "tls sni");
    // OpenSSL's own name check (not a verify callback), so a mismatch is
    // reported as such by SSL_get_verify_result ("hostname mismatch", "IP
    // address mismatch") instead of a bare "certificate verify failed".
    if (cfg.tls.verify_peer && cfg.tls.verify_hostname) {
      X509_VERIFY_PARAM* param = SSL_get0_param(s.native_handle());
      error_code ip_ec;
      net::ip::make_address(ep.host, ip_ec);
      const int set = ip_ec ? X509_VERIFY_PARAM_set1_host(param, ep.host.c_str(), 0)
                            : X509_VERIFY_PARAM_set1_ip_asc(param, ep.host.c_str());
      if (set != 1)
        throw TransportFailure(ep, error_code(static_cast<int>(::ERR_get_error()), net::error::get_ssl_category()),
                               "tls host name");
    }
    conn->tcp().expires_after(cfg.timeouts.connect);
    auto [hec] = co_await s.async_handshake(ssl::stream_base::client, use_tuple);
    if (hec) {
      TransportFailure f(ep, hec, "tls handshake");
      const long verify = SSL_get_verify_result(s.native_handle());
      f.detail = "tls handshake with " + ep.host_port() + " failed";
      if (verify != X509_V_OK) f.detail += ": " + std::string(X509_verify_cert_error_string(verify));
      if (!cfg.tls.ca_file.empty()) f.detail += " (doris.tls.ca_file " + cfg.tls.ca_file + ")";
      throw f;
    }
  }
  co_return conn;
}

awaitable<std::shared_ptr<Conn>> Core::acquire(const Endpoint& ep, bool& reused) {
  reused = false;
  {
    std::lock_guard lk(pool_m_);
    auto it = pool_.find(ep.key());
    while (it != pool_.end() && !it->second.empty()) {
      auto c = std::move(it->second.back());
      it->second.pop_back();
      if (Clock::now() - c->idle_since < cfg.timeouts.keepalive_idle) {
        reused = true;
        co_return c;
      }
    }
  }
  co_return co_await connect(ep);
}

void Core::release(std::shared_ptr<Conn> c) {
  if (stopping) return;
  c->idle_since = Clock::now();
  std::lock_guard lk(pool_m_);
  auto& v = pool_[c->ep.key()];
  if (v.size() < 8) v.push_back(std::move(c));
}

void Core::set_common_headers(http::fields& f, const Endpoint& ep) const {
  f.set(http::field::host, ep.host_port());
  f.set(http::field::authorization, auth);
  f.set(http::field::user_agent, "cdc2doris");
}

awaitable<Answer> Core::roundtrip(Endpoint ep, http::request<http::string_body> req) {
  for (int attempt = 0;; ++attempt) {
    bool reused = false;
    // Not a conditional expression: GCC 12 mishandles co_await inside ?:.
    std::shared_ptr<Conn> conn;
    if (attempt == 0)
      conn = co_await acquire(ep, reused);
    else
      conn = co_await connect(ep);
    req.set(http::field::host, ep.host_port());
    req.keep_alive(true);
    req.prepare_payload();
    conn->tcp().expires_after(cfg.timeouts.request);
    auto [wec, wn] = co_await conn->with([&](auto& s) { return http::async_write(s, req, use_tuple); });
    if (wec) {
      // A pooled connection the server closed meanwhile: once more, fresh.
      if (reused) continue;
      throw TransportFailure(ep, wec, "send");
    }
    std::optional<http::response_parser<http::string_body>> p;
    error_code rec;
    for (;;) {
      p.emplace();
      p->body_limit(kAnswerLimit);
      auto [ec, n] = co_await conn->with([&](auto& s) { return http::async_read(s, conn->buf, *p, use_tuple); });
      rec = ec;
      if (ec || p->get().result_int() / 100 != 1) break;  // skip 100 Continue
    }
    if (rec) {
      if (reused && (rec == http::error::end_of_stream || rec == net::error::connection_reset ||
                     rec == net::error::eof))
        continue;
      throw TransportFailure(ep, rec, "receive");
    }
    Answer a = make_answer(p->get(), ep);
    if (a.keep_alive)
      release(std::move(conn));
    else
      conn->close();
    co_return a;
  }
}

awaitable<Answer> Core::send(Endpoint ep, http::request<http::string_body> req) {
  std::set<std::string> seen{ep.key() + std::string(req.target())};
  for (int hop = 0;; ++hop) {
    Answer a = co_await roundtrip(ep, req);
    if (!is_redirect(a.status) || a.location.empty() || hop >= cfg.max_redirects) co_return a;
    auto u = parse_url(a.location);
    if (!u) co_return a;
    Endpoint next = rewrite(Endpoint{u->host, u->port, u->tls()});
    // The FE's Location carries user:password; Authorization is re-sent
    // as configured instead (curl --location-trusted semantics).
    if (!seen.insert(next.key() + u->target).second) co_return a;  // loop
    req.target(u->target);
    ep = next;
  }
}

DorisError Core::transport_error(const TransportFailure& f, const ClassifyContext& cc, const std::string& what) const {
  ErrorContext ctx;
  if (!cc.db.empty()) ctx.table = cc.table.empty() ? cc.db : cc.db + "." + cc.table;
  ctx.label = cc.label;
  ctx.txn_id = cc.txn_id;
  ctx.endpoint = f.ep.host_port();
  return DorisError(f.timeout() ? ErrorKind::Timeout : ErrorKind::Transport, Disposition::Retry,
                    what + ": " + f.ec.message() + (f.detail.empty() ? "" : "; " + f.detail), std::move(ctx));
}

}  // namespace cdc2doris::doris::detail
