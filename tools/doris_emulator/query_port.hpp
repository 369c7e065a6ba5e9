#pragma once
// The FE's MySQL-protocol query port (Doris: 9030) of the emulator: accept
// loop and one coroutine per connection on the server's io_context.
// Authentication uses the same users as HTTP Basic auth (--user).
#include "tools/doris_emulator/engine.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <memory>
#include <string>

namespace cdc2doris::emu {

class QueryPort {
 public:
  // Binds (throws std::runtime_error naming host:port on failure).
  QueryPort(boost::asio::io_context& ioc, Engine& engine, const std::string& host, int port);
  ~QueryPort();
  void start();
  void stop();  // closes the listener and every open connection
  int port() const { return port_; }

  struct Impl;

 private:
  std::shared_ptr<Impl> impl_;
  int port_ = 0;
};

}  // namespace cdc2doris::emu
