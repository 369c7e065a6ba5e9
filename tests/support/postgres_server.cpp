#include "tests/support/postgres_server.hpp"

#include <atomic>
#include <csignal>
#include <fstream>
#include <pwd.h>
#include <stdexcept>
#include <thread>
#include <unistd.h>

#include "tests/support/run_command.hpp"

namespace cdc2doris::test {

namespace {
const std::string kBin = "/usr/lib/postgresql/15/bin/";

// The argv prefix that runs a PostgreSQL binary as a non-root user.
std::vector<std::string> as_postgres(const std::filesystem::path& dir) {
  if (::geteuid() != 0) return {};
  const passwd* pw = ::getpwnam("postgres");
  if (pw == nullptr) throw std::runtime_error("PostgresServer: running as root but there is no 'postgres' user");
  if (::chown(dir.c_str(), pw->pw_uid, pw->pw_gid) != 0)
    throw std::runtime_error("PostgresServer: chown " + dir.string() + " failed");
  return {"setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups", "--pdeathsig", "SIGKILL", "--"};
}
}  // namespace

PostgresServer::PostgresServer() : dir_("cdc2doris-pg") {
  if (!std::filesystem::exists(kBin + "postgres"))
    throw std::runtime_error("PostgreSQL 15 not found in " + kBin + " (run scripts/setup)");
  port_ = free_port();
  auto prefix = as_postgres(dir_.path());
  auto initdb = prefix;
  initdb.insert(initdb.end(), {kBin + "initdb", "-D", (dir_ / "data").string(), "-U", "postgres", "--auth=trust",
                               "-E", "UTF8", "--locale=C.UTF-8", "--no-sync", "--no-instructions"});
  auto r = run_command(initdb, dir_.path(), std::chrono::seconds(120));
  if (r.status != 0) throw std::runtime_error("initdb failed (" + std::to_string(r.status) + "): " + r.err + r.out);

  auto argv = prefix;
  argv.insert(argv.end(), {kBin + "postgres", "-D", (dir_ / "data").string(), "-k", dir_.path().string(), "-p",
                           std::to_string(port_), "-c", "listen_addresses=127.0.0.1",
                           // Debezium's pgoutput slots; a few per test binary.
                           "-c", "wal_level=logical", "-c", "max_wal_senders=10", "-c", "max_replication_slots=10",
                           // pg_xact_commit_timestamp: the commit time pgoutput sends.
                           "-c", "track_commit_timestamp=on",
                           // A test database: durability buys nothing, speed does.
                           "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
                           "-c", "shared_buffers=32MB", "-c", "log_min_messages=warning"});
  const auto log = (dir_ / "postgres.log").string();
  server_ = std::make_unique<Process>(ProcessOptions{argv, {}, log, log, ""});
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  for (;;) {
    auto ready = run_command({kBin + "pg_isready", "-q", "-h", dir_.path().string(), "-p", std::to_string(port_)},
                             dir_.path(), std::chrono::seconds(10));
    if (ready.status == 0) break;
    if (!server_->running() || std::chrono::steady_clock::now() > deadline)
      throw std::runtime_error("PostgreSQL did not start: " + log_tail());
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

PostgresServer::~PostgresServer() {
  // SIGINT is PostgreSQL's fast shutdown: backends (and Debezium's walsender)
  // are disconnected instead of waited for.
  if (server_) {
    server_->signal(SIGINT);
    if (!server_->wait(std::chrono::seconds(20))) server_->kill9();
  }
}

std::string PostgresServer::psql(const std::string& db, const std::string& sql) const {
  static std::atomic<unsigned> n{0};
  const auto file = dir_ / ("script-" + std::to_string(n++) + ".sql");
  {
    std::ofstream out(file, std::ios::binary);
    out << sql;
  }
  auto out = run_checked({kBin + "psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-At", "-h", dir_.path().string(), "-p",
                          std::to_string(port_), "-U", "postgres", "-d", db, "-f", file.string()},
                         dir_.path());
  std::error_code ec;
  std::filesystem::remove(file, ec);
  return out;
}

std::string PostgresServer::log_tail(size_t bytes) const { return file_tail(dir_ / "postgres.log", bytes); }

}  // namespace cdc2doris::test
