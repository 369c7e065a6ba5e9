#pragma once
// HTTP front of the Doris emulator: one FE listener (also serving the
// /_emulator/ admin API) and N BE listeners, all on one io_context thread.
// Sessions are C++20 coroutines, so hundreds of concurrent streaming loads
// cost one coroutine frame each, not a thread.
#include "tools/doris_emulator/engine.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <memory>
#include <set>
#include <string>
#include <vector>

namespace cdc2doris::emu {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int fe_port = 0;              // 0: any free port
  std::vector<int> be_ports;    // one entry per BE; 0: any free port
  int query_port = 0;           // MySQL-protocol query port; 0: any free port, -1: none
  // PEM certificate chain and private key: FE and BE HTTP ports serve HTTPS
  // only (tls_front.hpp). Empty: plain HTTP.
  std::string tls_cert, tls_key;
  // More FE HTTP listeners over the same engine (0: any free port), as the
  // follower FEs of a Doris cluster: each answers a Stream Load with its own
  // 307 to a BE and serves SQL and metadata. POST /_emulator/fes/{i}/offline
  // closes FE i (0: the first) like a killed FE process; .../online reopens it.
  std::vector<int> extra_fe_ports;
};

class QueryPort;

class Server {
 public:
  // Binds all listeners (throws std::runtime_error with the port on failure)
  // and tells the engine the BE addresses.
  Server(boost::asio::io_context& ioc, Engine& engine, ServerOptions opts);
  ~Server();
  void start();  // spawns accept loops and the housekeeping timer
  void stop();   // closes listeners and every open connection
  int fe_port() const { return fe_port_; }
  const std::vector<int>& fe_ports() const { return fe_ports_; }  // first FE, then the extra ones
  const std::vector<int>& be_ports() const { return be_ports_; }
  int query_port() const;  // -1: none
  std::string ready_line() const;  // the one JSON line printed on stdout

  struct Impl;

 private:
  boost::asio::io_context& ioc_;
  Engine& engine_;
  ServerOptions opts_;
  int fe_port_ = 0;
  std::vector<int> fe_ports_;
  std::vector<int> be_ports_;
  std::unique_ptr<Impl> impl_;
  std::unique_ptr<QueryPort> query_;
};

}  // namespace cdc2doris::emu
