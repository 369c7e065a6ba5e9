// `cdc2doris status [--config FILE | --admin HOST:PORT]`: the running
// daemon's /status JSON as a terminal page — readiness and its reasons, the
// epochs, and per table and partition the lag, freshness, last commit and
// errors. Exit 0 when ready, 1 when not ready or not reachable, 2 on usage.
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/json.hpp>
#include <openssl/x509_vfy.h>

#include <cstdio>
#include <fstream>
#include <ctime>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "daemon/commands.hpp"
#include "daemon/exit_codes.hpp"

namespace cdc2doris::daemon {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace json = boost::json;

struct Target {
  std::string address;
  std::string token;  // admin.token, or --token-file's content; empty: none sent
  std::string tls_cert_file;  // admin.tls.cert_file of --config: HTTPS, trusting that certificate
};

// The address to ask (a wildcard listen address is reached over loopback)
// and the token to present.
Target admin_target(const Args& a) {
  Target t;
  if (a.has("token-file")) {
    std::ifstream in(a.get("token-file"));
    if (!in) throw std::invalid_argument("--token-file: cannot read '" + a.get("token-file") + "'");
    std::getline(in, t.token);
    while (!t.token.empty() && t.token.back() == '\r') t.token.pop_back();
  }
  if (a.has("admin")) {
    t.address = a.get("admin");
    return t;
  }
  config::Config cfg = load_config_or_exit(a);
  if (t.token.empty()) t.token = cfg.admin_token;
  t.tls_cert_file = cfg.admin_tls_cert_file;
  std::string addr = cfg.admin_listen;
  auto colon = addr.rfind(':');
  std::string host = addr.substr(0, colon);
  if (host == "0.0.0.0" || host.empty()) host = "127.0.0.1";
  if (host == "[::]" || host == "::") host = "[::1]";
  t.address = host + addr.substr(colon);
  return t;
}

template <class Stream>
http::response<http::string_body> get_status(Stream& stream, const Target& target) {
  http::request<http::empty_body> req(http::verb::get, "/status", 11);
  req.set(http::field::host, target.address);
  if (!target.token.empty()) req.set(http::field::authorization, "Bearer " + target.token);
  req.keep_alive(false);
  http::write(stream, req);
  beast::flat_buffer buf;
  http::response<http::string_body> res;
  http::read(stream, buf, res);
  return res;
}

std::string fetch_status(const Target& target) {
  const std::string& address = target.address;
  asio::io_context ioc;
  asio::ip::tcp::resolver resolver(ioc);
  beast::tcp_stream tcp(ioc);
  const auto colon = address.rfind(':');
  if (colon == std::string::npos) throw std::invalid_argument("--admin: expected HOST:PORT, got '" + address + "'");
  std::string host = address.substr(0, colon);
  if (host.size() > 1 && host.front() == '[') host = host.substr(1, host.size() - 2);
  tcp.expires_after(std::chrono::seconds(10));
  tcp.connect(resolver.resolve(host, address.substr(colon + 1)));
  http::response<http::string_body> res;
  if (target.tls_cert_file.empty()) {
    res = get_status(tcp, target);
  } else {
    // The daemon of this config: trust exactly its certificate (the leaf as
    // a trust anchor), whatever CA issued it and whatever name it carries.
    asio::ssl::context ctx(asio::ssl::context::tls_client);
    ctx.load_verify_file(target.tls_cert_file);
    X509_STORE_set_flags(SSL_CTX_get_cert_store(ctx.native_handle()), X509_V_FLAG_PARTIAL_CHAIN);
    ctx.set_verify_mode(asio::ssl::verify_peer);
    beast::ssl_stream<beast::tcp_stream> tls(std::move(tcp), ctx);
    tls.handshake(asio::ssl::stream_base::client);
    res = get_status(tls, target);
  }
  if (res.result() == http::status::unauthorized)
    throw std::runtime_error(std::string("GET /status answered 401: the daemon has admin.token set; ") +
                             (target.token.empty() ? "pass --config FILE or --token-file FILE"
                                                   : "the token presented is not admin.token"));
  if (res.result() != http::status::ok)
    throw std::runtime_error("GET /status answered " + std::to_string(res.result_int()));
  return res.body();
}

int64_t num(const json::object& o, const char* key, int64_t fallback = -1) {
  auto* v = o.if_contains(key);
  if (v == nullptr) return fallback;
  if (v->is_int64()) return v->as_int64();
  if (v->is_uint64()) return static_cast<int64_t>(v->as_uint64());
  if (v->is_double()) return static_cast<int64_t>(v->as_double());
  return fallback;
}

std::string str(const json::object& o, const char* key) {
  auto* v = o.if_contains(key);
  return v != nullptr && v->is_string() ? std::string(v->as_string()) : std::string();
}

// "12s ago", "3m ago", "2h ago", or "-" for never.
std::string ago(int64_t unix_ms, int64_t now_ms) {
  if (unix_ms <= 0) return "-";
  const int64_t s = std::max<int64_t>(0, (now_ms - unix_ms) / 1000);
  if (s < 120) return std::to_string(s) + "s ago";
  if (s < 7200) return std::to_string(s / 60) + "m ago";
  return std::to_string(s / 3600) + "h ago";
}

std::string duration(double seconds) {
  if (seconds < 0) return "-";
  const auto s = static_cast<int64_t>(seconds);
  if (s < 120) return std::to_string(s) + "s";
  if (s < 7200) return std::to_string(s / 60) + "m";
  return std::to_string(s / 3600) + "h";
}

std::string clock_time(int64_t unix_ms) {
  std::time_t t = static_cast<std::time_t>(unix_ms / 1000);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%H:%M:%S", &tm);
  return buf;
}

std::string one_line(std::string s, size_t max) {
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  if (s.size() > max) s = s.substr(0, max - 3) + "...";
  return s;
}

void print(const json::object& st, const std::string& address, std::ostream& out) {
  const int64_t now = num(st, "now_unix_ms", 0);
  const bool ready = st.at("ready").as_bool();
  out << "cdc2doris at " << address << ": " << (ready ? "READY" : "NOT READY");
  if (auto* a = st.if_contains("alive"); a && a->is_bool() && !a->as_bool()) out << ", NOT ALIVE";
  out << "\n";
  if (!ready) out << "  why: " << str(st, "not_ready_because") << "\n";
  if (auto* why = st.if_contains("not_alive_because")) out << "  pipeline: " << why->as_string().c_str() << "\n";
  out << "phase " << str(st, "phase") << "; last committed epoch " << num(st, "last_committed_epoch");
  if (auto* e = st.if_contains("open_epoch"); e && e->is_object()) {
    const auto& o = e->as_object();
    out << "; epoch " << num(o, "epoch") << " open (" << num(o, "rows", 0) << " rows, " << num(o, "tables", 0)
        << " tables, since " << ago(num(o, "since_unix_ms", 0), now) << ")";
  }
  out << "\n";
  if (auto* c = st.if_contains("committing_epochs"); c && c->is_array())
    for (const auto& e : c->as_array()) {
      const auto& o = e.as_object();
      out << "committing: epoch " << num(o, "epoch") << " (" << num(o, "tables", 0) << " txns, since "
          << ago(num(o, "since_unix_ms", 0), now) << ", " << num(o, "failed_attempts", 0) << " failed attempts)\n";
    }
  if (auto* r = st.if_contains("replaying_epoch"); r && r->is_object())
    out << "replaying: epoch " << num(r->as_object(), "epoch") << "\n";
  if (auto* k = st.if_contains("kafka"); k && k->is_object()) {
    const auto& o = k->as_object();
    out << "kafka: " << (o.at("reachable").as_bool() ? "reachable" : "UNREACHABLE: " + str(o, "problem"));
    if (auto* m = o.if_contains("missing_topics"); m && m->is_array() && !m->as_array().empty()) {
      out << "; MISSING topics:";
      for (const auto& t : m->as_array()) out << ' ' << t.as_string().c_str();
    }
    out << "\n";
  }
  if (auto* d = st.if_contains("doris"); d && d->is_object()) {
    const auto& o = d->as_object();
    out << "doris:";
    if (!str(o, "fe_problem").empty()) out << " " << str(o, "fe_problem") << ";";
    for (const char* op : {"loads", "commits"}) {
      const auto& f = o.at(op).as_object();
      out << ' ' << op << ' '
          << (f.at("failing").as_bool()
                  ? "FAILING for " + std::to_string(num(f, "failing_for_seconds", 0)) + "s (" +
                        one_line(str(f, "last_error"), 80) + ")"
                  : std::string("ok"));
      if (std::string(op) == "loads") out << ';';
    }
    out << "\n";
  }

  out << "\n" << std::left << std::setw(32) << "TABLE" << std::right << std::setw(12) << "ROWS" << std::setw(14)
      << "LAST COMMIT" << std::setw(11) << "FRESHNESS" << "  ERROR\n";
  for (const auto& [name, v] : st.at("tables").as_object()) {
    const auto& t = v.as_object();
    double fresh = -1;
    if (auto* f = t.if_contains("freshness_seconds"); f && f->is_number()) fresh = f->to_number<double>();
    std::string err = str(t, "last_error");
    if (err.empty() && num(t, "last_error_unix_ms", 0) > 0)
      err = "(none now; last " + ago(num(t, "last_error_unix_ms", 0), now) + ")";
    out << std::left << std::setw(32) << std::string(name) << std::right << std::setw(12) << num(t, "rows", 0)
        << std::setw(14) << ago(num(t, "last_commit_unix_ms", 0), now) << std::setw(11) << duration(fresh) << "  "
        << (err.empty() ? "-" : one_line(err, 100)) << "\n";
  }

  out << "\n" << std::left << std::setw(40) << "PARTITION" << std::right << std::setw(12) << "POSITION" << std::setw(12)
      << "COMMITTED" << std::setw(12) << "HIGH WM" << std::setw(10) << "LAG" << "  PAUSED\n";
  for (const auto& [name, v] : st.at("partitions").as_object()) {
    const auto& p = v.as_object();
    auto cell = [&](const char* k) {
      int64_t n = num(p, k);
      return n < 0 ? std::string("-") : std::to_string(n);
    };
    out << std::left << std::setw(40) << std::string(name) << std::right << std::setw(12) << cell("position")
        << std::setw(12) << cell("committed") << std::setw(12) << cell("high_watermark") << std::setw(10) << cell("lag")
        << "  " << (p.at("paused").as_bool() ? "yes" : "no") << "\n";
  }

  if (auto* errs = st.if_contains("recent_errors"); errs && errs->is_array() && !errs->as_array().empty()) {
    out << "\nRECENT ERRORS (newest last)\n";
    const auto& arr = errs->as_array();
    const size_t from = arr.size() > 10 ? arr.size() - 10 : 0;
    for (size_t i = from; i < arr.size(); ++i) {
      const auto& e = arr[i].as_object();
      out << "  " << clock_time(num(e, "unix_ms", 0)) << "  " << str(e, "where") << ": "
          << one_line(str(e, "message"), 140) << "\n";
    }
  }
}

}  // namespace

int cmd_status(const Args& a) {
  if (a.has("admin") == a.has("config")) {
    std::cerr << "usage: cdc2doris status --config FILE | --admin HOST:PORT\n";
    return kExitUsage;
  }
  Target target;
  try {
    target = admin_target(a);
  } catch (const std::exception& e) {
    std::cerr << "cdc2doris status: " << e.what() << "\n";
    return kExitUsage;
  }
  const std::string& address = target.address;
  std::string body;
  try {
    body = fetch_status(target);
  } catch (const std::exception& e) {
    std::cerr << "cdc2doris: cannot read " << (target.tls_cert_file.empty() ? "http://" : "https://") << address << "/status: " << e.what()
              << " (is the daemon running, and is admin.listen " << address << "?)\n";
    return 1;
  }
  json::object st;
  try {
    st = json::parse(body).as_object();
    print(st, address, std::cout);
  } catch (const std::exception& e) {
    std::cerr << "cdc2doris: unexpected /status answer from " << address << ": " << e.what() << "\n";
    return 1;
  }
  return st.at("ready").as_bool() ? kExitOk : 1;
}

}  // namespace cdc2doris::daemon
