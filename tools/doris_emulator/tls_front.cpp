#include "tools/doris_emulator/tls_front.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include <stdexcept>
#include <vector>

namespace cdc2doris::emu {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using namespace asio::experimental::awaitable_operators;

namespace {

constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);

void hard_close(tcp::socket& s) {
  boost::system::error_code ec;
  s.set_option(asio::socket_base::linger(true, 0), ec);
  s.close(ec);
}

}  // namespace

TlsFront::TlsFront(const std::string& cert_file, const std::string& key_file) : ctx_(asio::ssl::context::tls_server) {
  ctx_.set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2 |
                   asio::ssl::context::no_sslv3 | asio::ssl::context::single_dh_use);
  boost::system::error_code ec;
  ctx_.use_certificate_chain_file(cert_file, ec);
  if (ec) throw std::runtime_error("cannot load TLS certificate " + cert_file + ": " + ec.message());
  ctx_.use_private_key_file(key_file, asio::ssl::context::pem, ec);
  if (ec) throw std::runtime_error("cannot load TLS private key " + key_file + ": " + ec.message());
}

asio::awaitable<void> TlsFront::relay(tcp::socket client, tcp::endpoint inner) {
  auto ex = co_await asio::this_coro::executor;
  asio::ssl::stream<tcp::socket> tls(std::move(client), ctx_);
  {
    // A client that connects and never handshakes must not hold the relay.
    asio::steady_timer guard(ex);
    guard.expires_after(std::chrono::seconds(30));
    guard.async_wait([&](const boost::system::error_code& e) {
      if (!e) hard_close(tls.next_layer());
    });
    auto [hec] = co_await tls.async_handshake(asio::ssl::stream_base::server, tuple_awaitable);
    guard.cancel();
    // A failed handshake (unknown CA, wrong name on the client side) ends
    // here; the client reports the alert it sent or received.
    if (hec) co_return;
  }
  tcp::socket plain(ex);
  auto [cec] = co_await plain.async_connect(inner, tuple_awaitable);
  if (cec) {
    hard_close(tls.next_layer());
    co_return;
  }
  plain.set_option(tcp::no_delay(true));
  bool inner_reset = false;
  auto up = [&]() -> asio::awaitable<void> {  // client -> session
    std::vector<char> buf(64 << 10);
    for (;;) {
      auto [ec, n] = co_await tls.async_read_some(asio::buffer(buf), tuple_awaitable);
      if (n > 0) {
        auto [wec, w] = co_await asio::async_write(plain, asio::buffer(buf.data(), n), tuple_awaitable);
        if (wec) break;
      }
      if (ec) break;
    }
    boost::system::error_code ignored;
    plain.shutdown(tcp::socket::shutdown_send, ignored);
  };
  auto down = [&]() -> asio::awaitable<void> {  // session -> client
    std::vector<char> buf(64 << 10);
    for (;;) {
      auto [ec, n] = co_await plain.async_read_some(asio::buffer(buf), tuple_awaitable);
      if (n > 0) {
        auto [wec, w] = co_await asio::async_write(tls, asio::buffer(buf.data(), n), tuple_awaitable);
        if (wec) break;
      }
      if (ec) {
        inner_reset = ec != asio::error::eof;
        break;
      }
    }
    // The session closed (or reset, as a fault or a crashed BE does): the
    // client sees the same at the TCP level. No close_notify is sent, as a
    // server closing after a complete Content-Length answer may do.
    if (inner_reset) hard_close(tls.next_layer());
    else {
      boost::system::error_code ignored;
      tls.next_layer().shutdown(tcp::socket::shutdown_send, ignored);
    }
  };
  co_await (up() && down());
  boost::system::error_code ignored;
  tls.next_layer().close(ignored);
  plain.close(ignored);
}

}  // namespace cdc2doris::emu
