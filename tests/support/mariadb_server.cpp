#include "tests/support/mariadb_server.hpp"

#include <atomic>
#include <csignal>
#include <fstream>
#include <stdexcept>
#include <thread>
#include <unistd.h>

#include "tests/support/run_command.hpp"

namespace cdc2doris::test {

MariaDbServer::MariaDbServer() : dir_("cdc2doris-mariadb") {
  if (!std::filesystem::exists("/usr/sbin/mariadbd"))
    throw std::runtime_error("mariadbd not found (run scripts/setup)");
  port_ = free_port();
  const auto cnf = dir_ / "my.cnf";
  {
    std::ofstream out(cnf);
    out << "[mariadbd]\n"
        << "datadir=" << (dir_ / "data").string() << "\n"
        << "socket=" << (dir_ / "mysqld.sock").string() << "\n"
        << "pid-file=" << (dir_ / "mysqld.pid").string() << "\n"
        << "log-error=" << (dir_ / "error.log").string() << "\n"
        << "port=" << port_ << "\nbind-address=127.0.0.1\nskip-name-resolve\n"
        // Tests run as root; mariadbd accepts that when told so.
        << (::geteuid() == 0 ? "user=root\n" : "")
        << "log-bin=" << (dir_ / "data" / "binlog").string() << "\n"
        << "binlog-format=ROW\nbinlog-row-image=FULL\nserver-id=1\n"
        << "version=5.7.19-MariaDB-cdc2doris-test\n"
        << "character-set-server=utf8mb4\ncollation-server=utf8mb4_bin\n"
        // A test database: durability buys nothing, speed does.
        << "innodb-flush-log-at-trx-commit=0\nsync-binlog=0\ninnodb-doublewrite=0\n"
        << "innodb-buffer-pool-size=32M\ninnodb-log-file-size=16M\n"
        << "performance-schema=0\n";
  }
  auto r = run_command({"mariadb-install-db", "--defaults-file=" + cnf.string(),
                        "--auth-root-authentication-method=normal", "--skip-test-db"},
                       dir_.path(), std::chrono::seconds(180));
  if (r.status != 0)
    throw std::runtime_error("mariadb-install-db failed (" + std::to_string(r.status) + "): " + r.err + r.out);
  const auto out = (dir_ / "mariadbd.out").string();
  server_ = std::make_unique<Process>(
      ProcessOptions{{"/usr/sbin/mariadbd", "--defaults-file=" + cnf.string()}, {}, out, out, ""});
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  for (;;) {
    auto ping = run_command({"mariadb-admin", "--no-defaults", "-S", (dir_ / "mysqld.sock").string(), "-u", "root",
                             "--connect-timeout=2", "ping"},
                            dir_.path(), std::chrono::seconds(10));
    if (ping.status == 0) break;
    if (!server_->running() || std::chrono::steady_clock::now() > deadline)
      throw std::runtime_error("MariaDB did not start: " + log_tail());
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  sql("", "CREATE USER '" + user() + "'@'%' IDENTIFIED BY '" + password() + "';\nGRANT ALL ON *.* TO '" + user() +
              "'@'%';\n");
}

MariaDbServer::~MariaDbServer() {
  if (server_) server_->stop(std::chrono::seconds(20));
}

std::string MariaDbServer::sql(const std::string& db, const std::string& sql) const {
  static std::atomic<unsigned> n{0};
  const auto file = dir_ / ("script-" + std::to_string(n++) + ".sql");
  {
    std::ofstream f(file, std::ios::binary);
    f << sql;
  }
  // The script comes on stdin: in batch mode the client then stops at the
  // first error and exits non-zero (`source` would go on after an error).
  std::string cmd = "exec mariadb --no-defaults -S '" + (dir_ / "mysqld.sock").string() +
                    "' -u root --default-character-set=utf8mb4 -N -B --raw";
  if (!db.empty()) cmd += " '" + db + "'";
  cmd += " < '" + file.string() + "'";
  std::vector<std::string> argv{"sh", "-c", cmd};
  auto out = run_checked(argv, dir_.path());
  std::error_code ec;
  std::filesystem::remove(file, ec);
  return out;
}

std::string MariaDbServer::log_tail(size_t bytes) const { return file_tail(dir_ / "error.log", bytes); }

}  // namespace cdc2doris::test
