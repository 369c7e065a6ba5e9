// The cdc2doris binary as operators meet it: CLI exit codes, the admin
// endpoints during a real run (real Kafka broker + Doris emulator), /readyz
// following Doris' availability, and no configured secret anywhere in what
// the daemon prints.
#include <catch2/catch.hpp>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "daemon/exit_codes.hpp"
#include "tools/doris_emulator/launcher.hpp"
#include "tools/fixtures/kafka_broker.hpp"
#include "tools/fixtures/process.hpp"
#include "tools/fixtures/temp_dir.hpp"
#include "tools/workload/workload.hpp"

using namespace cdc2doris;
using namespace cdc2doris::test;
using namespace std::chrono_literals;

namespace {

struct Ran {
  int status;
  std::string output;  // stdout + stderr
};

Ran run_cli(const std::vector<std::string>& args, const TempDir& dir, std::map<std::string, std::string> env = {}) {
  ProcessOptions po;
  po.argv = {CDC2DORIS_DAEMON_BIN};
  po.argv.insert(po.argv.end(), args.begin(), args.end());
  po.env = std::move(env);
  const auto out = (dir / "cli.out").string();
  std::filesystem::remove(out);
  po.stdout_file = out;
  po.stderr_file = out;
  Process p(po);
  auto st = p.wait(60s);
  std::ifstream in(out);
  std::stringstream ss;
  ss << in.rdbuf();
  return {st.value_or(-1), ss.str()};
}

std::string read(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write(const std::filesystem::path& p, const std::string& s) { std::ofstream(p) << s; }

std::string base_config(const std::string& kafka, const std::string& fe, const TempDir& dir,
                        const std::string& extra = "") {
  return "kafka:\n  bootstrap_servers: \"" + kafka + "\"\n  group_id: daemon-test\n  topic_regex: \"^dtest\\\\..*\"\n" +
         "  properties:\n    auto.offset.reset: earliest\n    session.timeout.ms: \"2000\"\n" + extra +
         "doris:\n  fe: [\"" + fe + "\"]\n  user: root\n  password: \"${DORIS_PASSWORD:-}\"\n  request_timeout: 3s\n" +
         "  connect_timeout: 1s\n  max_attempts: 1\n" +
         "delivery:\n  label_prefix: dtest\n  epoch_interval: 300ms\n  shutdown_deadline: 20s\n" +
         "state:\n  dir: " + (dir / "state").string() + "\nadmin:\n  listen: \"${ADMIN}\"\nlogging:\n  level: debug\n";
}

// Polls an admin URL until `pred(status)` or the timeout.
bool wait_http(Emulator& emu, const std::string& addr, const std::string& path, int want_status,
               std::chrono::seconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    try {
      if (emu.http("GET", addr, path).status == want_status) return true;
    } catch (const std::exception&) {
    }
    std::this_thread::sleep_for(200ms);
  }
  return false;
}

}  // namespace

TEST_CASE("cli: documented exit codes", "[daemon][cli]") {
  TempDir dir("cli");
  auto v = run_cli({"version"}, dir);
  CHECK(v.status == daemon::kExitOk);
  CHECK_THAT(v.output, Catch::StartsWith("cdc2doris "));
  CHECK(run_cli({"--help"}, dir).status == daemon::kExitOk);
  CHECK(run_cli({"frobnicate"}, dir).status == daemon::kExitUsage);
  CHECK(run_cli({"run"}, dir).status == daemon::kExitUsage);
  CHECK(run_cli({}, dir).status == daemon::kExitUsage);

  write(dir / "bad.yaml", "kafka:\n  bootstrap_servers: k\n  topics: [a]\ndoris:\n  fe: [x]\ndelivery:\n  epoch_interval: soon\n");
  auto bad = run_cli({"run", "--config", (dir / "bad.yaml").string()}, dir);
  CHECK(bad.status == daemon::kExitUsage);
  CHECK_THAT(bad.output, Catch::Contains((dir / "bad.yaml").string() + ":7:19: delivery.epoch_interval: expected a duration"));

  write(dir / "good.yaml", base_config("127.0.0.1:1", "127.0.0.1:1", dir));
  auto check = run_cli({"check", "--config", (dir / "good.yaml").string()}, dir, {{"ADMIN", "127.0.0.1:0"}});
  CHECK(check.status == daemon::kExitOk);
  CHECK_THAT(check.output, Catch::Contains("is valid"));

  // Nothing has run yet: no state to show (and none created).
  auto show = run_cli({"state", "show", "--config", (dir / "good.yaml").string()}, dir, {{"ADMIN", "127.0.0.1:0"}});
  CHECK(show.status == daemon::kExitState);
  CHECK(run_cli({"state", "reset", "--config", (dir / "good.yaml").string()}, dir, {{"ADMIN", "127.0.0.1:0"}}).status ==
        daemon::kExitUsage);
  CHECK(run_cli({"state", "reset", "--yes", "--config", (dir / "good.yaml").string()}, dir, {{"ADMIN", "127.0.0.1:0"}})
            .status == daemon::kExitOk);
  CHECK(run_cli({"state", "explode", "--config", (dir / "good.yaml").string()}, dir).status == daemon::kExitUsage);

  // check --connect against nothing: Kafka and Doris unreachable -> 5.
  auto conn = run_cli({"check", "--connect", "--config", (dir / "good.yaml").string()}, dir, {{"ADMIN", "127.0.0.1:0"}});
  CHECK(conn.status == daemon::kExitCheckFailed);
  CHECK_THAT(conn.output, Catch::Contains("doris FE 127.0.0.1:1: FAILED"));
  // With decoding.format avro the registry is reached too, its password never shown.
  write(dir / "avro.yaml", base_config("127.0.0.1:1", "127.0.0.1:1", dir) +
                               "decoding:\n  format: avro\n  schema_registry:\n    url: "
                               "\"http://127.0.0.1:1/apis/ccompat/v7\"\n    user: reg\n    password: Registry-pw-99\n");
  auto avro = run_cli({"check", "--connect", "--timeout", "2s", "--config", (dir / "avro.yaml").string()}, dir,
                      {{"ADMIN", "127.0.0.1:0"}});
  CHECK(avro.status == daemon::kExitCheckFailed);
  CHECK_THAT(avro.output, Catch::Contains("schema registry http://127.0.0.1:1/apis/ccompat/v7: FAILED: the registry at "
                                          "http://127.0.0.1:1/apis/ccompat/v7: "));
  CHECK(avro.output.find("Registry-pw-99") == std::string::npos);

  auto ref = run_cli({"config-reference"}, dir);
  CHECK(ref.status == daemon::kExitOk);
  CHECK_THAT(ref.output, Catch::Contains("| `delivery.epoch_interval` | duration (>= 1ms) | 10s |"));
}

TEST_CASE("daemon: admin endpoints during a real run, /readyz follows Doris, the state dir is locked, no secret leaks",
          "[daemon][admin][secrets]") {
  const std::string doris_pw = "Doris-S3cret-pw-4711";
  const std::string kafka_pw = "Kafka-S3cret-pw-0815";
  auto& broker = KafkaBroker::shared();
  TempDir dir("daemon");
  EmulatorOptions eo;
  eo.users = {"root:" + doris_pw};
  eo.stderr_file = (dir / "emulator.log").string();
  eo.data_dir = (dir / "doris").string();
  Emulator emu(eo);

  workload::Options wo;
  wo.server = "dtest";
  wo.db = "shop";
  wo.tables = 2;
  wo.partitions = 2;
  wo.format = workload::Format::Schema;
  workload::Generator gen(wo);
  emu.sql("", "CREATE DATABASE shop");
  for (const auto& t : gen.tables()) {
    emu.sql("shop", gen.create_table_sql(t.substr(t.find('.') + 1)));
    broker.create_topic("dtest." + t, 2);
  }
  // sasl.password is a secret even on a PLAINTEXT listener, where librdkafka ignores it.
  write(dir / "cfg.yaml",
        base_config(broker.bootstrap(), emu.fe(), dir, "    sasl.password: \"" + kafka_pw + "\"\n"));
  const std::string admin = "127.0.0.1:" + std::to_string(free_port());
  const std::map<std::string, std::string> env{{"DORIS_PASSWORD", doris_pw}, {"ADMIN", admin}};

  ProcessOptions po;
  po.argv = {CDC2DORIS_DAEMON_BIN, "run", "--config", (dir / "cfg.yaml").string()};
  po.env = env;
  po.stdout_file = (dir / "daemon.log").string();
  po.stderr_file = (dir / "daemon.log").string();
  auto daemon = std::make_unique<Process>(po);

  std::string everything;  // all output and every endpoint body, for the secret grep
  REQUIRE(wait_http(emu, admin, "/healthz", 200, 30s));
  INFO(read(dir / "daemon.log"));
  REQUIRE(wait_http(emu, admin, "/readyz", 200, 60s));

  auto recs = gen.generate(2000);
  std::map<std::string, std::vector<TestRecord>> by_topic;
  for (const auto& r : recs) by_topic[r.topic].push_back({r.key, r.value, r.headers, r.partition});
  for (const auto& [t, v] : by_topic) broker.produce(t, v);
  // Every record counted, and an epoch committed.
  auto deadline = std::chrono::steady_clock::now() + 120s;
  std::string status;
  while (std::chrono::steady_clock::now() < deadline) {
    status = emu.http("GET", admin, "/status").body;
    // Every record consumed and both tables loaded (an epoch may hold one table only).
    if (status.find("\"records_consumed\":2000") != std::string::npos &&
        status.find("\"shop.orders_0\":{\"rows\"") != std::string::npos &&
        status.find("\"shop.orders_1\":{\"rows\"") != std::string::npos &&
        status.find("\"last_committed_epoch\":0") == std::string::npos)
      break;
    std::this_thread::sleep_for(200ms);
  }
  CHECK_THAT(status, Catch::Contains("\"records_consumed\":2000"));
  CHECK_THAT(status, Catch::Contains("\"tables\":{\"shop.orders_0\""));
  CHECK_THAT(status, Catch::Contains("\"partitions\":{\"dtest.shop.orders_0[0]\""));
  auto metrics = emu.http("GET", admin, "/metrics");
  CHECK(metrics.status == 200);
  CHECK_THAT(metrics.headers["content-type"], Catch::StartsWith("text/plain; version=0.0.4"));
  CHECK_THAT(metrics.body, Catch::Contains("cdc2doris_records_consumed_total 2000"));
  CHECK_THAT(metrics.body, Catch::Contains("cdc2doris_rows_loaded_total{table=\"shop.orders_0\"}"));
  CHECK_THAT(metrics.body, Catch::Contains("cdc2doris_epoch_commit_duration_seconds_count"));
  CHECK(emu.http("GET", admin, "/nope").status == 404);
  everything += status + metrics.body;

  // Its threads are named for top -H, perf and the bench's per-thread CPU; the
  // pipeline (main) thread keeps the process name.
  const std::filesystem::path tasks = "/proc/" + std::to_string(daemon->pid()) + "/task";
  auto comm = [](const std::filesystem::path& task) {
    std::ifstream in(task / "comm");
    std::string name;
    std::getline(in, name);
    return name;
  };
  std::set<std::string> threads;
  for (const auto& t : std::filesystem::directory_iterator(tasks)) threads.insert(comm(t.path()));
  CHECK(comm(tasks / std::to_string(daemon->pid())) == "cdc2doris");
  for (const char* name : {"doris-io", "admin-http", "signals", "health-kafka", "health-doris"}) {
    INFO("thread " << name);
    CHECK(threads.count(name) == 1);
  }

  // promtool validates the exposition format when it is installed (scripts/setup installs it).
  if (std::filesystem::exists("/usr/bin/promtool")) {
    write(dir / "metrics.txt", metrics.body);
    ProcessOptions pp;
    pp.argv = {"sh", "-c", "promtool check metrics < " + (dir / "metrics.txt").string()};
    pp.stdout_file = (dir / "promtool.out").string();
    pp.stderr_file = (dir / "promtool.out").string();
    Process promtool(pp);
    auto st = promtool.wait(60s);
    INFO(read(dir / "promtool.out"));
    CHECK(st == std::optional<int>(0));
  }

  // Doris goes away: /readyz turns 503 (with the reason); back: 200 again.
  emu.stop();
  CHECK(wait_http(emu, admin, "/readyz", 503, 30s));
  auto why = emu.http("GET", admin, "/readyz").body;
  // Whichever notices first names it: the FE probe, or (since a failed load
  // turns /readyz 503 at once, issue 35) the load that lost its connection.
  CHECK_THAT(why, Catch::Contains("Doris FE not reachable") || Catch::Contains("Doris loads failing") ||
                      Catch::Contains("Doris commits failing"));
  everything += why;
  emu.restart(/*crash=*/false);
  CHECK(wait_http(emu, admin, "/readyz", 200, 30s));

  // A second daemon on the same state directory is refused, naming the pid and path.
  auto second = run_cli({"state", "show", "--config", (dir / "cfg.yaml").string()}, dir, env);
  CHECK(second.status == daemon::kExitState);
  CHECK_THAT(second.output, Catch::Contains(std::to_string(daemon->pid())));
  CHECK_THAT(second.output, Catch::Contains((dir / "state").string()));
  everything += second.output;

  // Graceful shutdown commits and exits 0.
  CHECK(daemon->stop(30s) == 0);
  daemon.reset();
  auto show = run_cli({"state", "show", "--config", (dir / "cfg.yaml").string()}, dir, env);
  CHECK(show.status == 0);
  CHECK_THAT(show.output, Catch::Contains("\"state\":\"COMMITTED\""));
  everything += show.output;
  auto check = run_cli({"check", "--connect", "--config", (dir / "cfg.yaml").string()}, dir, env);
  CHECK(check.status == 0);
  CHECK_THAT(check.output, Catch::Contains("reachable"));
  everything += check.output;
  // A config error on the password key does not echo it.
  write(dir / "bad.yaml", "kafka:\n  bootstrap_servers: k\n  topics: [a]\ndoris:\n  fe: [x]\n  password: [\"" +
                              doris_pw + "\"]\n");
  auto bad = run_cli({"run", "--config", (dir / "bad.yaml").string()}, dir, env);
  CHECK(bad.status == daemon::kExitUsage);
  everything += bad.output;

  everything += read(dir / "daemon.log");
  CHECK_THAT(everything, Catch::Contains("Kafka source config"));  // the config dump was logged ...
  CHECK(everything.find(doris_pw) == std::string::npos);         // ... without either secret
  CHECK(everything.find(kafka_pw) == std::string::npos);
}

TEST_CASE("daemon: PostgreSQL TOAST placeholders and key-only deletes reach Doris as partial-column updates",
          "[daemon][toast]") {
  // Unchanged TOASTed columns arrive as __debezium_unavailable_value and must
  // never overwrite the stored value; a delete without a before-image knows
  // only the key. Both are loaded as partial-column updates: with flexible
  // partial updates in the table's one load, otherwise one load per run of
  // equal column sets within the epoch (docs/architecture.md, "Column sets").
  const bool flexible = GENERATE(false, true);
  const std::string name = flexible ? "dtoastf" : "dtoast";
  auto& broker = KafkaBroker::shared();
  TempDir dir("daemon-toast");
  EmulatorOptions eo;
  eo.stderr_file = (dir / "emulator.log").string();
  Emulator emu(eo);
  emu.sql("", "CREATE DATABASE inv");
  emu.sql("inv",
          "CREATE TABLE docs (id BIGINT NOT NULL, title VARCHAR(64), body STRING, n INT) UNIQUE KEY(id) "
          "DISTRIBUTED BY HASH(id) BUCKETS 1" +
              std::string(flexible ? R"( PROPERTIES ("enable_unique_key_merge_on_write" = "true", )"
                                     R"("enable_unique_key_skip_bitmap_column" = "true"))"
                                   : ""));
  const std::string topic = name + ".public.docs";
  broker.create_topic(topic, 1);
  auto pg = [&](const std::string& op, const std::string& after, int64_t lsn) {
    return R"({"before":null,"after":)" + after +
           R"(,"source":{"version":"2.5.0.Final","connector":"postgresql","name":")" + name + R"(","ts_ms":1700000000000,)"
           R"("snapshot":"false","db":"inv","schema":"public","table":"docs","txId":)" +
           std::to_string(500 + lsn) + R"(,"lsn":)" + std::to_string(1000 + lsn) + R"(},"op":")" + op +
           R"(","ts_ms":1700000000001})";
  };
  const std::string toast = "__debezium_unavailable_value";
  std::vector<TestRecord> recs = {
      {R"({"id":1})", pg("c", R"({"id":1,"title":"a","body":"long text","n":1})", 1), {}, 0},
      {R"({"id":1})", pg("u", R"({"id":1,"title":"b","body":")" + toast + R"(","n":2})", 2), {}, 0},
      {R"({"id":2})", pg("c", R"({"id":2,"title":"x","body":"keep me","n":1})", 3), {}, 0},
      {R"({"id":1})", pg("u", R"({"id":1,"title":"c","body":"new body","n":3})", 4), {}, 0},
      {R"({"id":2})", pg("u", R"({"id":2,"title":"y","body":")" + toast + R"(","n":2})", 5), {}, 0},
      {R"({"id":3})", pg("c", R"({"id":3,"title":"z","body":"gone soon","n":1})", 6), {}, 0},
      {R"({"id":3})", pg("d", "null", 7), {}, 0},
      {R"({"id":3})", std::nullopt, {}, 0},  // the tombstone after a delete
  };
  broker.produce(topic, recs);

  write(dir / "cfg.yaml",
        "kafka:\n  bootstrap_servers: \"" + broker.bootstrap() +
            "\"\n  group_id: daemon-" + name + "\n  topic_regex: \"^" + name + "\\\\..*\"\n"
            "  properties:\n    auto.offset.reset: earliest\n    session.timeout.ms: \"2000\"\n"
            "doris:\n  fe: [\"" + emu.fe() + "\"]\n  user: root\n  password: \"\"\n"
            "delivery:\n  label_prefix: " + name + "\n  epoch_interval: 300ms\n"
            "state:\n  dir: " + (dir / "state").string() + "\nlogging:\n  level: debug\n");
  ProcessOptions po;
  po.argv = {CDC2DORIS_DAEMON_BIN, "run", "--config", (dir / "cfg.yaml").string()};
  po.stdout_file = (dir / "daemon.log").string();
  po.stderr_file = (dir / "daemon.log").string();
  auto daemon = std::make_unique<Process>(po);

  const std::vector<std::string> want = {
      R"({"id":1,"title":"c","body":"new body","n":3})",
      R"({"id":2,"title":"y","body":"keep me","n":2})",
  };
  std::vector<std::string> rows;
  const auto deadline = std::chrono::steady_clock::now() + 90s;
  while (std::chrono::steady_clock::now() < deadline) {
    rows = emu.rows("inv", "docs");
    if (rows == want) break;
    std::this_thread::sleep_for(200ms);
  }
  INFO(read(dir / "daemon.log"));
  CHECK(rows == want);
  CHECK(daemon->stop(30s) == 0);
  const std::string txns = emu.txns("inv");
  CHECK(txns.find("VISIBLE") != std::string::npos);
  const std::string log = read(dir / "daemon.log");
  if (flexible) {
    // Everything in the table's one load per epoch: no part labels.
    CHECK(log.find("loaded in flexible mode") != std::string::npos);
    CHECK(txns.find(name + "_inv_docs_1\"") != std::string::npos);
    CHECK(txns.find(name + "_inv_docs_1-") == std::string::npos);
  } else {
    // The partial rows went through loads of their own within the epoch.
    CHECK(log.find("loaded in runs mode") != std::string::npos);
    CHECK(txns.find(name + "_inv_docs_1-1\"") != std::string::npos);
  }
}

// Issue 31 (5): a second `cdc2doris run` from a copy of the configuration on
// the same host (same default kafka.instance_id, same label prefix, another
// state directory) joined the group with the same group.instance.id, which
// fenced the healthy first one. It must be refused before it joins, and the
// first must go on loading as if nothing happened.
TEST_CASE("daemon: a duplicate start on the same host is refused and leaves the running daemon alone",
          "[daemon][identity]") {
  auto& broker = KafkaBroker::shared();
  TempDir dir("daemon-dup");
  EmulatorOptions eo;
  eo.stderr_file = (dir / "emulator.log").string();
  Emulator emu(eo);
  workload::Options wo;
  wo.server = "ddup";
  wo.db = "shop";
  wo.tables = 1;
  wo.partitions = 2;
  wo.format = workload::Format::Schema;
  workload::Generator gen(wo);
  emu.sql("", "CREATE DATABASE shop");
  for (const auto& t : gen.tables()) {
    emu.sql("shop", gen.create_table_sql(t.substr(t.find('.') + 1)));
    broker.create_topic("ddup." + t, 2);
  }
  // No instance_id and no label_prefix: both from the host name.
  auto config = [&](const std::string& state) {
    return "kafka:\n  bootstrap_servers: \"" + broker.bootstrap() +
           "\"\n  group_id: daemon-dup-test\n  topic_regex: \"^ddup\\\\..*\"\n"
           "  properties:\n    auto.offset.reset: earliest\n    session.timeout.ms: \"6000\"\n"
           "doris:\n  fe: [\"" + emu.fe() + "\"]\n  user: root\n  password: \"\"\n" +
           "delivery:\n  epoch_interval: 300ms\n  shutdown_deadline: 20s\n" +
           "state:\n  dir: " + (dir / state).string() + "\nadmin:\n  listen: \"${ADMIN}\"\n";
  };
  write(dir / "a.yaml", config("state-a"));
  write(dir / "b.yaml", config("state-b"));
  const std::string admin_a = "127.0.0.1:" + std::to_string(free_port());
  ProcessOptions po;
  po.argv = {CDC2DORIS_DAEMON_BIN, "run", "--config", (dir / "a.yaml").string()};
  po.env = {{"ADMIN", admin_a}};
  po.stdout_file = (dir / "a.log").string();
  po.stderr_file = (dir / "a.log").string();
  Process a(po);
  INFO(read(dir / "a.log"));
  REQUIRE(wait_http(emu, admin_a, "/readyz", 200, 60s));
  auto produce = [&](size_t n) {
    std::map<std::string, std::vector<TestRecord>> by_topic;
    for (const auto& r : gen.generate(n)) by_topic[r.topic].push_back({r.key, r.value, r.headers, r.partition});
    for (const auto& [t, v] : by_topic) broker.produce(t, v);
  };
  auto consumed = [&](int n) {
    const auto deadline = std::chrono::steady_clock::now() + 120s;
    while (std::chrono::steady_clock::now() < deadline) {
      if (emu.http("GET", admin_a, "/status").body.find("\"records_consumed\":" + std::to_string(n)) !=
          std::string::npos)
        return true;
      std::this_thread::sleep_for(200ms);
    }
    return false;
  };
  produce(300);
  REQUIRE(consumed(300));

  // The copy: refused at once, exit 3, naming the running one.
  auto b = run_cli({"run", "--config", (dir / "b.yaml").string()}, dir,
                   {{"ADMIN", "127.0.0.1:" + std::to_string(free_port())}});
  INFO(b.output);
  CHECK(b.status == daemon::kExitState);
  CHECK_THAT(b.output, Catch::Contains("another cdc2doris (pid " + std::to_string(a.pid()) + ")"));
  CHECK_THAT(b.output, Catch::Contains("kafka.instance_id"));
  // It never joined the group: nothing to fence. The first keeps loading.
  produce(300);
  CHECK(consumed(600));
  CHECK(a.running());
  CHECK(wait_http(emu, admin_a, "/readyz", 200, 10s));
  CHECK(a.stop(30s) == 0);
  CHECK(read(dir / "a.log").find("FENCED") == std::string::npos);
}
