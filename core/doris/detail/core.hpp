#pragma once
// Private to core/doris: what the parts of the Beast DorisClient share.
// Core's methods are defined by concern: beast_client.cpp (construction,
// shutdown, the blocking DorisClient facade), endpoints.cpp (FE/BE choice,
// quarantine, backend discovery), transport.cpp (connections, the pool, one
// request/answer exchange, redirects), stream_load_io.cpp (one chunked Stream
// Load: headers, 100-continue, body, answer, error log), txn_ops.cpp (2PC,
// label probe, FE JSON calls); load_writer.cpp is the caller-facing
// LoadStream that feeds a StreamState.
#include <openssl/ssl.h>

#include <atomic>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/json.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <variant>
#include <vector>

#include "core/common/retry_async.hpp"
#include "core/doris/classify.hpp"
#include "core/doris/client.hpp"
#include "core/doris/gzip.hpp"
#include "core/doris/url.hpp"

namespace cdc2doris::doris::detail {

namespace net = boost::asio;
namespace ssl = boost::asio::ssl;
namespace beast = boost::beast;
namespace http = boost::beast::http;
namespace json = boost::json;
using tcp = net::ip::tcp;
using Clock = std::chrono::steady_clock;
using boost::system::error_code;
using net::awaitable;

inline constexpr auto use_tuple = net::as_tuple(net::use_awaitable);
inline constexpr size_t kAnswerLimit = 8 << 20;

struct Endpoint {
  std::string host;
  uint16_t port = 0;
  bool tls = false;
  std::string host_port() const {
    Url u;
    u.host = host;
    u.port = port;
    return u.host_port();
  }
  std::string key() const { return (tls ? "https://" : "http://") + host_port(); }
};

// A transport-level failure, carrying the endpoint so the caller can
// quarantine it. Thrown only inside coroutines and caught before any
// completion handler boundary.
struct TransportFailure : std::runtime_error {
  TransportFailure(Endpoint e, error_code c, const char* phase)
      : std::runtime_error(std::string(phase) + " " + e.host_port() + ": " + c.message()), ep(std::move(e)), ec(c) {}
  Endpoint ep;
  error_code ec;
  std::string detail;  // TLS: the certificate check that failed and the CA file used
  bool timeout() const { return ec == beast::error::timeout; }
};

struct Answer {
  int status = 0;
  std::string body;
  std::string location;
  Endpoint from;
  bool keep_alive = false;
};

inline bool is_redirect(int s) { return s == 301 || s == 302 || s == 303 || s == 307 || s == 308; }

inline std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

template <class Body>
Answer make_answer(http::response<Body>& res, const Endpoint& from) {
  Answer a;
  a.status = static_cast<int>(res.result_int());
  a.body = std::move(res.body());
  if (auto it = res.find(http::field::location); it != res.end()) a.location = std::string(it->value());
  if (auto it = res.find(http::field::content_encoding); it != res.end() && lower(it->value()) == "gzip") {
    if (auto plain = gunzip(a.body)) a.body = std::move(*plain);
  }
  a.keep_alive = res.keep_alive();
  a.from = from;
  return a;
}

// One HTTP connection, plain or TLS.
class Conn {
 public:
  Conn(net::any_io_executor ex, ssl::context* ctx, Endpoint ep) : ep(std::move(ep)) {
    if (ctx)
      tls_.emplace(ex, *ctx);
    else
      plain_.emplace(ex);
  }
  beast::tcp_stream& tcp() { return tls_ ? beast::get_lowest_layer(*tls_) : *plain_; }
  bool is_tls() const { return tls_.has_value(); }
  ssl::stream<beast::tcp_stream>& tls() { return *tls_; }
  // f(stream) -> awaitable<T>; both instantiations yield the same type.
  template <class F>
  auto with(F&& f) {
    if (tls_) return f(*tls_);
    return f(*plain_);
  }
  void close() {
    error_code ec;
    tcp().socket().shutdown(tcp::socket::shutdown_both, ec);
    tcp().close();
  }

  Endpoint ep;
  beast::flat_buffer buf;
  Clock::time_point idle_since{};

 private:
  std::optional<beast::tcp_stream> plain_;
  std::optional<ssl::stream<beast::tcp_stream>> tls_;
};

// Shared between a LoadStreamImpl (caller's thread) and its coroutines.
struct StreamState {
  StreamState(LoadSpec s, net::strand<net::io_context::executor_type> str, size_t capacity, size_t chunk)
      : spec(std::move(s)), strand(str), event(str), cap(capacity), chunk(chunk) {}

  const LoadSpec spec;
  net::strand<net::io_context::executor_type> strand;

  // ---- guarded by m
  std::mutex m;
  std::condition_variable cv;
  std::deque<std::string> queue;
  size_t queued = 0;
  std::vector<std::string> spare;  // recycled chunk buffers (at most 2)
  bool finishing = false;
  bool io_waiting = false;
  bool done = false;
  bool cancelled = false;
  std::optional<DorisError> error;
  std::optional<LoadResult> result;

  // ---- atomics, readable anywhere
  std::atomic<bool> over{false};  // mirrors `done`: lets write() skip the mutex per row
  std::atomic<size_t> queued_bytes{0};
  std::atomic<size_t> pending_bytes{0};  // writer's current, unqueued chunk

  // ---- strand only
  net::steady_timer event;  // cancel() = wake the I/O coroutine
  std::shared_ptr<Conn> conn;
  bool reader_done = false;
  std::optional<Answer> final_answer;
  error_code read_ec;
  uint64_t body_bytes = 0;

  const size_t cap;
  const size_t chunk;

  bool cancelled_snapshot() {
    std::lock_guard lk(m);
    return cancelled;
  }
  // Caller side, `lk` holding m: wakes the I/O coroutine if it sleeps, and
  // releases m either way. The post comes after the release: posting under m
  // made the I/O thread, woken by the post's reactor interrupt, block on m
  // until the caller let go (one futex wait, wake and preemption of the
  // caller per chunk; perf sched, issue 18).
  static void wake_io_and_unlock(std::unique_lock<std::mutex>& lk, const std::shared_ptr<StreamState>& self) {
    const bool wake = std::exchange(self->io_waiting, false);
    lk.unlock();
    if (wake) net::post(self->strand, [self] { self->event.cancel(); });
  }
  // Called by the caller on cancel/shutdown: the stream is over for the caller.
  void abandon(DorisError e, const std::shared_ptr<StreamState>& self) {
    {
      std::lock_guard lk(m);
      cancelled = true;
      if (!done) {
        done = true;
        over = true;
        error = std::move(e);
      }
      queue.clear();
      queued = 0;
      queued_bytes = 0;
    }
    cv.notify_all();
    net::post(strand, [self] {
      if (self->conn) self->conn->close();
      self->event.cancel();
    });
  }
};

// ============================================================ Core

class Core : public std::enable_shared_from_this<Core> {
 public:
  explicit Core(ClientConfig c);
  ~Core();
  void start();
  void shutdown();

  ClientConfig cfg;
  std::string auth;  // "Basic ..." (never logged)
  std::vector<Endpoint> fes;
  std::unique_ptr<net::io_context> ioc;
  std::optional<ssl::context> tls_ctx;
  std::atomic<bool> stopping{false};

  // ---- endpoints
  Endpoint pick_fe();
  awaitable<std::optional<Endpoint>> pick_be();
  void quarantine(const Endpoint& e, const std::string& why);
  void healthy(const Endpoint& e);
  bool is_quarantined(const Endpoint& e);
  awaitable<bool> refresh_backends();
  Endpoint rewrite(Endpoint e) const {
    rewrite_address(cfg.address_rewrite, e.host, e.port);
    return e;
  }

  // ---- transport
  awaitable<std::shared_ptr<Conn>> connect(Endpoint ep);
  awaitable<Answer> roundtrip(Endpoint ep, http::request<http::string_body> req);
  awaitable<Answer> send(Endpoint ep, http::request<http::string_body> req);
  awaitable<void> sleep(std::chrono::milliseconds d);
  void register_stream(const std::shared_ptr<StreamState>& s);

  // ---- operations
  awaitable<TxnResult> txn_op(Operation op, std::string db, std::optional<int64_t> txn_id, std::string label);
  awaitable<DorisResult<LoadResult>> do_load(std::shared_ptr<StreamState> st);
  awaitable<DorisResult<LabelState>> probe(LoadSpec spec);
  awaitable<DorisResult<json::value>> fe_json(http::verb verb, std::string target, std::string body,
                                                           ClassifyContext cc);
  awaitable<std::vector<std::string>> fetch_error_log(std::string url, std::string& problem);

  void set_common_headers(http::fields& f, const Endpoint& ep) const;
  void set_load_headers(http::fields& f, const LoadSpec& s, bool gzip) const;
  DorisError transport_error(const TransportFailure& f, const ClassifyContext& cc, const std::string& what) const;
  // attempt(n) -> awaitable<R>, retried under cfg.retry until it succeeds,
  // fails beyond Retry, runs out of attempts or the client stops.
  template <class Attempt>
  auto retry(Attempt attempt) {
    return retry([this] { return stopping.load(); }, std::move(attempt));
  }
  // The same, stopping once stopped() says so.
  template <class Stopped, class Attempt>
  auto retry(Stopped stopped, Attempt attempt) {
    return retry_async(
        cfg.retry, std::move(stopped), [this](std::chrono::milliseconds d) { return sleep(d); }, std::move(attempt));
  }
  // One attempt's exchange: the answer, or the transport failure's error
  // with the endpoint quarantined.
  awaitable<DorisResult<Answer>> send_attempt(Endpoint ep, http::request<http::string_body> req,
                                                           const ClassifyContext& cc, std::string what);
  // The error of an attempt whose answer was no success (a 5xx sender quarantined).
  DorisError failed_attempt(Classification c, const Answer& a, std::string_view what);
  // The client stopped before the first attempt.
  static DorisError shut_down();

 private:
  std::optional<net::executor_work_guard<net::io_context::executor_type>> work_;
  std::vector<std::thread> threads_;

  std::mutex health_m_;
  std::map<std::string, Clock::time_point> quarantine_;
  std::atomic<size_t> fe_cur_{0};
  std::atomic<size_t> be_rr_{0};

  std::mutex be_m_;
  std::vector<Endpoint> bes_;
  Clock::time_point bes_at_{};

  std::mutex pool_m_;
  std::map<std::string, std::vector<std::shared_ptr<Conn>>> pool_;

  std::mutex streams_m_;
  std::vector<std::weak_ptr<StreamState>> streams_;

  awaitable<std::shared_ptr<Conn>> acquire(const Endpoint& ep, bool& reused);
  void release(std::shared_ptr<Conn> c);
  awaitable<std::pair<std::shared_ptr<Conn>, std::optional<Answer>>> open_once(StreamState& st);
};

// The error of a Stream Load or label probe: names spec's table and label.
DorisError load_error(ErrorKind k, Disposition d, std::string msg, const LoadSpec& s, const std::string& endpoint);

// The LoadStream of DorisClient::open_load (load_writer.cpp).
std::unique_ptr<LoadStream> open_load_stream(std::shared_ptr<Core> core, LoadSpec spec);

}  // namespace cdc2doris::doris::detail
