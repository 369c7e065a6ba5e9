// The daemon against a Doris (emulator) run securely (issue 35 item 3): FEs
// and BEs over HTTPS with a private CA, a user without LOAD_PRIV, and FE
// failover between two FEs of one cluster.
#include <catch2/catch.hpp>

#include <boost/json.hpp>
#include <filesystem>
#include <set>
#include <fstream>
#include <thread>

#include "daemon/exit_codes.hpp"
#include "tests/support/run_command.hpp"
#include "tests/support/test_pki.hpp"
#include "tools/doris_emulator/launcher.hpp"
#include "tools/fixtures/kafka_broker.hpp"
#include "tools/fixtures/process.hpp"
#include "tools/fixtures/temp_dir.hpp"
#include "tools/workload/workload.hpp"

using namespace cdc2doris;
using namespace cdc2doris::test;
using namespace std::chrono_literals;

namespace {

// The daemon's configuration; `doris` is the whole doris: section body.
std::string config(const std::string& kafka, const std::string& server, const std::string& doris, const TempDir& dir) {
  return "kafka:\n  bootstrap_servers: \"" + kafka + "\"\n  group_id: " + server + "\n  topic_regex: \"^" + server +
         "\\\\..*\"\n  properties:\n    auto.offset.reset: earliest\n    session.timeout.ms: \"6000\"\n"
         "doris:\n" + doris +
         "  request_timeout: 5s\n  connect_timeout: 1s\n"
         "delivery:\n  label_prefix: " + server + "\n  epoch_interval: 300ms\n  shutdown_deadline: 20s\n"
         "state:\n  dir: " + (dir / "state").string() + "\nadmin:\n  listen: 127.0.0.1:0\n";
}

struct World {
  workload::Generator gen;
  explicit World(const std::string& server) : gen(options(server)) {}
  static workload::Options options(const std::string& server) {
    workload::Options wo;
    wo.server = server;
    wo.db = "shop";
    wo.tables = 2;
    wo.partitions = 2;
    wo.format = workload::Format::Schema;
    return wo;
  }
  void create(Emulator& emu, KafkaBroker& broker) {
    emu.sql("", "CREATE DATABASE IF NOT EXISTS shop");
    emu.sql("", "CREATE DATABASE IF NOT EXISTS ref");
    for (const auto& t : gen.tables()) {
      const std::string table = t.substr(t.find('.') + 1);
      const std::string ddl = gen.create_table_sql(table);
      emu.sql("shop", ddl);
      std::string ref = ddl;
      ref.replace(ref.find("`shop`."), 7, "`ref`.");
      emu.sql("ref", ref);
      broker.create_topic(gen.options().server + "." + t, 2);
    }
  }
  void produce(KafkaBroker& broker, size_t n) {
    std::map<std::string, std::vector<TestRecord>> by_topic;
    for (const auto& r : gen.generate(n)) by_topic[r.topic].push_back({r.key, r.value, r.headers, r.partition});
    for (const auto& [t, v] : by_topic) broker.produce(t, v);
  }
  // Every table holds exactly the model's keys (for an emulator whose BEs
  // speak TLS only, where the launcher cannot load the reference tables).
  bool same_keys(Emulator& emu, std::string* why) {
    for (const auto& t : gen.tables()) {
      std::set<int64_t> got, want;
      for (const auto& line : emu.rows("shop", t.substr(t.find('.') + 1)))
        got.insert(boost::json::parse(line).as_object().at("id").to_number<int64_t>());
      for (const auto& [k, row] : gen.expected().at(t).rows) want.insert(k);
      if (got != want) {
        *why = t + ": " + std::to_string(got.size()) + " keys, model " + std::to_string(want.size());
        return false;
      }
    }
    return true;
  }
  // Every table equals the model of the records produced (loaded into ref.*
  // and compared by checksum: nothing lost, nothing doubled, nothing stale).
  bool matches(Emulator& emu, std::string* why) {
    for (const auto& t : gen.tables()) {
      const std::string table = t.substr(t.find('.') + 1);
      emu.sql("ref", "TRUNCATE TABLE " + table);
      std::string body;
      for (const auto& [k, row] : gen.expected().at(t).rows) body += row + "\n";
      auto r = emu.stream_load("ref", table, body, {{"format", "json"}, {"read_json_by_line", "true"}});
      if (r.body.find("\"Success\"") == std::string::npos) throw std::runtime_error("ref load: " + r.body);
      auto got = emu.checksum("shop", table);
      auto want = emu.checksum("ref", table);
      if (got != want) {
        *why = t + ": " + std::to_string(got.second) + " rows, model " + std::to_string(want.second);
        return false;
      }
    }
    return true;
  }
};

bool eventually(const std::function<bool()>& f, std::chrono::seconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (f()) return true;
    std::this_thread::sleep_for(500ms);
  }
  return f();
}

std::unique_ptr<Process> start_daemon(const TempDir& dir, const std::string& cfg_text,
                                      const std::map<std::string, std::string>& env = {}) {
  std::ofstream(dir / "cfg.yaml") << cfg_text;
  ProcessOptions po;
  po.argv = {CDC2DORIS_DAEMON_BIN, "run", "--config", (dir / "cfg.yaml").string()};
  po.env = env;
  po.stdout_file = (dir / "daemon.log").string();
  po.stderr_file = (dir / "daemon.log").string();
  return std::make_unique<Process>(po);
}

}  // namespace

TEST_CASE("daemon over HTTPS: FE and BE with a private CA and the hostname check on", "[daemon][doris][tls]") {
  auto& broker = KafkaBroker::shared();
  TempDir dir("doris-tls");
  TestPki pki;
  pki.issue("doris", "DNS:localhost,IP:127.0.0.1");
  EmulatorOptions eo;
  eo.users = {"root:Tls-pw-1"};
  eo.tls_cert = pki.file("doris.pem");
  eo.tls_key = pki.file("doris.key");
  eo.stderr_file = (dir / "emulator.log").string();
  Emulator emu(eo);
  World w("dtls");
  w.create(emu, broker);
  w.produce(broker, 600);

  const std::string fe = "https://localhost:" + emu.fe().substr(emu.fe().rfind(':') + 1);
  const std::string doris = "  fe: [\"" + fe + "\"]\n  user: root\n  password: \"${DORIS_PASSWORD:-Tls-pw-1}\"\n"
                            "  tls:\n    ca_file: " + pki.file("ca.pem") + "\n";
  const std::map<std::string, std::string> env{{"DORIS_PASSWORD", "Tls-pw-1"}};
  // check --connect passes through TLS too.
  std::ofstream(dir / "cfg.yaml") << config(broker.bootstrap(), "dtls", doris, dir);
  auto check = run_command({CDC2DORIS_DAEMON_BIN, "check", "--connect", "--config", (dir / "cfg.yaml").string()}, dir.path());
  INFO(check.out + check.err);
  CHECK(check.status == daemon::kExitOk);
  CHECK_THAT(check.out, Catch::Contains("doris FE " + fe + ": authenticated as root"));

  auto daemon = start_daemon(dir, config(broker.bootstrap(), "dtls", doris, dir), env);
  std::string why;
  const bool done = eventually([&] { return w.same_keys(emu, &why); }, 120s);
  INFO(why);
  INFO(read_file(dir / "daemon.log"));
  CHECK(done);
  CHECK(daemon->stop(30s) == 0);

  // The wrong CA: check --connect fails (exit 5) naming the FE and the reason.
  const std::string bad = "  fe: [\"" + fe + "\"]\n  user: root\n  password: \"${DORIS_PASSWORD:-Tls-pw-1}\"\n"
                          "  tls:\n    ca_file: " + pki.file("other-ca.pem") + "\n  max_attempts: 1\n";
  std::ofstream(dir / "cfg.yaml") << config(broker.bootstrap(), "dtls", bad, dir);
  auto wrong = run_command({CDC2DORIS_DAEMON_BIN, "check", "--connect", "--config", (dir / "cfg.yaml").string()}, dir.path());
  INFO(wrong.out + wrong.err);
  CHECK(wrong.status == daemon::kExitCheckFailed);
  CHECK_THAT(wrong.out, Catch::Contains("tls handshake with localhost:" + emu.fe().substr(emu.fe().rfind(':') + 1) +
                                        " failed: unable to get local issuer certificate"));
}

TEST_CASE("daemon run: a Doris user without LOAD_PRIV stops the daemon with the GRANT that fixes it",
          "[daemon][doris][privileges]") {
  auto& broker = KafkaBroker::shared();
  TempDir dir("doris-priv");
  EmulatorOptions eo;
  eo.users = {"root:Root-pw-2"};
  eo.stderr_file = (dir / "emulator.log").string();
  Emulator emu(eo);
  World w("dpriv");
  w.create(emu, broker);
  emu.sql("", "CREATE USER 'loader'@'%' IDENTIFIED BY 'Ldr-pw-3'");
  emu.sql("", "GRANT ALTER_PRIV ON shop.* TO loader");
  w.produce(broker, 200);
  const std::string doris = "  fe: [\"" + emu.fe() + "\"]\n  user: loader\n  password: \"${DORIS_PASSWORD}\"\n";
  auto daemon = start_daemon(dir, config(broker.bootstrap(), "dpriv", doris, dir), {{"DORIS_PASSWORD", "Ldr-pw-3"}});
  // Fatal at the first refused load: the process ends (exit 1) instead of
  // retrying a load Doris will always refuse.
  auto st = daemon->wait(90s);
  const std::string log = read_file(dir / "daemon.log");
  INFO(log);
  CHECK(st == std::optional<int>(daemon::kExitFatal));
  CHECK_THAT(log, Catch::Contains("user 'loader' lacks a privilege; fix: GRANT LOAD_PRIV ON shop.orders_"));
  CHECK_THAT(log, Catch::Contains("Access denied; you need (at least one of) the Admin_priv,Load_priv privilege(s)"));
  CHECK(log.find("Ldr-pw-3") == std::string::npos);
  CHECK(emu.rows("shop", "orders_0").empty());
}

TEST_CASE("daemon FE failover: the first FE down, then killed mid-run; nothing lost or doubled",
          "[daemon][doris][failover]") {
  auto& broker = KafkaBroker::shared();
  TempDir dir("doris-failover");
  EmulatorOptions eo;
  eo.users = {"root:Fo-pw-4"};
  eo.extra_fes = 1;
  eo.stderr_file = (dir / "emulator.log").string();
  Emulator emu(eo);
  REQUIRE(emu.fes().size() == 2);
  World w("dfail");
  w.create(emu, broker);
  const std::string doris = "  fe: [\"" + emu.fes()[0] + "\", \"" + emu.fes()[1] +
                            "\"]\n  user: root\n  password: \"${DORIS_PASSWORD}\"\n";
  const std::map<std::string, std::string> env{{"DORIS_PASSWORD", "Fo-pw-4"}};

  // fe1 not listening from the start: everything goes through fe2.
  emu.set_fe_online(0, false);
  w.produce(broker, 400);
  auto daemon = start_daemon(dir, config(broker.bootstrap(), "dfail", doris, dir), env);
  std::string why;
  bool done = eventually([&] { return w.matches(emu, &why); }, 120s);
  INFO(why);
  INFO(read_file(dir / "daemon.log"));
  REQUIRE(done);

  // fe1 back, then killed while records keep coming.
  emu.set_fe_online(0, true);
  w.produce(broker, 300);
  std::this_thread::sleep_for(1500ms);
  emu.set_fe_online(0, false);
  w.produce(broker, 300);
  done = eventually([&] { return w.matches(emu, &why); }, 120s);
  INFO(why);
  CHECK(done);
  CHECK(daemon->running());
  // The client did meet the dead FE and moved on.
  CHECK_THAT(read_file(dir / "daemon.log"), Catch::Contains("endpoint " + emu.fes()[0] + " quarantined"));
  CHECK(daemon->stop(30s) == 0);
}
