// `cdc2doris check` tells the truth: what `run` would reject, `check` rejects
// (exit 2, file:line:col) and `run` exits 2 with the same message instead of
// dying by a signal; `check --connect` really reaches Kafka (a metadata round
// trip), the configured topics, an authenticated Doris FE and every target
// table it can know of (exit 5 with each reason, no secret printed). Also the
// CLI's own papercuts: unknown flags, per-command help, `state show` on a
// wrong path.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "daemon/exit_codes.hpp"
#include "tools/doris_emulator/launcher.hpp"
#include "tools/fixtures/kafka_broker.hpp"
#include "tools/fixtures/process.hpp"
#include "tools/fixtures/temp_dir.hpp"

using namespace cdc2doris;
using namespace cdc2doris::test;
using namespace std::chrono_literals;

namespace {

struct Ran {
  std::optional<int> status;  // nullopt: still running after the timeout (killed)
  bool signalled = false;
  std::string output;         // stdout + stderr
};

// Runs the binary with `args`, or `argv` as given (a shell pipeline) when set.
Ran run_cli(const std::vector<std::string>& args, const TempDir& dir, std::map<std::string, std::string> env = {},
            std::chrono::seconds timeout = 60s, std::vector<std::string> argv = {}) {
  ProcessOptions po;
  po.argv = argv.empty() ? std::vector<std::string>{CDC2DORIS_DAEMON_BIN} : std::move(argv);
  po.argv.insert(po.argv.end(), args.begin(), args.end());
  po.env = std::move(env);
  const auto out = (dir / "cli.out").string();
  std::filesystem::remove(out);
  po.stdout_file = out;
  po.stderr_file = out;
  Process p(po);
  Ran r;
  r.status = p.wait(timeout);
  if (!r.status) p.kill9();
  // Process::wait reports a signal death as 128 + signo.
  r.signalled = r.status && *r.status > 128;
  std::ifstream in(out);
  std::stringstream ss;
  ss << in.rdbuf();
  r.output = ss.str();
  return r;
}

void write(const std::filesystem::path& p, const std::string& s) { std::ofstream(p) << s; }

// A valid configuration with `extra` appended under the section it names.
std::string config(const std::string& kafka, const std::string& fe, const TempDir& dir,
                   const std::string& kafka_extra = "  topics: [t]\n", const std::string& doris_extra = "",
                   const std::string& tail = "") {
  return "kafka:\n  bootstrap_servers: \"" + kafka + "\"\n  group_id: check-test\n" + kafka_extra +
         "doris:\n  fe: [\"" + fe + "\"]\n  user: root\n  password: \"${DORIS_PASSWORD:-}\"\n"
         "  connect_timeout: 1s\n  request_timeout: 3s\n  max_attempts: 1\n" + doris_extra +
         "state:\n  dir: " + (dir / "state").string() + "\nadmin:\n  listen: 127.0.0.1:0\n" + tail;
}

}  // namespace

TEST_CASE("check: rejects what run rejects, with file:line:col, run exits 2 instead of dying by a signal",
          "[daemon][check]") {
  TempDir dir("check-validate");
  struct Bad {
    std::string name, kafka, doris, tail, want;
  };
  const std::vector<Bad> bad = {
      {"topic regex", "  topic_regex: \"^dbz.(orders\"\n", "", "", ":4:16: kafka.topic_regex: invalid regex"},
      {"time zone", "  topics: [t]\n", "", "decoding:\n  time_zone: Mars/Olympus_Mons\n",
       ":17:14: decoding.time_zone: unknown time zone"},
      {"bare port", "  topics: [t]\n", "", "admin2", ":15:11: admin.listen: expected HOST:PORT"},
      {"ftp FE", "  topics: [t]\n", "", "ftpfe", "doris.fe[0]: expected an http:// or https:// URL"},
      {"io_threads 0", "  topics: [t]\n", "  io_threads: 0\n", "", ":12:15: doris.io_threads: expected an integer from 1 to 256, got '0'"},
      {"negative max_attempts", "  topics: [t]\n", "  io_threads: 1\n", "maxatt",
       "doris.max_attempts: expected an integer from 1 to 100, got '-3'"},
      {"misspelt librdkafka property", "  topics: [t]\n  properties:\n    sesion.timeout.ms: \"2000\"\n", "", "",
       ":6:5: kafka.properties.sesion.timeout.ms: No such configuration property"},
      {"duplicate section", "  topics: [t]\n", "", "doris:\n  user: other\n", ":16:1: doris: duplicate key"},
  };
  for (const auto& b : bad) {
    SECTION(b.name) {
      std::string text = config("127.0.0.1:1", "127.0.0.1:1", dir, b.kafka, b.doris, b.tail == "admin2" || b.tail == "ftpfe" || b.tail == "maxatt" ? "" : b.tail);
      if (b.tail == "admin2") text.replace(text.find("127.0.0.1:0"), 11, "8080");
      if (b.tail == "ftpfe") text.replace(text.find("\"127.0.0.1:1\"]"), 13, "\"ftp://127.0.0.1:1\"");
      if (b.tail == "maxatt") text.replace(text.find("max_attempts: 1"), 15, "max_attempts: -3");
      write(dir / "bad.yaml", text);
      INFO(text);
      auto check = run_cli({"check", "--config", (dir / "bad.yaml").string()}, dir);
      CHECK(check.status == std::optional<int>(daemon::kExitUsage));
      CHECK_THAT(check.output, Catch::Contains(b.want));
      auto run = run_cli({"run", "--config", (dir / "bad.yaml").string()}, dir, {}, 30s);
      CHECK(run.status == std::optional<int>(daemon::kExitUsage));
      CHECK_FALSE(run.signalled);
      CHECK_THAT(run.output, Catch::Contains(b.want));
      CHECK(run.output.find("terminate called") == std::string::npos);
    }
  }
}

TEST_CASE("cli: unknown flags are errors, per-command help, state show does not create a directory",
          "[daemon][cli]") {
  TempDir dir("check-cli");
  write(dir / "good.yaml", config("127.0.0.1:1", "127.0.0.1:1", dir));

  auto typo = run_cli({"check", "--conect", "--config", (dir / "good.yaml").string()}, dir);
  CHECK(typo.status == std::optional<int>(daemon::kExitUsage));
  CHECK_THAT(typo.output, Catch::Contains("unknown option --conect"));
  CHECK(run_cli({"run", "--config", (dir / "good.yaml").string(), "extra"}, dir).status ==
        std::optional<int>(daemon::kExitUsage));
  CHECK(run_cli({"version", "--verbose"}, dir).status == std::optional<int>(daemon::kExitUsage));

  auto help = run_cli({"run", "--help"}, dir);
  CHECK(help.status == std::optional<int>(daemon::kExitOk));
  CHECK_THAT(help.output, Catch::StartsWith("Usage: cdc2doris run --config FILE"));
  CHECK(help.output.find("state reset") == std::string::npos);  // not the global usage
  auto check_help = run_cli({"check", "--help"}, dir);
  CHECK_THAT(check_help.output, Catch::StartsWith("Usage: cdc2doris check --config FILE [--connect"));

  // A SASL user named like the program is not a secret: the version line
  // and the group id stay whole (the password still goes).
  write(dir / "sasl.yaml", config("127.0.0.1:1", "127.0.0.1:1", dir,
                                  "  topics: [t]\n  properties:\n    security.protocol: SASL_PLAINTEXT\n"
                                  "    sasl.mechanism: PLAIN\n    sasl.username: cdc2doris\n"
                                  "    sasl.password: Sasl-pw-31415\n"));
  {
    ProcessOptions po;
    po.argv = {CDC2DORIS_DAEMON_BIN, "run", "--config", (dir / "sasl.yaml").string()};
    po.stdout_file = (dir / "run.log").string();
    po.stderr_file = (dir / "run.log").string();
    Process daemon(po);
    std::string log;
    for (auto until = std::chrono::steady_clock::now() + 30s; std::chrono::steady_clock::now() < until;) {
      std::ifstream in(dir / "run.log");
      std::stringstream ss;
      ss << in.rdbuf();
      log = ss.str();
      if (log.find("admin endpoint") != std::string::npos) break;
      std::this_thread::sleep_for(100ms);
    }
    daemon.stop(30s);
    INFO(log);
    CHECK_THAT(log, Catch::Contains("[cdc2doris] cdc2doris "));
    CHECK_THAT(log, Catch::Contains(" starting; config "));
    CHECK(log.find("[cdc2doris] [redacted]") == std::string::npos);
    CHECK(log.find("Sasl-pw-31415") == std::string::npos);
  }
  std::filesystem::remove_all(dir / "state");

  // `state show` on a state.dir that does not exist: a message, no directory.
  auto show = run_cli({"state", "show", "--config", (dir / "good.yaml").string()}, dir);
  CHECK(show.status == std::optional<int>(daemon::kExitState));
  CHECK_THAT(show.output, Catch::Contains("no checkpoint state in " + (dir / "state").string()));
  CHECK_FALSE(std::filesystem::exists(dir / "state"));
  // An existing directory that holds no state is not turned into one either.
  std::filesystem::create_directories(dir / "state");
  auto empty = run_cli({"state", "show", "--config", (dir / "good.yaml").string()}, dir);
  CHECK(empty.status == std::optional<int>(daemon::kExitState));
  CHECK(std::filesystem::is_empty(dir / "state"));
}

TEST_CASE("check --connect: Kafka metadata, topics, authenticated Doris, derived tables, exit 5 with each reason",
          "[daemon][check][connect]") {
  auto& broker = KafkaBroker::shared();
  TempDir dir("check-connect");
  const std::string pw = "Chk-S3cret-pw-2718";
  EmulatorOptions eo;
  eo.users = {"root:" + pw};
  eo.stderr_file = (dir / "emulator.log").string();
  Emulator emu(eo);
  emu.sql("", "CREATE DATABASE shop");
  emu.sql("shop", "CREATE TABLE orders (id BIGINT NOT NULL, v STRING) UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1");
  broker.create_topic("dchk.shop.orders", 1);
  broker.create_topic("dchk.shop.missing_table", 1);
  const std::map<std::string, std::string> env{{"DORIS_PASSWORD", pw}};
  const auto cfg = (dir / "cfg.yaml").string();
  auto connect = [&](const std::string& text, const std::map<std::string, std::string>& e) {
    write(cfg, text);
    auto r = run_cli({"check", "--connect", "--config", cfg}, dir, e, 90s);
    UNSCOPED_INFO(r.output);
    CHECK(r.output.find(pw) == std::string::npos);
    return r;
  };

  SECTION("everything there: exit 0, the topic's table checked through the {db}.{table} template") {
    auto r = connect(config(broker.bootstrap(), emu.fe(), dir, "  topics: [dchk.shop.orders]\n"), env);
    CHECK(r.status == std::optional<int>(daemon::kExitOk));
    CHECK_THAT(r.output, Catch::Contains("kafka: reachable"));
    CHECK_THAT(r.output, Catch::Contains("topic dchk.shop.orders: exists (1 partition)"));
    CHECK_THAT(r.output, Catch::Contains("doris FE " + emu.fe() + ": authenticated as root"));
    CHECK_THAT(r.output, Catch::Contains("table shop.orders: UNIQUE_KEYS (from topic dchk.shop.orders)"));
  }
  SECTION("no broker listening") {
    auto r = connect(config("127.0.0.1:" + std::to_string(free_port()), emu.fe(), dir,
                            "  topics: [dchk.shop.orders]\n"),
                     env);
    CHECK(r.status == std::optional<int>(daemon::kExitCheckFailed));
    CHECK_THAT(r.output, Catch::Contains("kafka: FAILED: no metadata from any broker"));
  }
  SECTION("wrong Doris password") {
    auto r = connect(config(broker.bootstrap(), emu.fe(), dir, "  topics: [dchk.shop.orders]\n"),
                     {{"DORIS_PASSWORD", "not-the-password"}});
    CHECK(r.status == std::optional<int>(daemon::kExitCheckFailed));
    CHECK_THAT(r.output, Catch::Contains("doris FE " + emu.fe() + ": FAILED"));
    CHECK_THAT(r.output, Catch::Contains("Unauthorized"));
    CHECK(r.output.find("not-the-password") == std::string::npos);
  }
  SECTION("a configured topic that does not exist") {
    auto r = connect(config(broker.bootstrap(), emu.fe(), dir, "  topics: [dchk.shop.orders, dchk.shop.nope]\n"), env);
    CHECK(r.status == std::optional<int>(daemon::kExitCheckFailed));
    CHECK_THAT(r.output, Catch::Contains("topic dchk.shop.nope: FAILED: does not exist"));
  }
  SECTION("a regex matching no topic is a warning only") {
    auto r = connect(config(broker.bootstrap(), emu.fe(), dir, "  topic_regex: \"^nothing-matches-this\\\\..*\"\n"), env);
    CHECK(r.status == std::optional<int>(daemon::kExitOk));
    CHECK_THAT(r.output, Catch::Contains("WARNING: no existing topic matches"));
  }
  SECTION("a table derived from an existing topic is missing in Doris") {
    auto r = connect(config(broker.bootstrap(), emu.fe(), dir, "  topic_regex: \"^dchk\\\\.shop\\\\..*\"\n"), env);
    CHECK(r.status == std::optional<int>(daemon::kExitCheckFailed));
    CHECK_THAT(r.output, Catch::Contains("table shop.orders: UNIQUE_KEYS (from topic dchk.shop.orders)"));
    CHECK_THAT(r.output, Catch::Contains("table shop.missing_table (from topic dchk.shop.missing_table): FAILED"));
  }
  SECTION("a Doris user lacking LOAD_PRIV / ALTER_PRIV: exit 5 naming the user, the table and the GRANT") {
    emu.sql("", "CREATE USER IF NOT EXISTS 'loader'@'%' IDENTIFIED BY 'Ldr-pw-99'");
    emu.sql("", "REVOKE LOAD_PRIV, ALTER_PRIV ON shop.* FROM loader");
    auto as_loader = [&](const std::string& tail) {
      std::string text = config(broker.bootstrap(), emu.fe(), dir, "  topics: [dchk.shop.orders]\n", "", tail);
      text.replace(text.find("user: root"), 10, "user: loader");
      return connect(text, {{"DORIS_PASSWORD", "Ldr-pw-99"}});
    };
    auto none = as_loader("");
    CHECK(none.status == std::optional<int>(daemon::kExitCheckFailed));
    CHECK_THAT(none.output, Catch::Contains("table shop.orders: FAILED: doris user 'loader' lacks LOAD_PRIV (needed for "
                                            "Stream Load); fix: GRANT LOAD_PRIV ON shop.orders TO 'loader'@'%'"));
    CHECK_THAT(none.output, Catch::Contains("lacks ALTER_PRIV (needed for schema_evolution: add); fix: GRANT ALTER_PRIV "
                                            "ON shop.orders TO 'loader'@'%'"));
    emu.sql("", "GRANT LOAD_PRIV ON shop.* TO loader");
    auto load_only = as_loader("");
    CHECK(load_only.status == std::optional<int>(daemon::kExitCheckFailed));
    CHECK(load_only.output.find("lacks LOAD_PRIV") == std::string::npos);
    CHECK_THAT(load_only.output, Catch::Contains("lacks ALTER_PRIV"));
    // With schema evolution off, LOAD_PRIV is all the daemon needs.
    auto off = as_loader("routing:\n  schema_evolution: off\n");
    CHECK(off.status == std::optional<int>(daemon::kExitOk));
    CHECK_THAT(off.output, Catch::Contains("table shop.orders: user 'loader' holds LOAD_PRIV"));
    emu.sql("", "GRANT ALTER_PRIV ON shop.orders TO loader");
    auto all = as_loader("");
    CHECK(all.status == std::optional<int>(daemon::kExitOk));
    CHECK_THAT(all.output, Catch::Contains("table shop.orders: user 'loader' holds LOAD_PRIV, ALTER_PRIV"));
  }
  SECTION("an FE URL carrying credentials is printed without them") {
    const std::string fe_url = "http://root:" + pw + "@" + emu.fe();
    auto r = connect(config(broker.bootstrap(), fe_url, dir, "  topics: [dchk.shop.orders]\n"), env);
    CHECK(r.status == std::optional<int>(daemon::kExitOk));
    CHECK_THAT(r.output, Catch::Contains("doris FE http://***@" + emu.fe()));
  }
}

// docs/operations.md: "kcat -C -b BROKER -t TOPIC -p P -o OFFSET -c 1 -e -J |
// cdc2doris decode --framed --config FILE" shows what the daemon makes of one
// record. kcat's JSON envelope names the value "payload" and lists headers as
// [name, value, ...].
TEST_CASE("decode: the documented kcat recipe reads kcat's JSON envelope", "[daemon][decode][kcat]") {
  auto& broker = KafkaBroker::shared();
  TempDir dir("check-kcat");
  const std::string topic = "dkcat.shop.orders";
  broker.create_topic(topic, 1);
  const std::string good =
      R"({"before":null,"after":{"id":7,"v":"x"},"source":{"connector":"mysql","name":"dkcat","db":"shop",)"
      R"("table":"orders","ts_ms":1700000000000,"file":"b.1","pos":4},"op":"c","ts_ms":1700000000001})";
  broker.produce(topic, {{R"({"id":7})", good, {{"trace", "t-1"}}, 0},
                         {R"({"id":8})", std::string(R"({"before":null,"after":{"id":)"), {}, 0}});
  write(dir / "cfg.yaml", config(broker.bootstrap(), "127.0.0.1:1", dir, "  topics: [" + topic + "]\n"));
  auto recipe = [&](int offset) {
    const std::string cmd = "kcat -C -b " + broker.bootstrap() + " -t " + topic + " -p 0 -o " + std::to_string(offset) +
                            " -c 1 -e -J | " + CDC2DORIS_DAEMON_BIN + " decode --framed --config " +
                            (dir / "cfg.yaml").string();
    return run_cli({}, dir, {}, 60s, {"sh", "-c", cmd});
  };
  auto ok = recipe(0);
  INFO(ok.output);
  CHECK(ok.status == std::optional<int>(0));
  CHECK_THAT(ok.output, Catch::Contains(topic + "/0@0 shop.orders op=c rows=1"));
  CHECK_THAT(ok.output, Catch::Contains(R"("id":7)"));
  auto bad = recipe(1);
  INFO(bad.output);
  CHECK(bad.status == std::optional<int>(1));  // the record fails under bad_records: fail
  CHECK_THAT(bad.output, Catch::Contains(topic + "/0@1"));
  CHECK_THAT(bad.output, Catch::Contains("ERROR"));
  CHECK(bad.output.find("missing \"value\"") == std::string::npos);
}
