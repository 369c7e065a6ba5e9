#include "tools/doris_emulator/query_port.hpp"

#include "tools/doris_emulator/mysql_protocol.hpp"
#include "tools/doris_emulator/query_exec.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include <cstdio>
#include <random>
#include <set>

namespace cdc2doris::emu {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using asio::awaitable;

namespace {

constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);
constexpr const char* kServerVersion = "5.7.99";  // what a Doris FE announces

void log(const std::string& s) { std::fprintf(stderr, "doris-emulator: query port: %s\n", s.c_str()); }

}  // namespace

struct QueryPort::Impl : std::enable_shared_from_this<QueryPort::Impl> {
  asio::io_context& ioc;
  Engine& eng;
  tcp::acceptor acc;
  std::set<tcp::socket*> socks;
  bool stopping = false;
  uint32_t next_conn_id = 1;
  std::mt19937 rng{std::random_device{}()};

  Impl(asio::io_context& io, Engine& e) : ioc(io), eng(e), acc(io) {}

  // One packet's payload (continuations joined); nullopt when the peer left.
  awaitable<std::optional<std::string>> read_packet(tcp::socket& s, uint8_t* seq) {
    std::string payload;
    for (;;) {
      unsigned char h[4];
      auto [ec, n] = co_await asio::async_read(s, asio::buffer(h, 4), tuple_awaitable);
      if (ec) co_return std::nullopt;
      size_t len = h[0] | (h[1] << 8) | (static_cast<size_t>(h[2]) << 16);
      *seq = static_cast<uint8_t>(h[3] + 1);
      size_t at = payload.size();
      payload.resize(at + len);
      if (len) {
        auto [ec2, n2] = co_await asio::async_read(s, asio::buffer(payload.data() + at, len), tuple_awaitable);
        if (ec2) co_return std::nullopt;
      }
      if (len < 0xffffff) break;
    }
    co_return payload;
  }

  awaitable<bool> send(tcp::socket& s, const std::string& wire) {
    auto [ec, n] = co_await asio::async_write(s, asio::buffer(wire), tuple_awaitable);
    co_return !ec;
  }

  static std::string encode(const QueryResult& q, uint8_t* seq) {
    std::string wire;
    if (q.error) {
      mysql::frame(&wire, mysql::err_packet(q.code, q.sqlstate, q.message), seq);
      return wire;
    }
    if (!q.has_rows) {
      mysql::frame(&wire, mysql::ok_packet(q.affected, mysql::kStatusAutocommit), seq);
      return wire;
    }
    std::string count;
    mysql::put_lenenc(&count, q.cols.size());
    mysql::frame(&wire, count, seq);
    for (auto& c : q.cols) mysql::frame(&wire, mysql::column_definition(c), seq);
    mysql::frame(&wire, mysql::eof_packet(mysql::kStatusAutocommit), seq);
    for (auto& r : q.rows) mysql::frame(&wire, mysql::text_row(r), seq);
    mysql::frame(&wire, mysql::eof_packet(mysql::kStatusAutocommit), seq);
    return wire;
  }

  awaitable<void> session(tcp::socket s) {
    auto self = shared_from_this();
    socks.insert(&s);
    struct Unregister {
      Impl* i;
      tcp::socket* s;
      ~Unregister() { i->socks.erase(s); }
    } unregister{this, &s};
    boost::system::error_code ec;
    auto remote = s.remote_endpoint(ec);
    const std::string host = ec ? "127.0.0.1" : remote.address().to_string();
    const uint32_t conn_id = next_conn_id++;
    std::string scramble(20, '\0');
    for (auto& c : scramble) c = static_cast<char>(33 + rng() % 90);  // printable, never NUL
    uint8_t seq = 0;
    std::string wire;
    mysql::frame(&wire, mysql::handshake_v10(conn_id, scramble, kServerVersion), &seq);
    if (!co_await send(s, wire)) co_return;
    auto hs = co_await read_packet(s, &seq);
    if (!hs) co_return;
    mysql::HandshakeResponse resp;
    wire.clear();
    if (!mysql::parse_handshake_response(*hs, &resp)) {
      mysql::frame(&wire, mysql::err_packet(1043, "08S01", "Bad handshake"), &seq);
      co_await send(s, wire);
      co_return;
    }
    if (!resp.plugin.empty() && resp.plugin != "mysql_native_password") {
      // The client started with another plugin (e.g. caching_sha2_password):
      // ask it to switch, as a Doris FE does.
      mysql::frame(&wire, mysql::auth_switch_request(scramble), &seq);
      if (!co_await send(s, wire)) co_return;
      auto again = co_await read_packet(s, &seq);
      if (!again) co_return;
      resp.auth = *again;
      wire.clear();
    }
    std::string user = resp.user;
    if (auto at = user.find('@'); at != std::string::npos) user.resize(at);  // "root@default_cluster"
    auto it = eng.config().users.find(user);
    if (it == eng.config().users.end() || !mysql::check_native_password(scramble, resp.auth, it->second)) {
      mysql::frame(&wire,
                   mysql::err_packet(1045, "28000",
                                     "Access denied for user '" + user + "'@'" + host + "' (using password: " +
                                         (resp.auth.empty() ? "NO" : "YES") + ")"),
                   &seq);
      co_await send(s, wire);
      co_return;
    }
    QuerySession qs(eng, user, host, conn_id);
    if (!resp.db.empty()) {
      QueryResult r = qs.use(resp.db);
      if (r.error) {
        co_await send(s, encode(r, &seq));
        co_return;
      }
    }
    mysql::frame(&wire, mysql::ok_packet(0, mysql::kStatusAutocommit), &seq);
    if (!co_await send(s, wire)) co_return;
    for (;;) {
      auto pkt = co_await read_packet(s, &seq);
      if (!pkt || pkt->empty()) co_return;
      const uint8_t cmd = static_cast<uint8_t>((*pkt)[0]);
      std::string arg = pkt->substr(1);
      QueryResult r;
      switch (cmd) {
        case mysql::kComQuit: co_return;
        case mysql::kComPing: r = QueryResult::ok(); break;
        case mysql::kComInitDb: r = qs.use(arg); break;
        case mysql::kComQuery: r = qs.run(arg); break;
        case mysql::kComFieldList: {
          r = qs.field_list(arg.substr(0, arg.find('\0')));
          if (!r.error) {
            // Column definitions and EOF, no column count (COM_FIELD_LIST reply).
            wire.clear();
            for (auto& c : r.cols) mysql::frame(&wire, mysql::column_definition(c), &seq);
            mysql::frame(&wire, mysql::eof_packet(mysql::kStatusAutocommit), &seq);
            if (!co_await send(s, wire)) co_return;
            continue;
          }
          break;
        }
        default:
          r = QueryResult::fail("");
          r.code = 1047;
          r.sqlstate = "08S01";
          r.message = "Unknown command(" + std::to_string(cmd) + ")";
      }
      if (!co_await send(s, encode(r, &seq))) co_return;
    }
  }

  awaitable<void> accept_loop() {
    auto self = shared_from_this();
    for (;;) {
      auto [ec, sock] = co_await acc.async_accept(tuple_awaitable);
      if (ec) {
        if (ec == asio::error::operation_aborted || !acc.is_open() || stopping) co_return;
        log("accept failed: " + ec.message());
        continue;
      }
      sock.set_option(tcp::no_delay(true));
      asio::co_spawn(ioc, session(std::move(sock)), [](std::exception_ptr e) {
        if (!e) return;
        try {
          std::rethrow_exception(e);
        } catch (const std::exception& ex) {
          log(std::string("session failed: ") + ex.what());
        }
      });
    }
  }
};

QueryPort::QueryPort(asio::io_context& ioc, Engine& engine, const std::string& host, int port)
    : impl_(std::make_shared<Impl>(ioc, engine)) {
  tcp::endpoint ep(asio::ip::make_address(host), static_cast<unsigned short>(port));
  boost::system::error_code ec;
  impl_->acc.open(ep.protocol(), ec);
  if (!ec) impl_->acc.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) impl_->acc.bind(ep, ec);
  if (!ec) impl_->acc.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) throw std::runtime_error("cannot listen on " + host + ":" + std::to_string(port) + ": " + ec.message());
  port_ = impl_->acc.local_endpoint().port();
}

QueryPort::~QueryPort() { stop(); }

void QueryPort::start() {
  asio::co_spawn(impl_->ioc, impl_->accept_loop(), [](std::exception_ptr) {});
}

void QueryPort::stop() {
  impl_->stopping = true;
  boost::system::error_code ec;
  impl_->acc.close(ec);
  for (auto* s : std::set<tcp::socket*>(impl_->socks)) s->close(ec);
}

}  // namespace cdc2doris::emu
