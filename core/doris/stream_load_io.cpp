// One chunked Stream Load on the I/O side: the load headers, the opening with
// 100-continue (retried and redirected while no body byte has left), the body
// from StreamState's queue, the final answer and a data-quality error's log.
#include <algorithm>
#include <array>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/write.hpp>
#include <cstdio>
#include <set>

#include "core/doris/detail/core.hpp"

namespace cdc2doris::doris::detail {

void Core::set_load_headers(http::fields& f, const LoadSpec& s, bool gzip) const {
  f.set(http::field::expect, "100-continue");
  f.set("format", "json");
  f.set("read_json_by_line", "true");
  const bool partial = !s.partial_columns.empty();
  if (s.unique_key && !partial && !s.flexible_partial_update) f.set("hidden_columns", "__DORIS_DELETE_SIGN__");
  if (!s.sequence_col.empty()) f.set("function_column.sequence_col", s.sequence_col);
  if (partial) {
    std::string cols;
    bool has_sign = false;
    for (auto& c : s.partial_columns) {
      if (!cols.empty()) cols += ',';
      cols += c;
      has_sign |= c == "__DORIS_DELETE_SIGN__";
    }
    if (s.unique_key && !has_sign) cols += ",__DORIS_DELETE_SIGN__";
    f.set("partial_columns", "true");
    f.set("columns", cols);
  }
  if (s.flexible_partial_update) f.set("unique_key_update_mode", "UPDATE_FLEXIBLE_COLUMNS");
  int timeout = s.timeout_s.value_or(cfg.load_timeout_s);
  if (timeout > 0) f.set("timeout", std::to_string(timeout));
  if (gzip) f.set("compress_type", "gz");
  static const std::set<std::string> reserved{"label", "two_phase_commit", "expect", "transfer-encoding",
                                              "content-length", "authorization", "host"};
  for (auto& [k, v] : s.headers) {
    if (reserved.count(lower(k))) continue;
    f.set(k, v);
  }
  f.set("label", s.label);
  if (s.two_phase_commit) f.set("two_phase_commit", "true");
}

awaitable<std::pair<std::shared_ptr<Conn>, std::optional<Answer>>> Core::open_once(StreamState& st) {
  const LoadSpec& s = st.spec;
  Endpoint target;
  if (cfg.route == Route::ViaFe) {
    target = pick_fe();
  } else {
    auto be = co_await pick_be();
    if (!be) co_return std::make_pair(nullptr, Answer{503, "", "", Endpoint{}, false});
    target = *be;
  }
  std::string path = "/api/" + s.db + "/" + s.table + "/_stream_load";
  std::set<std::string> seen{target.key() + path};
  const bool gz = s.gzip.value_or(cfg.gzip);
  for (int hop = 0;; ++hop) {
    auto conn = co_await connect(target);
    st.conn = conn;
    if (st.cancelled_snapshot()) co_return std::make_pair(nullptr, std::nullopt);
    http::request<http::empty_body> req{http::verb::put, path, 11};
    set_common_headers(req, target);
    set_load_headers(req, s, gz);
    req.chunked(true);
    http::request_serializer<http::empty_body> sr{req};
    conn->tcp().expires_after(cfg.timeouts.request);
    auto [wec, wn] = co_await conn->with([&](auto& str) { return http::async_write_header(str, sr, use_tuple); });
    if (wec) throw TransportFailure(target, wec, "send load header");
    http::response_parser<http::string_body> p;
    p.body_limit(kAnswerLimit);
    // Doris decides label/auth/table at header time and answers before any
    // 100 Continue; the body is only sent after 100 (reference §1.2).
    conn->tcp().expires_after(cfg.timeouts.expect_continue);
    auto [rec, rn] = co_await conn->with([&](auto& str) { return http::async_read(str, conn->buf, p, use_tuple); });
    if (rec) throw TransportFailure(target, rec, "wait for 100-continue");
    if (p.get().result_int() == 100) {
      conn->tcp().expires_never();
      co_return std::make_pair(conn, std::nullopt);
    }
    Answer a = make_answer(p.get(), target);
    conn->close();
    st.conn.reset();
    if (is_redirect(a.status) && !a.location.empty() && hop < cfg.max_redirects) {
      auto u = parse_url(a.location);
      if (u) {
        Endpoint next = rewrite(Endpoint{u->host, u->port, u->tls()});
        if (seen.insert(next.key() + u->target).second) {
          target = next;
          path = u->target;
          continue;
        }
      }
    }
    co_return std::make_pair(nullptr, std::move(a));
  }
}


DorisError load_error(ErrorKind k, Disposition d, std::string msg, const LoadSpec& s, const std::string& endpoint) {
  ErrorContext ctx;
  ctx.table = s.db + "." + s.table;
  ctx.label = s.label;
  ctx.endpoint = endpoint;
  return DorisError(k, d, std::move(msg), std::move(ctx));
}

namespace {
awaitable<void> read_final(std::shared_ptr<Conn> conn, std::shared_ptr<StreamState> st) {
  for (;;) {
    http::response_parser<http::string_body> p;
    p.body_limit(kAnswerLimit);
    auto [ec, n] = co_await conn->with([&](auto& s) { return http::async_read(s, conn->buf, p, use_tuple); });
    if (ec) {
      st->read_ec = ec;
      break;
    }
    if (p.get().result_int() / 100 == 1) continue;
    st->final_answer = make_answer(p.get(), conn->ep);
    break;
  }
  st->reader_done = true;
  st->event.cancel();
}
}  // namespace

awaitable<DorisResult<LoadResult>> Core::do_load(std::shared_ptr<StreamState> st) {
  const LoadSpec& spec = st->spec;
  ClassifyContext cc;
  cc.op = Operation::StreamLoad;
  cc.db = spec.db;
  cc.table = spec.table;
  cc.label = spec.label;
  auto cancelled_error = [&] {
    return load_error(ErrorKind::Cancelled, Disposition::Fail, "stream load cancelled", spec, "");
  };
  // Turns an answer into the outcome, fetching the error log of a
  // data-quality failure into the error.
  auto conclude = [&](const Answer& a) -> awaitable<DorisResult<LoadResult>> {
    cc.endpoint = a.from.host_port();
    cc.user = cfg.user;
    auto c = classify(a.status, a.body, cc);
    if (c.verdict == Verdict::Success || c.verdict == Verdict::PublishTimeout) {
      healthy(a.from);
      c.load.endpoint = a.from.host_port();
      c.load.body_bytes = st->body_bytes;
      c.load.error_url = redact_url(c.load.error_url);
      co_return std::move(c.load);
    }
    if (!c.error)
      c.error = load_error(ErrorKind::ServerError, Disposition::Retry,
                           std::string("stream load failed: ") + to_string(c.verdict), spec, a.from.host_port());
    if (c.error->kind() == ErrorKind::DataQuality && !c.error->error_url.empty() && cfg.error_log_lines > 0) {
      std::string problem;
      auto lines = co_await fetch_error_log(c.error->error_url, problem);
      if (!problem.empty()) lines.push_back("(error log unavailable: " + problem + ")");
      c.error = with_error_log(*c.error, std::move(lines));
    }
    c.error->error_url = redact_url(c.error->error_url);
    co_return std::move(*c.error);
  };

  // ---- open: connect, headers, 100-continue; retried while no body byte left
  using Opened = std::variant<std::shared_ptr<Conn>, Answer>;  // the load's connection, or Doris' answer
  auto abandoned = [&] { return st->cancelled_snapshot() || stopping.load(); };
  if (abandoned()) co_return cancelled_error();
  // The answer of the last attempt, when it was retried for a 5xx or a
  // missing backend: out of attempts, it is the load's outcome.
  std::optional<Answer> retried_answer;
  int attempts = 0;
  auto opened = co_await retry(abandoned, [&](int n) -> awaitable<DorisResult<Final<Opened>>> {
    attempts = n + 1;
    retried_answer.reset();
    std::pair<std::shared_ptr<Conn>, std::optional<Answer>> once;
    try {
      once = co_await open_once(*st);
    } catch (const TransportFailure& f) {
      st->conn.reset();
      quarantine(f.ep, f.what());
      co_return transport_error(f, cc, "stream load: opening failed");
    }
    if (once.first) co_return Final<Opened>{std::move(once.first)};
    if (!once.second) co_return cancelled_error();
    Answer& a = *once.second;
    if (a.from.host.empty())  // DirectBe without any known BE
      co_return load_error(ErrorKind::NoBackend, Disposition::Retry, "stream load: no backend known", spec, "");
    cc.endpoint = a.from.host_port();
    cc.user = cfg.user;
    auto c = classify(a.status, a.body, cc);
    const bool retry_here = c.error && c.error->disposition() == Disposition::Retry &&
                            (c.error->kind() == ErrorKind::NoBackend || a.status >= 500);
    if (!retry_here) co_return Final<Opened>{std::move(a)};
    if (a.status >= 500 && n + 1 < cfg.retry.max_attempts) quarantine(a.from, "HTTP " + std::to_string(a.status));
    retried_answer = std::move(a);
    co_return std::move(*c.error);
  });
  if (!opened) {
    auto& e = opened.error();
    // Every error above but the cancellation is retried: ended with
    // attempts left, the load was abandoned. Out of attempts, the last
    // failure is the outcome, as before the retry loop was shared, even if
    // the load was abandoned meanwhile.
    if (attempts < cfg.retry.max_attempts) co_return cancelled_error();
    if (retried_answer) co_return co_await conclude(*retried_answer);
    co_return std::move(e);
  }
  Opened& got = opened->result;
  if (auto* a = std::get_if<Answer>(&got)) co_return co_await conclude(*a);
  std::shared_ptr<Conn> conn = std::move(std::get<std::shared_ptr<Conn>>(got));

  // ---- stream the body while a reader waits for the final answer
  const Endpoint at = conn->ep;
  st->reader_done = false;
  net::co_spawn(st->strand, read_final(conn, st), net::detached);
  bool write_failed = false;
  error_code write_ec;
  for (;;) {
    std::string chunk;
    bool fin = false;
    bool cancelled = false;
    {
      std::lock_guard lk(st->m);
      cancelled = st->cancelled;
      if (!st->queue.empty()) {
        chunk = std::move(st->queue.front());
        st->queue.pop_front();
      } else if (st->finishing) {
        fin = true;
      } else {
        st->io_waiting = true;
      }
    }
    if (cancelled) {
      conn->close();
      co_return cancelled_error();
    }
    if (st->reader_done) break;  // Doris answered (or closed) before the body ended
    if (chunk.empty() && !fin) {
      st->event.expires_at(Clock::time_point::max());
      co_await st->event.async_wait(use_tuple);
      continue;
    }
    if (fin) {
      static constexpr std::string_view last_chunk = "0\r\n\r\n";
      conn->tcp().expires_after(cfg.timeouts.idle);
      auto [ec, n] = co_await conn->with(
          [&](auto& s) { return net::async_write(s, net::buffer(last_chunk.data(), last_chunk.size()), use_tuple); });
      if (ec) {
        write_failed = true;
        write_ec = ec;
      }
      break;
    }
    char head[24];
    int hl = std::snprintf(head, sizeof head, "%zx\r\n", chunk.size());
    std::array<net::const_buffer, 3> bufs{net::buffer(head, static_cast<size_t>(hl)), net::buffer(chunk),
                                          net::buffer("\r\n", 2)};
    conn->tcp().expires_after(cfg.timeouts.idle);
    auto [ec, n] = co_await conn->with([&](auto& s) { return net::async_write(s, bufs, use_tuple); });
    if (ec) {
      write_failed = true;
      write_ec = ec;
      break;
    }
    st->body_bytes += chunk.size();
    {
      std::lock_guard lk(st->m);
      // abandon() may have zeroed the count while this chunk was in flight.
      st->queued = st->queued >= chunk.size() ? st->queued - chunk.size() : 0;
      st->queued_bytes.store(st->queued, std::memory_order_relaxed);
      if (st->spare.size() < 2) {
        chunk.clear();
        st->spare.push_back(std::move(chunk));
      }
    }
    st->cv.notify_all();
  }
  {
    // Nothing more will be sent: release the writer's memory and unblock it.
    std::lock_guard lk(st->m);
    st->queue.clear();
    st->spare.clear();
    st->queued = 0;
    st->queued_bytes = 0;
  }
  st->cv.notify_all();

  // ---- wait for the answer; after a failed write only briefly (the answer,
  // if any, is already on its way: Doris answers before closing).
  auto deadline = Clock::now() + (write_failed ? std::min<std::chrono::milliseconds>(cfg.timeouts.response,
                                                                                      std::chrono::seconds(2))
                                               : cfg.timeouts.response);
  bool timed_out = false;
  while (!st->reader_done) {
    if (st->cancelled_snapshot()) {
      conn->close();
      co_return cancelled_error();
    }
    if (Clock::now() >= deadline) {
      timed_out = !write_failed;
      conn->close();  // the reader completes with an error
      deadline = Clock::time_point::max();
    }
    st->event.expires_at(deadline);
    co_await st->event.async_wait(use_tuple);
  }
  conn->close();
  st->conn.reset();
  if (st->final_answer) co_return co_await conclude(*st->final_answer);

  error_code ec = write_failed ? write_ec : st->read_ec;
  quarantine(at, "stream load broke: " + ec.message());
  std::string what = timed_out ? "stream load: no answer within " + std::to_string(cfg.timeouts.response.count()) + " ms"
                               : "stream load: connection lost after " + std::to_string(st->body_bytes) +
                                     " body bytes: " + ec.message();
  co_return load_error(timed_out || ec == beast::error::timeout ? ErrorKind::Timeout : ErrorKind::Transport,
                       Disposition::Retry, std::move(what), spec, at.host_port());
}

awaitable<std::vector<std::string>> Core::fetch_error_log(std::string url, std::string& problem) {
  std::vector<std::string> lines;
  auto u = parse_url(url);
  if (!u) {
    problem = "bad ErrorURL";
    co_return lines;
  }
  Endpoint ep = rewrite(Endpoint{u->host, u->port, u->tls()});
  try {
    auto conn = co_await connect(ep);
    http::request<http::empty_body> req{http::verb::get, u->target, 11};
    set_common_headers(req, ep);
    req.keep_alive(false);
    conn->tcp().expires_after(cfg.timeouts.request);
    auto [wec, wn] = co_await conn->with([&](auto& s) { return http::async_write(s, req, use_tuple); });
    if (wec) throw TransportFailure(ep, wec, "send");
    // The log can be large: read only what the first lines need.
    http::response_parser<http::buffer_body> p;
    p.body_limit(boost::none);
    auto [hec, hn] = co_await conn->with([&](auto& s) { return http::async_read_header(s, conn->buf, p, use_tuple); });
    if (hec) throw TransportFailure(ep, hec, "receive");
    if (p.get().result_int() != 200) {
      problem = "HTTP " + std::to_string(p.get().result_int());
      conn->close();
      co_return lines;
    }
    std::string text;
    char tmp[8192];
    auto enough = [&] {
      return text.size() >= 64 * 1024 ||
             std::count(text.begin(), text.end(), '\n') >= static_cast<std::ptrdiff_t>(cfg.error_log_lines);
    };
    while (!p.is_done() && !enough()) {
      p.get().body().data = tmp;
      p.get().body().size = sizeof tmp;
      auto [ec, n] = co_await conn->with([&](auto& s) { return http::async_read(s, conn->buf, p, use_tuple); });
      if (ec == http::error::need_buffer) ec = {};
      if (ec) break;
      text.append(tmp, sizeof tmp - p.get().body().size);
    }
    conn->close();
    size_t pos = 0;
    while (pos < text.size() && static_cast<int>(lines.size()) < cfg.error_log_lines) {
      size_t nl = text.find('\n', pos);
      std::string line = text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (!line.empty()) lines.push_back(std::move(line));
      if (nl == std::string::npos) break;
      pos = nl + 1;
    }
  } catch (const TransportFailure& f) {
    problem = f.what();
  }
  co_return lines;
}

}  // namespace cdc2doris::doris::detail
