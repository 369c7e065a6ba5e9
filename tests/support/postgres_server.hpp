#pragma once
// A real PostgreSQL 15 server (Debian's postgresql package) for end-to-end
// tests with Debezium: a fresh cluster (initdb) in a temp dir, wal_level=
// logical, listening on a free 127.0.0.1 port and on a unix socket inside the
// temp dir, never as a system service. PostgreSQL refuses to run as root, so
// when the test runs as root the server runs as the `postgres` user (setpriv,
// which also re-arms the parent-death signal that the uid change clears). The
// server dies with the test (PDEATHSIG, cleanup registry on interrupt); its
// files are removed with the temp dir.
#include <filesystem>
#include <memory>
#include <string>

#include "tools/fixtures/process.hpp"
#include "tools/fixtures/temp_dir.hpp"

namespace cdc2doris::test {

class PostgresServer {
 public:
  PostgresServer();  // initdb + start; throws std::runtime_error with the log tail
  ~PostgresServer();
  PostgresServer(const PostgresServer&) = delete;
  PostgresServer& operator=(const PostgresServer&) = delete;

  int port() const { return port_; }
  std::string host() const { return "127.0.0.1"; }
  std::string user() const { return "postgres"; }  // superuser, trust auth on loopback
  const std::filesystem::path& dir() const { return dir_.path(); }

  // Runs `sql` with psql against `db` (ON_ERROR_STOP, one transaction per
  // statement unless the script says BEGIN). Returns stdout in unaligned,
  // tuples-only form (`-At`); throws with psql's stderr on any error.
  std::string psql(const std::string& db, const std::string& sql) const;
  std::string log_tail(size_t bytes = 4000) const;

 private:
  TempDir dir_;
  int port_ = 0;
  std::unique_ptr<Process> server_;
};

}  // namespace cdc2doris::test
