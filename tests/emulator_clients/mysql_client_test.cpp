// The emulator's MySQL-protocol query port driven by clients nobody here
// wrote: Debian's MariaDB command-line client and MySQL Connector/J
// (JdbcClientTest.java; jars from tests/emulator_clients/pom.xml via
// scripts/setup).
#include "tools/doris_emulator/launcher.hpp"
#include "tools/fixtures/process.hpp"
#include "tools/fixtures/temp_dir.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>

using namespace cdc2doris::test;

namespace {

struct Out {
  int rc;
  std::string text;
};

Out run(std::vector<std::string> argv) {
  TempDir dir;
  std::string out = (dir.path() / "out").string();
  ProcessOptions o;
  o.argv = std::move(argv);
  o.stdout_file = out;
  o.stderr_file = out + ".err";
  Process p(o);
  auto rc = p.wait(std::chrono::seconds(120));
  if (!rc) {
    p.kill9();
    FAIL("client did not finish within 120 s");
  }
  auto slurp = [](const std::string& path) {
    std::ifstream f(path);
    return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  };
  return {*rc, slurp(out) + slurp(out + ".err")};
}

// The fixture both clients read: users root (no password) and tester.
struct Fixture {
  Emulator emu;
  Fixture() : emu(opts()) {
    emu.sql("", "CREATE DATABASE d");
    emu.sql("d", "CREATE TABLE t (id BIGINT NOT NULL, v VARCHAR(8), ts DATETIME(3), a ARRAY<INT>) UNIQUE KEY(id) "
                 "DISTRIBUTED BY HASH(id) BUCKETS 1");
    auto r = emu.stream_load("d", "t",
                             "{\"id\":1,\"v\":\"a\",\"ts\":\"2023-11-14T22:13:54.026Z\",\"a\":[1,2]}\n"
                             "{\"id\":2,\"v\":\"b\",\"ts\":\"2023-11-14T22:13:54.026Z\",\"a\":[]}\n"
                             "{\"id\":3,\"v\":null,\"ts\":null,\"a\":null}\n",
                             {{"format", "json"}, {"label", "load_1"}});
    REQUIRE(r.body.find("\"Status\": \"Success\"") != std::string::npos);
  }
  static EmulatorOptions opts() {
    EmulatorOptions o;
    o.users = {"root:", "tester:s3cret"};
    return o;
  }
  std::vector<std::string> mysql(const std::string& user, const std::string& pw, const std::string& sql) {
    std::vector<std::string> a{"mysql", "-h127.0.0.1", "-P" + std::to_string(emu.query_port()), "-u" + user,
                               "--batch", "--skip-column-names", "-D", "d", "-e", sql};
    if (!pw.empty()) a.insert(a.begin() + 4, "-p" + pw);
    return a;
  }
};

}  // namespace

TEST_CASE("query port: the MariaDB command-line client", "[emulator][query_port]") {
  Fixture f;
  auto r = run(f.mysql("root", "", "SELECT id, v, ts, a FROM t WHERE id >= 1 AND id < 3 ORDER BY id DESC"));
  INFO(r.text);
  CHECK(r.rc == 0);
  CHECK(r.text == "2\tb\t2023-11-15 06:13:54.026\t[]\n1\ta\t2023-11-15 06:13:54.026\t[1, 2]\n");

  r = run(f.mysql("tester", "s3cret", "SELECT COUNT(*) FROM t; SELECT v FROM t WHERE v IS NULL; SELECT DATABASE()"));
  INFO(r.text);
  CHECK(r.rc == 0);
  CHECK(r.text == "3\nNULL\nd\n");

  r = run(f.mysql("tester", "s3cret", "SHOW TRANSACTION WHERE LABEL = 'load_1'"));
  INFO(r.text);
  CHECK(r.rc == 0);
  CHECK(r.text.find("load_1\tBE: 127.0.0.1\tVISIBLE\tBACKEND_STREAMING") != std::string::npos);

  r = run(f.mysql("root", "", "SHOW DATABASES; SHOW TABLES; SHOW VARIABLES LIKE 'time_zone'"));
  INFO(r.text);
  CHECK(r.text == "d\nt\ntime_zone\tAsia/Shanghai\n");

  r = run(f.mysql("root", "", "SHOW CREATE TABLE t"));
  INFO(r.text);
  CHECK(r.text.find("`a` ARRAY<INT> NULL") != std::string::npos);

  r = run(f.mysql("tester", "nope", "SELECT 1"));
  INFO(r.text);
  CHECK(r.rc != 0);
  CHECK(r.text.find("ERROR 1045 (28000): Access denied for user 'tester'") != std::string::npos);

  r = run(f.mysql("root", "", "SELECT id FROM t WHERE id = 1 OR id = 2"));
  INFO(r.text);
  CHECK(r.rc != 0);
  CHECK(r.text.find("ERROR 1105 (HY000) at line 1: errCode = 2, detailMessage = Unsupported statement type: OR") !=
        std::string::npos);

  r = run(f.mysql("root", "", "SELECT * FROM nope"));
  INFO(r.text);
  CHECK(r.text.find("Table [nope] does not exist in database [d].") != std::string::npos);

  r = run({"mysqladmin", "-h127.0.0.1", "-P" + std::to_string(f.emu.query_port()), "-uroot", "ping"});
  INFO(r.text);
  CHECK(r.rc == 0);
  CHECK(r.text.find("mysqld is alive") != std::string::npos);
}

TEST_CASE("query port: MySQL Connector/J", "[emulator][query_port]") {
  const std::string lib = CDC2DORIS_JDBC_LIB_DIR;
  INFO("jars from tests/emulator_clients/pom.xml (scripts/setup) expected in " << lib);
  std::string cp;
  for (auto& e : std::filesystem::directory_iterator(lib))
    if (e.path().extension() == ".jar") cp += (cp.empty() ? "" : ":") + e.path().string();
  REQUIRE(cp.find("mysql-connector-j") != std::string::npos);
  Fixture f;
  auto r = run({"java", "-cp", cp, CDC2DORIS_JDBC_TEST_SRC, std::to_string(f.emu.query_port()), "d"});
  INFO(r.text);
  CHECK(r.rc == 0);
  CHECK(r.text.find("JDBC OK") != std::string::npos);
}
