#pragma once
// A real MariaDB server (Debian's mariadb-server) for end-to-end tests with
// Debezium's MySQL connector: a fresh data dir (mariadb-install-db) in a temp
// dir, binlog in ROW format with full row images, a free 127.0.0.1 port and a
// unix socket in the temp dir, never as a system service. The server dies
// with the test (PDEATHSIG, cleanup registry on interrupt).
//
// Debezium 3.6 has no MariaDB connector on Maven Central, and its MySQL
// connector takes any server version above 8 for MySQL 8.4+ (it then asks for
// SHOW BINARY LOG STATUS, which MariaDB 10.11 lacks). The server therefore
// reports a MySQL 5.7-style version string (`version` option); MariaDB itself
// is unchanged.
#include <filesystem>
#include <memory>
#include <string>

#include "tools/fixtures/process.hpp"
#include "tools/fixtures/temp_dir.hpp"

namespace cdc2doris::test {

class MariaDbServer {
 public:
  MariaDbServer();  // install-db + start; throws std::runtime_error with the log tail
  ~MariaDbServer();
  MariaDbServer(const MariaDbServer&) = delete;
  MariaDbServer& operator=(const MariaDbServer&) = delete;

  int port() const { return port_; }
  std::string host() const { return "127.0.0.1"; }
  // A user with every privilege (replication included), password auth over TCP.
  std::string user() const { return "cdc"; }
  std::string password() const { return "cdc-pw"; }
  const std::filesystem::path& dir() const { return dir_.path(); }

  // Runs `sql` with the mariadb client as root over the socket (batch mode,
  // no column names, raw output: one line per row, tab-separated). Throws with
  // the client's stderr on any error.
  std::string sql(const std::string& db, const std::string& sql) const;
  std::string log_tail(size_t bytes = 4000) const;

 private:
  TempDir dir_;
  int port_ = 0;
  std::unique_ptr<Process> server_;
};

}  // namespace cdc2doris::test
