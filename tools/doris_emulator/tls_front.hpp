#pragma once
// TLS in front of the emulator's HTTP listeners (--tls-cert/--tls-key), as a
// Doris with enable_https serves its FE (fe Config.java enable_https,
// key_store_path: "if enabled, http port will not be available") and BE
// (be/src/common/config.cpp enable_https, ssl_certificate_path,
// ssl_private_key_path) over HTTPS. Each accepted connection is handshaken
// here and its plaintext relayed to a loopback-only plain listener that runs
// the ordinary HTTP session, so one session implementation serves both.
#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>

#include <string>

namespace cdc2doris::emu {

class TlsFront {
 public:
  // Throws std::runtime_error naming the file when a PEM cannot be loaded.
  TlsFront(const std::string& cert_file, const std::string& key_file);
  // Handshakes `client`, connects to `inner` and relays bytes both ways until
  // either side closes; a reset of the inner side resets the client.
  boost::asio::awaitable<void> relay(boost::asio::ip::tcp::socket client, boost::asio::ip::tcp::endpoint inner);

 private:
  boost::asio::ssl::context ctx_;
};

}  // namespace cdc2doris::emu
