// The real DorisClient: Boost.Beast over Asio, C++20 coroutines.
//
// Threads: ClientConfig::io_threads threads run one io_context owned by Core.
// Every LoadStream runs as two coroutines (body writer, answer reader) on its
// own strand; 2PC/metadata calls are coroutines on the io_context (each uses
// its connection sequentially, so no strand is needed). The caller's threads
// only touch StreamState under its mutex and post wake-ups to the strand.
//
// Shutdown: ~ClientImpl -> Core::shutdown(): fail every open stream with
// Shutdown (waking blocked writers), stop the io_context, join the threads.
// Coroutine frames still suspended are destroyed with the io_context, which
// breaks their futures; the blocking wrappers turn that into Shutdown.
#include <openssl/evp.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/asio/write.hpp>
#include <set>
#include <spdlog/spdlog.h>

#include "core/doris/detail/core.hpp"

namespace cdc2doris::doris::detail {

namespace {

std::string base64(std::string_view in) {
  std::string out(4 * ((in.size() + 2) / 3) + 1, '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(in.data()), static_cast<int>(in.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

void validate(const ClientConfig& c) {
  if (c.fe_urls.empty()) throw std::invalid_argument("doris.fe_urls: at least one FE is required");
  if (c.user.empty()) throw std::invalid_argument("doris.user: required");
  if (c.buffer_bytes == 0) throw std::invalid_argument("doris.buffer_bytes: must be > 0");
  if (c.chunk_bytes == 0) throw std::invalid_argument("doris.chunk_bytes: must be > 0");
  if (c.io_threads < 1) throw std::invalid_argument("doris.io_threads: must be >= 1");
  if (c.retry.max_attempts < 1) throw std::invalid_argument("doris.retry.max_attempts: must be >= 1");
  if (c.gzip_level < 1 || c.gzip_level > 9) throw std::invalid_argument("doris.gzip_level: must be 1..9");
  if (c.route == Route::DirectBe)
    for (auto& b : c.backends)
      if (!split_host_port(b)) throw std::invalid_argument("doris.backends: not host:port: " + b);
}
}  // namespace

Core::Core(ClientConfig c) : cfg(std::move(c)), ioc(std::make_unique<net::io_context>(cfg.io_threads)) {
  validate(cfg);
  auth = "Basic " + base64(cfg.user + ":" + cfg.password);
  bool any_tls = false;
  for (auto& s : cfg.fe_urls) {
    auto u = parse_url(s);
    if (!u) throw std::invalid_argument("doris.fe_urls: not a URL: " + redact_url(s));
    fes.push_back(Endpoint{u->host, u->port, u->tls()});
    any_tls |= u->tls();
  }
  for (auto& b : cfg.backends) {
    auto hp = split_host_port(b);
    if (!hp) throw std::invalid_argument("doris.backends: not host:port: " + b);
    bes_.push_back(rewrite(Endpoint{hp->first, hp->second, false}));
  }
  // Built even without an https FE: a redirect or ErrorURL may still point
  // to https, and the context must not be created lazily from I/O threads.
  (void)any_tls;
  {
    tls_ctx.emplace(ssl::context::tls_client);
    tls_ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                         ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
    if (!cfg.tls.ca_file.empty())
      tls_ctx->load_verify_file(cfg.tls.ca_file);  // throws with the OpenSSL reason
    else
      tls_ctx->set_default_verify_paths();
    tls_ctx->set_verify_mode(cfg.tls.verify_peer ? ssl::verify_peer : ssl::verify_none);
  }
  backoff.base = cfg.retry.base_backoff;
  backoff.cap = cfg.retry.max_backoff;
}

Core::~Core() {
  shutdown();
  {
    std::lock_guard lk(pool_m_);
    pool_.clear();
  }
  // Destroys the frames of coroutines that never completed while every other
  // member is still alive.
  ioc.reset();
}

void Core::start() {
  work_.emplace(ioc->get_executor());
  for (int i = 0; i < cfg.io_threads; ++i) threads_.emplace_back([this] { ioc->run(); });
}

void Core::shutdown() {
  if (stopping.exchange(true)) return;
  std::vector<std::shared_ptr<StreamState>> live;
  {
    std::lock_guard lk(streams_m_);
    for (auto& w : streams_)
      if (auto s = w.lock()) live.push_back(std::move(s));
    streams_.clear();
  }
  for (auto& s : live) s->abandon(DorisError(ErrorKind::Shutdown, Disposition::Fail, "doris client shut down"), s);
  work_.reset();
  ioc->stop();
  for (auto& t : threads_)
    if (t.joinable()) t.join();
  threads_.clear();
}

void Core::register_stream(const std::shared_ptr<StreamState>& s) {
  std::lock_guard lk(streams_m_);
  // Drop expired entries now and then so the registry does not grow with
  // every epoch's loads.
  if (streams_.size() > 64 && streams_.size() % 64 == 0)
    std::erase_if(streams_, [](auto& w) { return w.expired(); });
  streams_.push_back(s);
}

// ------------------------------------------------------------ 2PC

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
    Answer a;
    try {
      a = co_await send(fe, std::move(req));
    } catch (const TransportFailure& f) {
      quarantine(f.ep, f.what());
      last = transport_error(f, cc, std::string(to_string(op)) + " failed");
      continue;
    }
    cc.endpoint = a.from.host_port();
    auto c = classify(a.status, a.body, cc);
    switch (c.verdict) {
      case Verdict::Success: co_return TxnOutcome::Done;
      case Verdict::AlreadyDone: co_return TxnOutcome::AlreadyDone;
      case Verdict::NotFoundOrAborted: co_return TxnOutcome::NotFoundOrAborted;
      case Verdict::Redirect:
        last = DorisError(ErrorKind::ServerError, Disposition::Retry,
                          std::string(to_string(op)) + " failed: redirect not followable", ErrorContext{});
        continue;
      default: break;
    }
    if (!c.error) c.error.emplace(ErrorKind::ServerError, Disposition::Retry, "unexpected answer");
    if (c.error->disposition() != Disposition::Retry) co_return std::move(*c.error);
    if (a.status >= 500) quarantine(a.from, "HTTP " + std::to_string(a.status));
    last = std::move(c.error);
  }
  if (!last) last.emplace(ErrorKind::Shutdown, Disposition::Fail, "doris client shut down");
  co_return std::move(*last);
}

// ------------------------------------------------------------ loads

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

awaitable<std::variant<LoadResult, DorisError>> Core::do_load(std::shared_ptr<StreamState> st) {
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
  auto conclude = [&](const Answer& a) -> awaitable<std::variant<LoadResult, DorisError>> {
    cc.endpoint = a.from.host_port();
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
  std::shared_ptr<Conn> conn;
  std::optional<DorisError> last;
  for (int attempt = 0;; ++attempt) {
    if (st->cancelled_snapshot() || stopping) co_return cancelled_error();
    if (attempt) co_await sleep(backoff.delay(attempt - 1));
    std::pair<std::shared_ptr<Conn>, std::optional<Answer>> opened;
    try {
      opened = co_await open_once(*st);
    } catch (const TransportFailure& f) {
      st->conn.reset();
      quarantine(f.ep, f.what());
      last = transport_error(f, cc, "stream load: opening failed");
      if (attempt + 1 < cfg.retry.max_attempts) continue;
      co_return std::move(*last);
    }
    if (opened.first) {
      conn = std::move(opened.first);
      break;
    }
    if (!opened.second) co_return cancelled_error();
    Answer& a = *opened.second;
    if (a.from.host.empty()) {  // DirectBe without any known BE
      last = load_error(ErrorKind::NoBackend, Disposition::Retry, "stream load: no backend known", spec, "");
      if (attempt + 1 < cfg.retry.max_attempts) continue;
      co_return std::move(*last);
    }
    cc.endpoint = a.from.host_port();
    auto c = classify(a.status, a.body, cc);
    const bool retry_here = c.error && c.error->disposition() == Disposition::Retry &&
                            (c.error->kind() == ErrorKind::NoBackend || a.status >= 500);
    if (retry_here && attempt + 1 < cfg.retry.max_attempts) {
      if (a.status >= 500) quarantine(a.from, "HTTP " + std::to_string(a.status));
      continue;
    }
    co_return co_await conclude(a);
  }

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

// ------------------------------------------------------------ probe, metadata

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
    Answer a;
    try {
      a = co_await send(target, std::move(req));  // empty body, Content-Length: 0
    } catch (const TransportFailure& f) {
      quarantine(f.ep, f.what());
      last = transport_error(f, cc, "label probe failed");
      continue;
    }
    cc.endpoint = a.from.host_port();
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
    if (!c.error) c.error.emplace(ErrorKind::ServerError, Disposition::Retry, "label probe: unexpected answer");
    if (c.error->disposition() != Disposition::Retry) co_return std::move(*c.error);
    last = std::move(c.error);
  }
  if (!last) last.emplace(ErrorKind::Shutdown, Disposition::Fail, "doris client shut down");
  co_return std::move(*last);
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
    Answer a;
    try {
      a = co_await send(fe, std::move(req));
    } catch (const TransportFailure& f) {
      quarantine(f.ep, f.what());
      last = transport_error(f, cc, "metadata request failed");
      continue;
    }
    cc.endpoint = a.from.host_port();
    auto c = classify(a.status, a.body, cc);
    if (c.verdict == Verdict::Success) {
      boost::system::error_code ec;
      auto v = json::parse(a.body, ec);
      if (!ec) co_return std::move(v);
      c.error.emplace(ErrorKind::ServerError, Disposition::Retry, "metadata request: unparsable answer");
    }
    if (!c.error) c.error.emplace(ErrorKind::ServerError, Disposition::Retry, "metadata request: unexpected answer");
    if (c.error->disposition() != Disposition::Retry) co_return std::move(*c.error);
    if (a.status >= 500) quarantine(a.from, "HTTP " + std::to_string(a.status));
    last = std::move(c.error);
  }
  if (!last) last.emplace(ErrorKind::Shutdown, Disposition::Fail, "doris client shut down");
  co_return std::move(*last);
}

// ============================================================ LoadStreamImpl

namespace {

class LoadStreamImpl final : public LoadStream {
 public:
  LoadStreamImpl(std::shared_ptr<Core> core, LoadSpec spec) : core_(std::move(core)) {
    size_t cap = core_->cfg.buffer_bytes;
    chunk_ = std::min(core_->cfg.chunk_bytes, cap);
    st_ = std::make_shared<StreamState>(std::move(spec), net::make_strand(*core_->ioc), cap, chunk_);
    if (st_->spec.gzip.value_or(core_->cfg.gzip)) gzip_ = true;
    core_->register_stream(st_);
    if (core_->stopping)
      st_->abandon(DorisError(ErrorKind::Shutdown, Disposition::Fail, "doris client shut down"), st_);
  }
  ~LoadStreamImpl() override {
    bool over;
    {
      std::lock_guard lk(st_->m);
      over = st_->done;
    }
    if (started_ && !over) cancel();
  }

  std::optional<DorisError> write(std::string_view rows) override {
    if (finished_) return stream_error("write after finish");
    if (auto e = current_error()) return e;
    start();
    raw_bytes_ += rows.size();
    if (gzip_) {
      if (!gz_) gz_ = std::make_unique<GzipEncoder>(core_->cfg.gzip_level);
      gz_->write(rows, cur_);
      while (cur_.size() >= chunk_) {
        // Compressed output arrives in bursts; queue it chunk by chunk.
        std::string rest = cur_.substr(chunk_);
        cur_.resize(chunk_);
        if (auto e = push()) return e;
        cur_ = std::move(rest);
      }
    } else {
      while (!rows.empty()) {
        size_t n = std::min(rows.size(), chunk_ - cur_.size());
        cur_.append(rows.data(), n);
        rows.remove_prefix(n);
        if (cur_.size() >= chunk_)
          if (auto e = push()) return e;
      }
    }
    st_->pending_bytes.store(cur_.size(), std::memory_order_relaxed);
    return std::nullopt;
  }

  std::optional<DorisError> write_from(std::string& rows) override {
    // A caller's chunk's worth of rows with nothing of ours pending becomes
    // the chunk itself. A chunk is then up to twice chunk_ bytes: push()
    // waits for room for it, so the buffer cap holds as for write().
    if (gzip_ || finished_ || !cur_.empty() || rows.size() < chunk_ || rows.size() > 2 * chunk_)
      return LoadStream::write_from(rows);
    if (auto e = current_error()) {
      rows.clear();
      return e;
    }
    start();
    raw_bytes_ += rows.size();
    cur_.swap(rows);  // `rows` gets cur_'s buffer: empty, maybe a recycled one
    auto err = push();
    st_->pending_bytes.store(cur_.size(), std::memory_order_relaxed);
    return err;
  }

  std::variant<LoadResult, DorisError> finish() override {
    if (finished_) return stream_error("finish called twice");
    finished_ = true;
    if (auto e = current_error()) return std::move(*e);
    start();
    if (gz_) gz_->finish(cur_);
    gz_.reset();  // ~256 KiB of zlib state, not needed any more
    while (!cur_.empty()) {
      std::string rest = cur_.size() > chunk_ ? cur_.substr(chunk_) : std::string();
      if (cur_.size() > chunk_) cur_.resize(chunk_);
      if (auto e = push()) return std::move(*e);
      cur_ = std::move(rest);
    }
    st_->pending_bytes.store(0, std::memory_order_relaxed);
    std::unique_lock lk(st_->m);
    st_->finishing = true;
    st_->wake_io_locked(st_);
    st_->cv.wait(lk, [&] { return st_->done; });
    if (st_->error) return *st_->error;
    LoadResult r = *st_->result;
    r.raw_bytes = raw_bytes_;
    return r;
  }

  void cancel() override {
    st_->abandon(load_error(ErrorKind::Cancelled, Disposition::Fail, "stream load cancelled", st_->spec, ""), st_);
  }

  size_t buffered_bytes() const override {
    return st_->queued_bytes.load(std::memory_order_relaxed) + st_->pending_bytes.load(std::memory_order_relaxed);
  }
  const LoadSpec& spec() const override { return st_->spec; }

 private:
  DorisError stream_error(const char* what) {
    return load_error(ErrorKind::BadRequest, Disposition::Fatal, std::string("stream load: ") + what, st_->spec, "");
  }
  std::optional<DorisError> current_error() {
    if (!st_->over.load(std::memory_order_acquire)) return std::nullopt;
    std::lock_guard lk(st_->m);
    if (st_->done && st_->error) return st_->error;
    return std::nullopt;
  }
  void start() {
    if (started_) return;
    started_ = true;
    if (core_->stopping) return;  // abandoned with Shutdown already
    // The frame gets a raw Core*: a shared_ptr in a suspended frame would keep
    // Core (and the io_context that owns the frame) alive forever if the
    // client is destroyed mid-load. Frames only run on I/O threads, which
    // Core::shutdown() joins before Core can be destroyed.
    net::co_spawn(st_->strand, run(core_.get(), st_), net::detached);
  }
  static awaitable<void> run(Core* core, std::shared_ptr<StreamState> st) {
    std::variant<LoadResult, DorisError> out =
        load_error(ErrorKind::ServerError, Disposition::Retry, "stream load: internal error", st->spec, "");
    try {
      out = co_await core->do_load(st);
    } catch (const std::exception& e) {
      out = load_error(ErrorKind::ServerError, Disposition::Retry, std::string("stream load: ") + e.what(), st->spec,
                       "");
    }
    {
      std::lock_guard lk(st->m);
      if (!st->done) {
        st->done = true;
        st->over = true;
        if (auto* r = std::get_if<LoadResult>(&out))
          st->result = std::move(*r);
        else
          st->error = std::move(std::get<DorisError>(out));
      }
      st->queue.clear();
      st->spare.clear();
      st->queued = 0;
      st->queued_bytes = 0;
    }
    st->cv.notify_all();
    st->conn.reset();
  }
  // Queues cur_, blocking while the buffer is full (backpressure).
  std::optional<DorisError> push() {
    std::unique_lock lk(st_->m);
    // Room for the chunk being queued AND the next one being filled: the
    // stream's memory (queued + in flight + pending) stays within cap.
    st_->cv.wait(lk, [&] {
      return st_->done || st_->queued == 0 || st_->queued + cur_.size() + chunk_ <= st_->cap;
    });
    if (st_->done) {
      cur_.clear();
      st_->pending_bytes.store(0, std::memory_order_relaxed);
      if (st_->error) return st_->error;
      return stream_error("stream already finished");
    }
    st_->queued += cur_.size();
    st_->queued_bytes.store(st_->queued, std::memory_order_relaxed);
    st_->queue.push_back(std::move(cur_));
    cur_ = std::string();
    if (!st_->spare.empty()) {
      cur_ = std::move(st_->spare.back());
      st_->spare.pop_back();
    }
    st_->wake_io_locked(st_);
    return std::nullopt;
  }

  std::shared_ptr<Core> core_;
  std::shared_ptr<StreamState> st_;
  size_t chunk_;
  std::string cur_;
  bool gzip_ = false;
  std::unique_ptr<GzipEncoder> gz_;
  bool started_ = false;
  bool finished_ = false;
  uint64_t raw_bytes_ = 0;
};

// ============================================================ ClientImpl

template <class T>
T run_blocking(Core& core, awaitable<T> op, const std::string& db) {
  if (core.ioc->get_executor().running_in_this_thread())
    throw std::logic_error("doris client: blocking call from an I/O thread would deadlock");
  if (core.stopping) return DorisError(ErrorKind::Shutdown, Disposition::Fail, "doris client shut down");
  try {
    return net::co_spawn(*core.ioc, std::move(op), net::use_future).get();
  } catch (const std::future_error&) {
    ErrorContext ctx;
    ctx.table = db;
    return DorisError(ErrorKind::Shutdown, Disposition::Fail, "doris client shut down", std::move(ctx));
  } catch (const std::exception& e) {
    ErrorContext ctx;
    ctx.table = db;
    return DorisError(ErrorKind::ServerError, Disposition::Retry, std::string("doris client: ") + e.what(),
                      std::move(ctx));
  }
}

class ClientImpl final : public DorisClient {
 public:
  explicit ClientImpl(std::shared_ptr<Core> core) : core_(std::move(core)) {}
  ~ClientImpl() override { core_->shutdown(); }

  std::unique_ptr<LoadStream> open_load(LoadSpec spec) override {
    return std::make_unique<LoadStreamImpl>(core_, std::move(spec));
  }
  std::future<TxnResult> commit_async(const std::string& db, int64_t txn_id) override {
    return spawn_txn(Operation::Commit, db, txn_id, "");
  }
  std::future<TxnResult> abort_async(const std::string& db, int64_t txn_id) override {
    return spawn_txn(Operation::Abort, db, txn_id, "");
  }
  std::future<TxnResult> commit_by_label_async(const std::string& db, const std::string& label) override {
    return spawn_txn(Operation::Commit, db, std::nullopt, label);
  }
  std::future<TxnResult> abort_by_label_async(const std::string& db, const std::string& label) override {
    return spawn_txn(Operation::Abort, db, std::nullopt, label);
  }

  std::variant<LabelState, DorisError> probe_label(const LoadSpec& spec) override {
    return run_blocking(*core_, probe_entry(core_.get(), spec), spec.db);
  }

  std::variant<TableSchema, DorisError> schema(const std::string& db, const std::string& table) override {
    ClassifyContext cc;
    cc.db = db;
    cc.table = table;
    auto r = run_blocking(*core_, json_entry(core_.get(), http::verb::get, "/api/" + db + "/" + table + "/_schema", "", cc),
                          db);
    if (auto* e = std::get_if<DorisError>(&r)) return std::move(*e);
    TableSchema out;
    try {
      auto& data = std::get<json::value>(r).at("data").as_object();
      if (auto* k = data.if_contains("keysType"); k && k->is_string()) out.keys_type = std::string(k->get_string());
      for (auto& p : data.at("properties").as_array()) {
        auto& o = p.as_object();
        ColumnSchema c;
        auto s = [&](const char* key) {
          auto* v = o.if_contains(key);
          return v && v->is_string() ? std::string(v->get_string()) : std::string();
        };
        c.name = s("name");
        c.type = s("type");
        c.aggregation_type = s("aggregation_type");
        c.comment = s("comment");
        if (auto v = s("precision"); !v.empty()) c.precision = std::atoi(v.c_str());
        if (auto v = s("scale"); !v.empty()) c.scale = std::atoi(v.c_str());
        out.columns.push_back(std::move(c));
      }
    } catch (const std::exception& e) {
      ErrorContext ctx;
      ctx.table = db + "." + table;
      return DorisError(ErrorKind::ServerError, Disposition::Retry, std::string("schema: malformed answer: ") + e.what(),
                        std::move(ctx));
    }
    return out;
  }

  std::optional<DorisError> health() override {
    ClassifyContext cc;
    auto r = run_blocking(*core_, json_entry(core_.get(), http::verb::get, "/api/health", "", cc), "");
    if (auto* e = std::get_if<DorisError>(&r)) return std::move(*e);
    return std::nullopt;
  }

  std::variant<SqlResult, DorisError> sql(const std::string& db, const std::string& stmt) override {
    ClassifyContext cc;
    cc.db = db;
    json::object body{{"stmt", stmt}};
    auto r = run_blocking(
        *core_, json_entry(core_.get(), http::verb::post, "/api/query/default_cluster/" + db, json::serialize(body), cc), db);
    if (auto* e = std::get_if<DorisError>(&r)) return std::move(*e);
    SqlResult out;
    try {
      auto& data = std::get<json::value>(r).at("data").as_object();
      if (auto* meta = data.if_contains("meta"); meta && meta->is_array())
        for (auto& m : meta->as_array())
          if (auto* n = m.as_object().if_contains("name"); n && n->is_string())
            out.columns.emplace_back(n->get_string());
      if (auto* rows = data.if_contains("data"); rows && rows->is_array())
        for (auto& row : rows->as_array()) {
          std::vector<std::optional<std::string>> cells;
          for (auto& cell : row.as_array()) {
            if (cell.is_null())
              cells.emplace_back(std::nullopt);
            else if (cell.is_string())
              cells.emplace_back(std::string(cell.get_string()));
            else
              cells.emplace_back(json::serialize(cell));
          }
          out.rows.push_back(std::move(cells));
        }
    } catch (const std::exception& e) {
      ErrorContext ctx;
      ctx.table = db;
      return DorisError(ErrorKind::ServerError, Disposition::Retry, std::string("sql: malformed answer: ") + e.what(),
                        std::move(ctx));
    }
    return out;
  }

 private:
  // Raw Core*: see LoadStreamImpl::start().
  static awaitable<TxnResult> txn_entry(Core* core, Operation op, std::string db,
                                        std::optional<int64_t> txn_id, std::string label) {
    try {
      co_return co_await core->txn_op(op, std::move(db), txn_id, std::move(label));
    } catch (const std::exception& e) {
      co_return DorisError(ErrorKind::ServerError, Disposition::Retry, std::string("2pc: ") + e.what());
    }
  }
  static awaitable<std::variant<LabelState, DorisError>> probe_entry(Core* core, LoadSpec spec) {
    co_return co_await core->probe(std::move(spec));
  }
  static awaitable<std::variant<json::value, DorisError>> json_entry(Core* core, http::verb verb,
                                                                     std::string target, std::string body,
                                                                     ClassifyContext cc) {
    co_return co_await core->fe_json(verb, std::move(target), std::move(body), std::move(cc));
  }

  std::future<TxnResult> spawn_txn(Operation op, const std::string& db, std::optional<int64_t> txn_id,
                                   const std::string& label) {
    if (core_->stopping) {
      std::promise<TxnResult> p;
      p.set_value(DorisError(ErrorKind::Shutdown, Disposition::Fail, "doris client shut down"));
      return p.get_future();
    }
    return net::co_spawn(*core_->ioc, txn_entry(core_.get(), op, db, txn_id, label), net::use_future);
  }

  std::shared_ptr<Core> core_;
};

}  // namespace

}  // namespace cdc2doris::doris::detail

namespace cdc2doris::doris {

std::unique_ptr<DorisClient> make_client(const ClientConfig& config) {
  auto core = std::make_shared<detail::Core>(config);
  core->start();
  return std::make_unique<detail::ClientImpl>(std::move(core));
}

}  // namespace cdc2doris::doris
