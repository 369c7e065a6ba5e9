#include "tools/doris_emulator/server.hpp"

#include "tools/doris_emulator/body_reader.hpp"
#include "tools/doris_emulator/query_port.hpp"
#include "tools/doris_emulator/tls_front.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>
#include <zlib.h>

#include <cstdio>
#include <cstring>
#include <map>

namespace cdc2doris::emu {

namespace asio = boost::asio;
namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using asio::awaitable;
constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);

namespace {

void log(const std::string& s) { std::fprintf(stderr, "doris-emulator: %s\n", s.c_str()); }

std::string lower(std::string_view s) {
  std::string r(s);
  for (auto& c : r) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return r;
}

std::string pct_decode(std::string_view s) {
  auto hex = [](char c) { return std::isdigit(static_cast<unsigned char>(c)) ? c - '0' : std::tolower(c) - 'a' + 10; };
  std::string r;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && std::isxdigit(static_cast<unsigned char>(s[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      r.push_back(static_cast<char>(hex(s[i + 1]) * 16 + hex(s[i + 2])));
      i += 2;
    } else {
      r.push_back(s[i]);
    }
  }
  return r;
}

// java.net.URI-style escaping of the userinfo part of Location.
std::string userinfo_escape(std::string_view s) {
  std::string r;
  for (unsigned char c : s) {
    if (std::isalnum(c) || std::string_view("-._~!$&'()*+,;=").find(static_cast<char>(c)) != std::string_view::npos) {
      r.push_back(static_cast<char>(c));
    } else {
      char b[4];
      std::snprintf(b, sizeof b, "%%%02X", c);
      r += b;
    }
  }
  return r;
}

struct Target {
  std::vector<std::string> seg;
  std::string query;
  std::map<std::string, std::string> params;
};

Target parse_target(std::string_view t) {
  Target r;
  auto q = t.find('?');
  std::string_view path = t.substr(0, q);
  if (q != std::string_view::npos) {
    r.query = std::string(t.substr(q + 1));
    std::string_view qs = r.query;
    while (!qs.empty()) {
      auto amp = qs.find('&');
      std::string_view kv = qs.substr(0, amp);
      auto eq = kv.find('=');
      r.params[pct_decode(kv.substr(0, eq))] = eq == std::string_view::npos ? "" : pct_decode(kv.substr(eq + 1));
      if (amp == std::string_view::npos) break;
      qs.remove_prefix(amp + 1);
    }
  }
  size_t p = 0;
  if (!path.empty() && path[0] == '/') p = 1;
  while (p <= path.size()) {
    auto s = path.find('/', p);
    std::string_view part = path.substr(p, s == std::string_view::npos ? std::string_view::npos : s - p);
    r.seg.push_back(pct_decode(part));
    if (s == std::string_view::npos) break;
    p = s + 1;
  }
  return r;
}

std::string gzip(const std::string& in) {
  z_stream zs{};
  deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&zs, static_cast<uLong>(in.size())) + 32, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  deflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

std::string fe_body(const std::string& msg, int code, const boost::json::value& data) {
  return boost::json::serialize(boost::json::object{{"msg", msg}, {"code", code}, {"data", data}, {"count", 0}});
}

// The `stmt` of an HTTP query API request body ("" when there is none).
std::string statement_of(const std::string& body) {
  boost::system::error_code ec;
  auto v = boost::json::parse(body, ec);
  if (ec || !v.is_object()) return {};
  const auto* stmt = v.as_object().if_contains("stmt");
  return stmt && stmt->is_string() ? std::string(stmt->as_string()) : std::string();
}

std::string rest_result(bool ok, const std::string& msg) {
  return boost::json::serialize(boost::json::object{{"status", ok ? "OK" : "FAILED"}, {"msg", msg}});
}

}  // namespace

struct Server::Impl {
  Server& srv;
  Engine& eng;
  asio::io_context& ioc;
  std::unique_ptr<tcp::acceptor> fe;
  // Session key of FE i is -(i + 1): every key below 0 is an FE.
  std::vector<std::unique_ptr<tcp::acceptor>> extra_fes;
  std::vector<std::unique_ptr<tcp::acceptor>> bes;
  // Shared with every session's Registration: coroutine frames still parked
  // in the io_context may be destroyed after the Server itself.
  using SessionMap = std::map<int, std::set<beast::tcp_stream*>>;
  std::shared_ptr<SessionMap> sessions_ptr = std::make_shared<SessionMap>();
  SessionMap& sessions = *sessions_ptr;  // -1: FE
  asio::steady_timer ticker;
  // HTTPS: the public listeners above hand each connection to `tls`, which
  // relays it to the loopback listener of the same node (-1: FE, else BE).
  std::unique_ptr<TlsFront> tls;
  std::map<int, std::unique_ptr<tcp::acceptor>> inner;
  size_t rr = 0;
  bool stopping = false;

  Impl(Server& s, Engine& e, asio::io_context& io) : srv(s), eng(e), ioc(io), ticker(io) {}

  struct Registration {
    std::shared_ptr<SessionMap> map;
    int be;
    beast::tcp_stream* s;
    Registration(Impl& i, int b, beast::tcp_stream* st) : map(i.sessions_ptr), be(b), s(st) { (*map)[be].insert(s); }
    ~Registration() { (*map)[be].erase(s); }
  };

  std::unique_ptr<tcp::acceptor> bind(const std::string& host, int port) {
    auto a = std::make_unique<tcp::acceptor>(ioc);
    tcp::endpoint ep(asio::ip::make_address(host), static_cast<unsigned short>(port));
    boost::system::error_code ec;
    a->open(ep.protocol(), ec);
    if (!ec) a->set_option(asio::socket_base::reuse_address(true), ec);
    if (!ec) a->bind(ep, ec);
    if (!ec) a->listen(asio::socket_base::max_listen_connections, ec);
    if (ec) throw std::runtime_error("cannot listen on " + host + ":" + std::to_string(port) + ": " + ec.message());
    return a;
  }

  void spawn(awaitable<void> a, const char* what) {
    asio::co_spawn(ioc, std::move(a), [what](std::exception_ptr e) {
      if (!e) return;
      try {
        std::rethrow_exception(e);
      } catch (const std::exception& ex) {
        log(std::string(what) + " failed: " + ex.what());
      }
    });
  }

  awaitable<void> accept_loop(tcp::acceptor* acc, int be, bool plain = false) {
    for (;;) {
      auto [ec, sock] = co_await acc->async_accept(tuple_awaitable);
      if (ec) {
        if (ec == asio::error::operation_aborted || !acc->is_open() || stopping) co_return;
        log("accept failed: " + ec.message());
        continue;
      }
      sock.set_option(tcp::no_delay(true));
      if (tls && !plain) spawn(tls->relay(std::move(sock), inner.at(be)->local_endpoint()), "tls relay");
      else spawn(session(std::move(sock), be), "session");
    }
  }

  void add_inner(int be) {
    inner[be] = bind("127.0.0.1", 0);
    spawn(accept_loop(inner[be].get(), be, true), "accept");
  }

  awaitable<void> tick_loop() {
    while (!stopping) {
      ticker.expires_after(std::chrono::milliseconds(100));
      auto [ec] = co_await ticker.async_wait(tuple_awaitable);
      if (ec || stopping) co_return;
      try {
        eng.tick(now_ms());
      } catch (const std::exception& e) {
        log(std::string("housekeeping failed: ") + e.what());
      }
    }
  }

  void set_be_online(int be, bool online) {
    auto& acc = bes[static_cast<size_t>(be)];
    if (!online) {
      if (acc) {
        boost::system::error_code ec;
        acc->close(ec);
        acc.reset();
      }
      // A crashed BE also drops every connection it had.
      auto copy = sessions[be];
      for (auto* s : copy) {
        boost::system::error_code ec;
        s->socket().close(ec);
      }
      log("BE " + std::to_string(be) + " offline");
    } else if (!acc) {
      acc = bind(srv.opts_.host, srv.be_ports_[static_cast<size_t>(be)]);
      spawn(accept_loop(acc.get(), be), "accept");
      log("BE " + std::to_string(be) + " online");
    }
  }

  std::unique_ptr<tcp::acceptor>& fe_acceptor(int i) { return i == 0 ? fe : extra_fes[static_cast<size_t>(i - 1)]; }

  // A killed FE process: its port stops listening and its connections drop;
  // the BEs and the other FEs carry on over the same engine state.
  void set_fe_online(int i, bool online) {
    auto& acc = fe_acceptor(i);
    const int key = -(i + 1);
    if (!online) {
      if (acc) {
        boost::system::error_code ec;
        acc->close(ec);
        acc.reset();
      }
      auto copy = sessions[key];
      for (auto* s : copy) {
        boost::system::error_code ec;
        s->socket().close(ec);
      }
      log("FE " + std::to_string(i) + " offline");
    } else if (!acc) {
      acc = bind(srv.opts_.host, srv.fe_ports_[static_cast<size_t>(i)]);
      spawn(accept_loop(acc.get(), key), "accept");
      log("FE " + std::to_string(i) + " online");
    }
  }

  static void reset(beast::tcp_stream& s) {
    boost::system::error_code ec;
    s.socket().set_option(asio::socket_base::linger(true, 0), ec);
    s.socket().close(ec);
  }

  awaitable<bool> send(beast::tcp_stream& s, http::status st, std::string body, const std::string& ctype, bool keep,
                       const std::map<std::string, std::string>& extra = {}, bool gz = false) {
    http::response<http::string_body> res{st, 11};
    res.set(http::field::server, "doris-emulator");
    if (!ctype.empty()) res.set(http::field::content_type, ctype);
    for (auto& [k, v] : extra) res.set(k, v);
    if (gz) {
      body = gzip(body);
      res.set(http::field::content_encoding, "gzip");
    }
    res.body() = std::move(body);
    res.keep_alive(keep);
    res.prepare_payload();
    auto [ec, n] = co_await http::async_write(s, res, tuple_awaitable);
    co_return !ec && keep;
  }

  // Reads a small request body (2PC, SQL, admin) completely. The buffer is
  // the call's own: the parser copies body bytes into it when async_read
  // starts, and the completion is posted, so other sessions run before this
  // one appends them (a buffer shared by the sessions handed one request
  // another's bytes).
  awaitable<bool> read_small_body(beast::tcp_stream& s, beast::flat_buffer& buf,
                                  http::request_parser<http::buffer_body>& p, std::string* out) {
    auto& req = p.get();
    std::vector<char> scratch(16 << 10);
    if (!p.is_done() && beast::iequals(req[http::field::expect], "100-continue")) {
      http::response<http::empty_body> cont{http::status::continue_, 11};
      auto [ec, n] = co_await http::async_write(s, cont, tuple_awaitable);
      if (ec) co_return false;
    }
    while (!p.is_done()) {
      req.body().data = scratch.data();
      req.body().size = scratch.size();
      auto [ec, n] = co_await http::async_read(s, buf, p, tuple_awaitable);
      out->append(scratch.data(), scratch.size() - req.body().size);
      if (ec == http::error::need_buffer) continue;
      if (ec) co_return false;
      if (out->size() > (64u << 20)) co_return false;
    }
    co_return true;
  }

  // A reply can go out before the request body was read (an error found in
  // the headers without Expect: 100-continue, a body over the limit). Closing
  // a socket with unread bytes makes the kernel send RST, which can reach the
  // client before it read the reply, and a client still writing the body gets
  // EPIPE instead of Doris' message. Doris' libevent server drains the body of
  // a failed load (StreamLoadAction::on_chunk_data returns early and evhttp
  // discards the input); this does the same after the reply, as nginx's
  // lingering_close does: read and discard until the client closes, bounded
  // in time so a client that never closes cannot hold the session (the
  // stream's expiry covers every read until it is changed).
  awaitable<void> lingering_close(beast::tcp_stream& s) {
    std::vector<char> scratch(64 << 10);
    s.expires_after(std::chrono::seconds(5));
    for (;;) {
      auto [ec, n] = co_await s.async_read_some(asio::buffer(scratch), tuple_awaitable);
      if (ec) break;
    }
  }

  awaitable<void> delay(int64_t ms) {
    if (ms <= 0) co_return;
    asio::steady_timer t(ioc);
    t.expires_after(std::chrono::milliseconds(ms));
    co_await t.async_wait(tuple_awaitable);
  }

  awaitable<void> session(tcp::socket sock, int be) {
    beast::tcp_stream stream(std::move(sock));
    Registration reg(*this, be, &stream);
    beast::flat_buffer buf;
    for (;;) {
      http::request_parser<http::buffer_body> parser;
      parser.body_limit(boost::none);
      parser.header_limit(1 << 20);
      auto [ec, n] = co_await http::async_read_header(stream, buf, parser, tuple_awaitable);
      if (ec) {
        if (ec.category() == make_error_code(http::error::bad_target).category() || ec == http::error::body_limit ||
            ec == http::error::header_limit) {
          if (ec == http::error::end_of_stream || ec == http::error::partial_message) co_return;
          auto& req = parser.get();
          bool load_path = be >= 0 && (req.target().find("/_stream_load") != std::string_view::npos ||
                                       req.target().find("/_load") != std::string_view::npos);
          if (load_path && (ec == http::error::bad_content_length || ec == http::error::bad_transfer_encoding)) {
            // Content-Length and chunked together: Doris answers in JSON.
            LoadRequest lr;
            lr.content_length = 0;
            lr.chunked = true;
            for (auto& f : req) lr.headers[lower(f.name_string())] = std::string(f.value());
            lr.authorization = std::string(req[http::field::authorization]);
            Reply early;
            eng.start_load(lr, &early);
            co_await send(stream, http::status::ok, early.body, "text/plain; charset=UTF-8", false);
          } else {
            co_await send(stream, http::status::bad_request, "Bad Request: " + ec.message() + "\n",
                          "text/plain", false);
          }
        }
        co_return;
      }
      bool keep = false;
      std::string failure;
      try {
        keep = co_await handle(stream, buf, parser, be);
      } catch (const std::exception& e) {
        failure = e.what();
      }
      if (!failure.empty()) {
        log("request failed: " + failure);
        co_await send(stream, http::status::internal_server_error, "internal error: " + failure, "text/plain", false);
        co_return;
      }
      if (!keep || stopping) {
        boost::system::error_code ignored;
        stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
        if (!stopping) co_await lingering_close(stream);
        co_return;
      }
    }
  }

  struct Resp {
    http::status st = http::status::ok;
    std::string body;
    std::string ctype = "application/json";
    std::map<std::string, std::string> extra;
    bool close = false;
    bool reset = false;
    bool gz = false;
  };

  static Resp make(http::status st, std::string body, std::string ctype, bool close = false) {
    Resp r;
    r.st = st;
    r.body = std::move(body);
    r.ctype = std::move(ctype);
    r.close = close;
    return r;
  }

  awaitable<bool> handle(beast::tcp_stream& s, beast::flat_buffer& buf, http::request_parser<http::buffer_body>& p,
                         int be) {
    auto& req = p.get();
    Target t = parse_target(req.target());
    std::map<std::string, std::string> h;
    for (auto& f : req) h[lower(f.name_string())] = std::string(f.value());
    std::string authz(req[http::field::authorization]);
    bool keep = req.keep_alive();
    bool accepts_gz = lower(req[http::field::accept_encoding]).find("gzip") != std::string::npos;
    auto method = req.method();
    auto& sg = t.seg;
    bool put = method == http::verb::put;
    bool load_path = sg.size() == 4 && sg[0] == "api" && (sg[3] == "_stream_load" || (be >= 0 && sg[3] == "_load"));
    bool twopc_path = sg.size() >= 3 && sg.size() <= 4 && sg[0] == "api" && sg.back() == "_stream_load_2pc";
    if (be >= 0 && put && load_path)
      co_return co_await stream_load(s, buf, p, sg[1], sg[2], std::move(h), authz, be, keep, accepts_gz);
    std::string body;
    // The FE answers load and 2PC requests from the headers alone and never
    // reads the body (the client replays it to the BE after the 307).
    bool fe_redirect = be < 0 && put && (load_path || twopc_path);
    if (!fe_redirect && !co_await read_small_body(s, buf, p, &body)) co_return false;
    if (be >= 0 && put && twopc_path)
      if (auto f = eng.take_fault("delay_commit", sg[1], "", be); f) co_await delay(f->ms);
    if (be < 0 && method == http::verb::post && sg.size() == 4 && sg[0] == "api" && sg[1] == "query") {
      const std::string stmt = statement_of(body);
      if (auto f = eng.take_query_fault("delay_query", sg[3], stmt)) co_await delay(f->ms);
      if (auto f = eng.take_query_fault("fail_query", sg[3], stmt)) {
        if (f->reset) {
          reset(s);
          co_return false;
        }
        // Built outside the co_await: GCC 12 destroys a conditional
        // expression's temporary twice in a coroutine's argument list.
        std::string answer = f->message;
        if (!f->raw) answer = fe_body(f->status, static_cast<int>(f->code), boost::json::string(f->message));
        co_return co_await send(s, static_cast<http::status>(f->http_status), std::move(answer), "application/json",
                                keep);
      }
    }
    Resp r = be < 0 ? route_fe(method, t, h, authz, body) : route_be(method, t, h, authz, be);
    if (be >= 0) r.gz = accepts_gz && r.st == http::status::ok;
    if (r.reset) {
      reset(s);
      co_return false;
    }
    co_return co_await send(s, r.st, std::move(r.body), r.ctype, keep && !r.close && !fe_redirect, r.extra, r.gz);
  }

  Resp route_be(http::verb method, Target& t, std::map<std::string, std::string>& h, const std::string& authz, int be) {
    auto& sg = t.seg;
    if (method == http::verb::get && (sg.empty() || (sg.size() == 1 && sg[0].empty())))
      return make(http::status::ok, "<html><body>Doris emulator BE</body></html>", "text/html");
    if (sg.size() == 2 && sg[0] == "api" && sg[1] == "health" && method == http::verb::get)
      return make(http::status::ok, "{\"status\": \"OK\",\"msg\": \"To Be Added\"}", "application/json");
    if (sg.size() == 2 && sg[0] == "api" && sg[1] == "_load_error_log" && method == http::verb::get) {
      auto log = eng.error_log(t.params["file"]);
      if (!log) return make(http::status::not_found, "Not Found", "text/plain");
      return make(http::status::ok, *log, "text/plain");
    }
    if (sg.size() >= 3 && sg.size() <= 4 && sg[0] == "api" && sg.back() == "_stream_load_2pc" &&
        method == http::verb::put) {
      Reply rep = eng.txn_2pc(sg[1], h, authz, be);
      Resp r = make(http::status::ok, rep.body, "text/plain; charset=UTF-8");
      r.reset = rep.reset;
      return r;
    }
    return make(http::status::not_found, "Not Found", "text/plain");
  }

  Resp route_fe(http::verb method, Target& t, std::map<std::string, std::string>& h, const std::string& authz,
                const std::string& body) {
    auto& sg = t.seg;
    const std::string json = "application/json";
    if (!sg.empty() && sg[0] == "_emulator") return admin(method, t, body);
    if (method == http::verb::get && (sg.empty() || (sg.size() == 1 && sg[0].empty())))
      return make(http::status::ok, "<html><body>Doris emulator FE</body></html>", "text/html");
    if (sg.size() < 2 || sg[0] != "api") return make(http::status::not_found, fe_body("Not Found", 404, "Not Found"), json);
    if (sg.size() == 2 && sg[1] == "health" && method == http::verb::get) {
      int online = 0;
      for (size_t i = 0; i < bes.size(); ++i) online += eng.be_offline(static_cast<int>(i)) ? 0 : 1;
      boost::json::object d{{"total_backend_num", bes.size()}, {"online_backend_num", online}};
      return make(http::status::ok, fe_body("success", 0, d), json);
    }
    std::string unauthorized;
    if (auto a = eng.check_auth(authz); a != Engine::Auth::Ok)
      unauthorized = fe_body("Unauthorized", 401,
                             boost::json::string(a == Engine::Auth::Missing ? "Need auth information." : eng.denied_text(authz)));
    if (sg.size() == 2 && sg[1] == "backends" && method == http::verb::get) {
      if (!unauthorized.empty()) return make(http::status::ok, unauthorized, json);
      bool only_alive = lower(t.params["is_alive"]) == "true";
      boost::json::array arr;
      for (size_t i = 0; i < bes.size(); ++i) {
        bool alive = !eng.be_offline(static_cast<int>(i));
        if (only_alive && !alive) continue;
        arr.push_back(boost::json::object{{"ip", srv.opts_.host}, {"http_port", srv.be_ports_[i]}, {"is_alive", alive}});
      }
      boost::json::object d{{"backends", arr}};
      return make(http::status::ok, fe_body("success", 0, d), json);
    }
    if ((sg.size() == 4 || sg.size() == 5) && sg.back() == "_schema" && method == http::verb::get) {
      if (!unauthorized.empty()) return make(http::status::ok, unauthorized, json);
      return make(http::status::ok, eng.schema_json(sg[sg.size() - 3], sg[sg.size() - 2]), json);
    }
    if (sg.size() == 4 && sg[1] == "query" && method == http::verb::post) {
      if (!unauthorized.empty()) return make(http::status::ok, unauthorized, json);
      boost::system::error_code ec;
      auto v = boost::json::parse(body, ec);
      const boost::json::value* stmt = (!ec && v.is_object()) ? v.as_object().if_contains("stmt") : nullptr;
      if (!stmt || !stmt->is_string())
        return make(http::status::ok, fe_body("Bad Request", 403, "Missing statement request body"), json);
      bool streaming = lower(h["x-doris-stream"]) != "false";
      // fe StatementSubmitter runs the statement on a JDBC connection the FE
      // opens to itself as the request's user, so the client host is the FE's.
      std::string user;
      eng.check_auth(authz, &user);
      Engine::ActingAs as(eng, user, srv.opts_.host);
      return make(http::status::ok, eng.query(sg[3], std::string(stmt->as_string()), streaming), json);
    }
    // fe LoadAction GET /api/{db}/get_load_state?label=: the label's
    // TransactionStatus name (GlobalTransactionMgr.getLabelState), UNKNOWN
    // when the label is not (or no longer) known.
    if (sg.size() == 3 && sg[2] == "get_load_state" && method == http::verb::get) {
      if (!unauthorized.empty()) return make(http::status::ok, unauthorized, json);
      const std::string label = t.params["label"];
      if (label.empty()) return make(http::status::ok, fe_body("Bad Request", 400, "No label selected"), json);
      Database* d = eng.find_db(sg[1]);
      if (!d) return make(http::status::ok, fe_body("Not Found", 404, boost::json::string("unknown database, database=" + sg[1])), json);
      std::string state = "UNKNOWN";
      if (auto it = d->labels.find(label); it != d->labels.end() && !it->second.empty())
        if (Txn* txn = eng.find_txn(it->second.back())) state = to_string(txn->state);
      return make(http::status::ok, fe_body("success", 0, boost::json::string(state)), json);
    }
    bool is_load = sg.size() == 4 && sg[3] == "_stream_load";
    bool is_2pc = (sg.size() == 3 || sg.size() == 4) && sg.back() == "_stream_load_2pc";
    if (!(is_load || is_2pc) || method != http::verb::put)
      return make(http::status::not_found, fe_body("Not Found", 404, "Not Found"), json);
    auto failed = [&](const std::string& msg) { return make(http::status::ok, rest_result(false, msg), json, true); };
    bool has_gc = h.count("group_commit") != 0;
    std::string gc = has_gc ? lower(h["group_commit"]) : "";
    if (is_load && has_gc && gc != "sync_mode" && gc != "async_mode" && gc != "off_mode")
      return failed("Header `group_commit` can only be `sync_mode`, `async_mode` or `off_mode`.");
    if (!unauthorized.empty()) return make(http::status::ok, unauthorized, json, true);
    if (is_load) {
      if (!h.count("expect")) return failed("There is no 100-continue header");
      if (sg[1].empty()) return failed("No database selected.");
      if (sg[2].empty()) return failed("No table selected.");
      // fe LoadAction.executeWithoutPassword -> BaseController.checkTblAuth
      // (PrivPredicate.LOAD = ADMIN_PRIV or LOAD_PRIV): the message names the
      // predicate's PrivBitSet, answered as a RestBaseResult.
      std::string user;
      eng.check_auth(authz, &user);
      if (!eng.has_priv(user, sg[1], sg[2], Engine::kLoadPriv))
        return failed("Access denied; you need (at least one of) the Admin_priv,Load_priv privilege(s) for this "
                      "operation");
    } else {
      if (sg[1].empty()) return failed("No database selected.");
      if (h["txn_id"].empty() && h["label"].empty()) return failed("No transaction id or label selected.");
      if (h["txn_operation"].empty()) return failed("No transaction operation('commit' or 'abort') selected.");
    }
    std::vector<size_t> alive;
    for (size_t i = 0; i < bes.size(); ++i)
      if (!eng.be_offline(static_cast<int>(i))) alive.push_back(i);
    if (alive.empty())
      return failed("No backend available for load, please check the status of your backends., policy: {}");
    size_t pick = alive[rr++ % alive.size()];
    std::string user, pw;
    decode_basic(authz, &user, &pw);
    std::string path = "/api/" + url_segment(sg[1]);
    for (size_t i = 2; i < sg.size(); ++i) path += "/" + url_segment(sg[i]);
    Resp r = make(http::status::temporary_redirect, "", "text/html;charset=utf-8", true);
    // RestBaseController.getRedirectUrL keeps the request's scheme: an https
    // FE redirects to https on the BE's http port (which serves TLS too).
    r.extra["Location"] = std::string(tls ? "https://" : "http://") + userinfo_escape(user) + ":" + userinfo_escape(pw) + "@" + srv.opts_.host + ":" +
                          std::to_string(srv.be_ports_[pick]) + path + (t.query.empty() ? "" : "?" + t.query);
    return r;
  }

  static void decode_basic(const std::string& authz, std::string* user, std::string* pw) {
    static const std::string chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string dec;
    uint32_t acc = 0;
    int bits = 0;
    for (char c : std::string_view(authz).substr(std::min<size_t>(6, authz.size()))) {
      auto pos = chars.find(c);
      if (c == '=' || pos == std::string::npos) break;
      acc = (acc << 6) | static_cast<uint32_t>(pos);
      bits += 6;
      if (bits >= 8) {
        bits -= 8;
        dec.push_back(static_cast<char>((acc >> bits) & 0xff));
      }
    }
    auto colon = dec.find(':');
    *user = dec.substr(0, colon);
    *pw = colon == std::string::npos ? "" : dec.substr(colon + 1);
    if (auto at = user->find('@'); at != std::string::npos) user->resize(at);
  }

  static std::string url_segment(const std::string& s) {
    std::string r;
    for (unsigned char c : s) {
      if (std::isalnum(c) || std::string_view("-._~:@!$&'()*+,;=").find(static_cast<char>(c)) != std::string_view::npos)
        r.push_back(static_cast<char>(c));
      else {
        char b[4];
        std::snprintf(b, sizeof b, "%%%02X", c);
        r += b;
      }
    }
    return r;
  }

  awaitable<bool> stream_load(beast::tcp_stream& s, beast::flat_buffer& buf, http::request_parser<http::buffer_body>& p,
                              const std::string& db, const std::string& table, std::map<std::string, std::string> h,
                              const std::string& authz, int be, bool keep, bool gz) {
    auto& req = p.get();
    LoadRequest lr;
    lr.db = db;
    lr.table = table;
    lr.headers = std::move(h);
    lr.authorization = authz;
    lr.chunked = p.chunked();
    if (req.find(http::field::content_length) != req.end()) lr.content_length = static_cast<int64_t>(p.content_length().value_or(0));
    lr.be = be;
    const std::string ctype = "text/plain; charset=UTF-8";
    auto delay_resp = eng.take_fault("delay_response", db, table, be);
    Reply early;
    auto load = eng.start_load(lr, &early);
    if (!load) {
      if (delay_resp) co_await delay(delay_resp->ms);
      // No 100 Continue was sent, so the body (if any) is not read: close
      // (lingering, see lingering_close).
      co_return co_await send(s, http::status::ok, early.body, ctype, false, {}, gz);
    }
    auto reset_fault = eng.take_fault("reset_after_bytes", db, table, be);
    if (!p.is_done() && beast::iequals(req[http::field::expect], "100-continue")) {
      if (auto f = eng.take_fault("delay_continue", db, table, be); f) co_await delay(f->ms);
      http::response<http::empty_body> cont{http::status::continue_, 11};
      auto [ec, n] = co_await http::async_write(s, cont, tuple_awaitable);
      if (ec) {
        load->cancel("[CANCELLED]client disconnected before sending the body");
        co_return false;
      }
    }
    BodyReader body(s, buf, p.chunked(), p.content_length().value_or(0));
    bool stopped = false;
    std::string error;
    for (;;) {
      auto part = co_await body.next(&error);
      if (!error.empty()) {
        load->cancel("[CANCELLED]receive body failed: " + error);
        co_return false;
      }
      if (part.empty()) break;
      if (reset_fault && load->received() + static_cast<int64_t>(part.size()) >= reset_fault->bytes) {
        size_t keep_bytes = static_cast<size_t>(std::max<int64_t>(0, reset_fault->bytes - load->received()));
        load->feed(part.data(), std::min(keep_bytes, part.size()));
        load->cancel("[CANCELLED]connection reset by fault injection");
        reset(s);
        co_return false;
      }
      if (!load->feed(part.data(), part.size())) {
        stopped = true;
        break;
      }
    }
    if (reset_fault && !body.done()) {
      load->cancel("[CANCELLED]connection reset by fault injection");
      reset(s);
      co_return false;
    }
    Reply r = load->finish();
    if (delay_resp) co_await delay(delay_resp->ms);
    co_return co_await send(s, http::status::ok, r.body, ctype, keep && !stopped && !r.close, {}, gz);
  }


  Resp admin(http::verb method, Target& t, const std::string& body) {
    auto& sg = t.seg;
    const std::string json = "application/json";
    auto ok = [&](std::string b, const std::string& ct = "application/json") { return make(http::status::ok, std::move(b), ct); };
    auto err = [&](http::status st, const std::string& msg) {
      boost::json::object o{{"error", msg}};
      return make(st, boost::json::serialize(o), json);
    };
    if (sg.size() == 2 && sg[1] == "tables" && method == http::verb::get) return ok(eng.tables_json());
    if (sg.size() == 5 && sg[1] == "tables" && method == http::verb::get) {
      if (sg[4] == "rows") {
        auto r = eng.rows_jsonl(sg[2], sg[3]);
        if (!r) return err(http::status::not_found, "no table " + sg[2] + "." + sg[3]);
        return ok(std::move(*r), "application/x-ndjson");
      }
      if (sg[4] == "checksum") {
        auto c = eng.checksum(sg[2], sg[3]);
        if (!c) return err(http::status::not_found, "no table " + sg[2] + "." + sg[3]);
        boost::json::object o{{"checksum", c->first}, {"rows", c->second}};
        return ok(boost::json::serialize(o));
      }
    }
    if (sg.size() == 2 && sg[1] == "txns" && method == http::verb::get) {
      auto it = t.params.find("db");
      return ok(eng.txns_json(it == t.params.end() ? "" : it->second));
    }
    if (sg.size() == 2 && sg[1] == "stats" && method == http::verb::get) return ok(eng.stats_json());
    if (sg.size() == 2 && sg[1] == "backends" && method == http::verb::get) {
      boost::json::array arr;
      for (size_t i = 0; i < bes.size(); ++i)
        arr.push_back(boost::json::object{{"be", i},
                                          {"address", srv.opts_.host + ":" + std::to_string(srv.be_ports_[i])},
                                          {"online", !eng.be_offline(static_cast<int>(i))}});
      boost::json::object o{{"backends", arr}};
      return ok(boost::json::serialize(o));
    }
    if (sg.size() == 4 && sg[1] == "fes" && method == http::verb::post && (sg[3] == "offline" || sg[3] == "online")) {
      const int i = std::atoi(sg[2].c_str());
      if (sg[2].empty() || i < 0 || static_cast<size_t>(i) >= srv.fe_ports_.size())
        return err(http::status::not_found, "no FE " + sg[2]);
      set_fe_online(i, sg[3] == "online");
      return ok("{\"fe\":" + std::to_string(i) + ",\"online\":" + (sg[3] == "online" ? "true" : "false") + "}");
    }
    if (sg.size() >= 2 && sg[1] == "faults") {
      if (sg.size() == 2 && method == http::verb::get) return ok(eng.faults_json());
      if (sg.size() == 2 && method == http::verb::post) {
        try {
          return ok(eng.add_fault(body));
        } catch (const std::exception& e) {
          return err(http::status::bad_request, e.what());
        }
      }
      if (sg.size() == 2 && method == http::verb::delete_) {
        eng.clear_faults();
        return ok("{\"cleared\":true}");
      }
      if (sg.size() == 3 && method == http::verb::delete_) {
        int64_t id = std::atoll(sg[2].c_str());
        if (!eng.delete_fault(id)) return err(http::status::not_found, "no fault " + sg[2]);
        return ok("{\"deleted\":" + std::to_string(id) + "}");
      }
    }
    return err(http::status::not_found, "unknown admin endpoint");
  }
};


Server::Server(asio::io_context& ioc, Engine& engine, ServerOptions opts)
    : ioc_(ioc), engine_(engine), opts_(std::move(opts)), impl_(std::make_unique<Impl>(*this, engine, ioc)) {
  if (!opts_.tls_cert.empty()) impl_->tls = std::make_unique<TlsFront>(opts_.tls_cert, opts_.tls_key);
  impl_->fe = impl_->bind(opts_.host, opts_.fe_port);
  fe_port_ = impl_->fe->local_endpoint().port();
  fe_ports_.push_back(fe_port_);
  for (int p : opts_.extra_fe_ports) {
    impl_->extra_fes.push_back(impl_->bind(opts_.host, p));
    fe_ports_.push_back(impl_->extra_fes.back()->local_endpoint().port());
  }
  std::vector<std::string> addrs;
  for (int p : opts_.be_ports) {
    impl_->bes.push_back(impl_->bind(opts_.host, p));
    be_ports_.push_back(impl_->bes.back()->local_endpoint().port());
    addrs.push_back(opts_.host + ":" + std::to_string(be_ports_.back()));
  }
  engine_.set_be_addrs(addrs);
  if (opts_.query_port >= 0) query_ = std::make_unique<QueryPort>(ioc, engine, opts_.host, opts_.query_port);
  engine_.on_be_state = [this](int be, bool online) { impl_->set_be_online(be, online); };
}

Server::~Server() { engine_.on_be_state = nullptr; }

int Server::query_port() const { return query_ ? query_->port() : -1; }

void Server::start() {
  if (impl_->tls) {
    for (size_t i = 0; i < fe_ports_.size(); ++i) impl_->add_inner(-static_cast<int>(i) - 1);
    for (size_t i = 0; i < impl_->bes.size(); ++i) impl_->add_inner(static_cast<int>(i));
  }
  impl_->spawn(impl_->accept_loop(impl_->fe.get(), -1), "accept");
  for (size_t i = 0; i < impl_->extra_fes.size(); ++i)
    impl_->spawn(impl_->accept_loop(impl_->extra_fes[i].get(), -static_cast<int>(i) - 2), "accept");
  for (size_t i = 0; i < impl_->bes.size(); ++i) {
    if (engine_.be_offline(static_cast<int>(i))) {
      boost::system::error_code ec;
      impl_->bes[i]->close(ec);
      impl_->bes[i].reset();
      continue;
    }
    impl_->spawn(impl_->accept_loop(impl_->bes[i].get(), static_cast<int>(i)), "accept");
  }
  impl_->spawn(impl_->tick_loop(), "housekeeping");
  if (query_) query_->start();
}

void Server::stop() {
  impl_->stopping = true;
  if (query_) query_->stop();
  boost::system::error_code ec;
  impl_->ticker.cancel();
  if (impl_->fe) impl_->fe->close(ec);
  for (auto& a : impl_->extra_fes)
    if (a) a->close(ec);
  for (auto& [be, a] : impl_->inner) a->close(ec);
  for (auto& a : impl_->bes)
    if (a) a->close(ec);
  for (auto& [be, set] : impl_->sessions) {
    auto copy = set;
    for (auto* s : copy) s->socket().close(ec);
  }
}

std::string Server::ready_line() const {
  boost::json::array bes;
  for (int p : be_ports_) bes.push_back(boost::json::string(opts_.host + ":" + std::to_string(p)));
  std::string fe = opts_.host + ":" + std::to_string(fe_port_);
  // With TLS the admin API and SQL are also reachable in plain HTTP on the
  // FE's loopback relay target (tests and tools inspect through it).
  std::string admin = fe;
  if (impl_->tls) admin = "127.0.0.1:" + std::to_string(impl_->inner.at(-1)->local_endpoint().port());
  boost::json::array fes;
  for (int p : fe_ports_) fes.push_back(boost::json::string(opts_.host + ":" + std::to_string(p)));
  boost::json::object o{{"fe", fe}, {"fes", fes}, {"bes", bes}, {"admin", admin}, {"scheme", impl_->tls ? "https" : "http"}};
  if (query_) o["query"] = opts_.host + ":" + std::to_string(query_->port());
  return boost::json::serialize(o);
}

}  // namespace cdc2doris::emu
