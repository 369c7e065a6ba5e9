// What an operator relies on to tell whether cdc2doris is healthy (issue 13
// §3, §4, §5, §8), against the real broker and the Doris emulator: /readyz
// while Kafka is unreachable, a topic is missing, every Doris load fails or
// Doris hangs; /healthz from the pipeline thread's heartbeat; lag from the
// committed offsets and freshness; /status clearing errors that are over;
// the shutdown deadline holding while Doris hangs and a second signal exiting
// at once; build and process metrics. Grace periods are configured small.
#include <catch2/catch.hpp>

#include <signal.h>

#include <fstream>
#include <regex>
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
using Clock = std::chrono::steady_clock;

namespace {

std::string read(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct Settings {
  std::string bootstrap;
  std::string fe;
  std::string topic;
  std::string name;  // group id and label prefix
  std::string shutdown_deadline = "20s";
};

std::string config(const Settings& s, const TempDir& dir, const std::string& admin) {
  return "kafka:\n  bootstrap_servers: \"" + s.bootstrap + "\"\n  group_id: " + s.name + "\n  topics: [\"" + s.topic +
         "\"]\n  properties:\n    auto.offset.reset: earliest\n    session.timeout.ms: \"6000\"\n"
         "doris:\n  fe: [\"" + s.fe + "\"]\n  user: root\n  password: \"\"\n  connect_timeout: 1s\n"
         "  request_timeout: 30s\n  load_timeout: 60s\n  max_attempts: 1\n"
         "delivery:\n  label_prefix: " + s.name + "\n  epoch_interval: 300ms\n  shutdown_deadline: " +
         s.shutdown_deadline + "\n  backoff_base: 100ms\n  backoff_max: 500ms\n"
         "state:\n  dir: " + (dir / "state").string() + "\n"
         "admin:\n  listen: \"" + admin + "\"\n  kafka_grace: 1s\n  doris_failure_grace: 2s\n  stall_timeout: 2s\n"
         "  heartbeat_timeout: 2s\n  lag_refresh_interval: 300ms\n"
         "logging:\n  level: debug\n";
}

class Daemon {
 public:
  Daemon(const Settings& s, const TempDir& dir, const std::string& log_name)
      : admin_("127.0.0.1:" + std::to_string(free_port())), log_(dir / log_name) {
    std::ofstream(dir / "cfg.yaml") << config(s, dir, admin_);
    ProcessOptions po;
    po.argv = {CDC2DORIS_DAEMON_BIN, "run", "--config", (dir / "cfg.yaml").string()};
    po.stdout_file = log_.string();
    po.stderr_file = log_.string();
    p_ = std::make_unique<Process>(po);
  }
  const std::string& admin() const { return admin_; }
  Process& process() { return *p_; }
  std::string log() const { return read(log_); }

 private:
  std::string admin_;
  std::filesystem::path log_;
  std::unique_ptr<Process> p_;
};

// GET on the daemon's admin port; status 0 when it does not answer.
HttpResponse get(Emulator& emu, const std::string& admin, const std::string& path) {
  try {
    return emu.http("GET", admin, path);
  } catch (const std::exception&) {
    return {};
  }
}

// Polls until `pred` holds for a response of `path`, or the timeout.
template <class Pred>
HttpResponse wait_for(Emulator& emu, const std::string& admin, const std::string& path, Pred pred,
                      std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  HttpResponse r;
  while (Clock::now() < deadline) {
    r = get(emu, admin, path);
    if (r.status != 0 && pred(r)) return r;
    std::this_thread::sleep_for(100ms);
  }
  return r;
}

bool has(const HttpResponse& r, const std::string& s) { return r.body.find(s) != std::string::npos; }

// The value of one sample line ("name{labels}" exactly as exported), or nullopt.
std::optional<double> sample(const std::string& metrics, const std::string& series) {
  std::istringstream in(metrics);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(series + " ", 0) == 0) return std::stod(line.substr(series.size() + 1));
  return std::nullopt;
}

std::string record(int id, const std::string& v, int64_t ts_ms) {
  return R"({"before":null,"after":{"id":)" + std::to_string(id) + R"(,"v":")" + v +
         R"("},"source":{"version":"2.5.0.Final","connector":"mysql","name":"h","ts_ms":)" + std::to_string(ts_ms) +
         R"(,"snapshot":"false","db":"hdb","table":"items","server_id":1,"file":"binlog.000001","pos":)" +
         std::to_string(1000 + id) + R"(,"row":0},"op":"c","ts_ms":)" + std::to_string(ts_ms + 5) + "}";
}

std::vector<TestRecord> records(int from, int to, int64_t ts_ms) {
  std::vector<TestRecord> out;
  for (int i = from; i < to; ++i) out.push_back({"{\"id\":" + std::to_string(i) + "}", record(i, "v", ts_ms), {}, 0});
  return out;
}

void create_items(Emulator& emu) {
  emu.sql("", "CREATE DATABASE hdb");
  emu.sql("hdb", "CREATE TABLE items (id BIGINT NOT NULL, v STRING) UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1");
}

struct Ran {
  int status;
  std::string output;
};

// `cdc2doris ARGS`, stdout and stderr together.
Ran run_cli(const std::vector<std::string>& args, const TempDir& dir) {
  ProcessOptions po;
  po.argv = {CDC2DORIS_DAEMON_BIN};
  po.argv.insert(po.argv.end(), args.begin(), args.end());
  const auto out = (dir / "cli.out").string();
  po.stdout_file = out;
  po.stderr_file = out;
  Process p(po);
  auto st = p.wait(30s);
  return {st.value_or(-1), read(out)};
}

// SIGCONTs the emulator however the test ends, so its destructor can stop it.
struct Continue {
  pid_t pid;
  ~Continue() { ::kill(pid, SIGCONT); }
};

int64_t unix_ms_now() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

TEST_CASE("health: /readyz stays 503 while Kafka never answered, and names a missing topic until it exists",
          "[daemon][health]") {
  TempDir dir("health-kafka");
  EmulatorOptions eo;
  eo.stderr_file = (dir / "emulator.log").string();
  Emulator emu(eo);
  create_items(emu);

  {
    // Nothing listens on the bootstrap port: recovery finishes (it needs only
    // Doris), yet the daemon must never call itself ready.
    Settings s{"127.0.0.1:" + std::to_string(free_port()), emu.fe(), "hk.hdb.items", "hkdown"};
    Daemon d(s, dir, "down.log");
    auto first = wait_for(emu, d.admin(), "/readyz", [](auto&) { return true; }, 30s);
    INFO(d.log());
    REQUIRE(first.status != 0);
    const auto until = Clock::now() + 14s;  // longer than any "recent error" window
    int answers = 0;
    while (Clock::now() < until) {
      auto r = get(emu, d.admin(), "/readyz");
      if (r.status == 0) continue;
      ++answers;
      CHECK(r.status == 503);
      if (r.status != 503) break;
      std::this_thread::sleep_for(250ms);
    }
    CHECK(answers > 10);
    auto why = get(emu, d.admin(), "/readyz");
    CHECK_THAT(why.body, Catch::Contains("Kafka"));
    auto metrics = get(emu, d.admin(), "/metrics");
    CHECK(sample(metrics.body, "cdc2doris_kafka_reachable") == std::optional<double>(0));
    CHECK(sample(metrics.body, "cdc2doris_ready") == std::optional<double>(0));
    d.process().signal(SIGTERM);
    CHECK(d.process().wait(30s) == std::optional<int>(daemon::kExitOk));
  }

  auto& broker = KafkaBroker::shared();
  const std::string topic = "hk.hdb.items.later";
  Settings s{broker.bootstrap(), emu.fe(), topic, "hkmissing"};
  TempDir dir2("health-topic");
  Daemon d(s, dir2, "missing.log");
  auto r = wait_for(emu, d.admin(), "/readyz", [](auto& r) { return has(r, "missing"); }, 30s);
  INFO(d.log());
  CHECK(r.status == 503);
  CHECK_THAT(r.body, Catch::Contains(topic));
  // Still not ready a while later (it once turned 200 for good).
  std::this_thread::sleep_for(3s);
  CHECK(get(emu, d.admin(), "/readyz").status == 503);
  CHECK(sample(get(emu, d.admin(), "/metrics").body, "cdc2doris_kafka_missing_topics") == std::optional<double>(1));
  broker.create_topic(topic, 1);
  CHECK(wait_for(emu, d.admin(), "/readyz", [](auto& r) { return r.status == 200; }, 30s).status == 200);
  d.process().signal(SIGTERM);
  CHECK(d.process().wait(30s) == std::optional<int>(daemon::kExitOk));
}

TEST_CASE("health: failing Doris loads turn /readyz 503, once over, the error is cleared, lag is 0, phase idle",
          "[daemon][health][metrics]") {
  auto& broker = KafkaBroker::shared();
  TempDir dir("health-loads");
  EmulatorOptions eo;
  eo.stderr_file = (dir / "emulator.log").string();
  Emulator emu(eo);
  create_items(emu);
  const std::string topic = "hl.hdb.items";
  broker.create_topic(topic, 1);
  Settings s{broker.bootstrap(), emu.fe(), topic, "hloads"};
  Daemon d(s, dir, "daemon.log");
  INFO(d.log());
  REQUIRE(wait_for(emu, d.admin(), "/readyz", [](auto& r) { return r.status == 200; }, 60s).status == 200);

  // Labelled counters exist before their first event; build and process metrics are there.
  auto m0 = get(emu, d.admin(), "/metrics").body;
  CHECK(sample(m0, "cdc2doris_doris_errors_total{kind=\"auth\"}") == std::optional<double>(0));
  CHECK(sample(m0, "cdc2doris_bad_records_total{reason=\"invalid_json\",policy=\"fail\"}") == std::optional<double>(0));
  CHECK(sample(m0, "cdc2doris_rewinds_total{reason=\"load\"}") == std::optional<double>(0));
  CHECK(sample(m0, "cdc2doris_records_skipped_total{reason=\"tombstone\"}") == std::optional<double>(0));
  CHECK_THAT(m0, Catch::Contains("cdc2doris_build_info{version=\""));
  CHECK(sample(m0, "process_start_time_seconds").value_or(0) > 1.6e9);
  CHECK(sample(m0, "process_resident_memory_bytes").value_or(0) > 0);
  CHECK(sample(m0, "process_open_fds").value_or(0) > 0);
  CHECK(sample(m0, "process_cpu_seconds_total").has_value());
  CHECK_THAT(get(emu, d.admin(), "/status").body, Catch::Contains("\"phase\":\"idle\""));

  emu.fault(R"({"type":"fail_load","count":-1})");
  const int64_t ts = unix_ms_now() - 5000;
  auto recs = records(1, 51, ts);
  // A tombstone with no delete before it (compaction dropped the delete):
  // it deletes its key (issue 31).
  recs.push_back({"{\"id\":1}", std::nullopt, {}, 0});
  broker.produce(topic, recs);
  auto failing = wait_for(emu, d.admin(), "/readyz", [](auto& r) { return has(r, "Doris loads failing"); }, 30s);
  CHECK(failing.status == 503);
  CHECK_THAT(failing.body, Catch::Contains("injected failure"));
  auto st = get(emu, d.admin(), "/status").body;
  CHECK_THAT(st, Catch::Contains("\"last_error\":\"") );
  CHECK_THAT(st, Catch::Contains("injected failure"));
  CHECK(sample(get(emu, d.admin(), "/metrics").body, "cdc2doris_doris_failing_seconds{operation=\"load\"}").value_or(0) >= 2);
  auto view = run_cli({"status", "--admin", d.admin()}, dir);
  CHECK(view.status == 1);
  CHECK_THAT(view.output, Catch::Contains("NOT READY"));
  CHECK_THAT(view.output, Catch::Contains("loads FAILING"));

  emu.clear_faults();
  auto ready = wait_for(emu, d.admin(), "/readyz", [](auto& r) { return r.status == 200; }, 60s);
  CHECK(ready.status == 200);
  // Everything committed: lag from the committed offset is 0, the phase idle,
  // the table's error cleared (its time kept), the history keeps it.
  auto status = wait_for(emu, d.admin(), "/status", [](auto& r) {
    return has(r, "\"phase\":\"idle\"") && has(r, "\"lag\":0,") && has(r, "\"last_error\":\"\"");
  }, 30s);
  CHECK_THAT(status.body, Catch::Contains("\"phase\":\"idle\""));
  CHECK_THAT(status.body, Catch::Contains("\"lag\":0,"));
  CHECK_THAT(status.body, Catch::Contains("\"last_error\":\"\""));
  CHECK_THAT(status.body, Catch::Contains("\"committing_epochs\":[]"));
  CHECK_THAT(status.body, Catch::Contains("\"recent_errors\":[{"));
  CHECK_THAT(status.body, Catch::Contains("\"newest_source_unix_ms\":" + std::to_string(ts)));
  CHECK(emu.rows("hdb", "items").size() == 49);  // 50 rows, key 1 deleted by the tombstone
  auto metrics = get(emu, d.admin(), "/metrics").body;
  // At least once: every rewind re-reads it, like every other record.
  // Not skipped: it was a delete.
  CHECK(sample(metrics, "cdc2doris_records_skipped_total{reason=\"tombstone\"}") == std::optional<double>(0));
  CHECK(sample(metrics, "cdc2doris_consumer_lag_records{topic=\"" + topic + "\",partition=\"0\"}") ==
        std::optional<double>(0));
  CHECK(sample(metrics, "cdc2doris_table_freshness_seconds{table=\"hdb.items\"}").value_or(0) >= 5);
  CHECK(sample(metrics, "cdc2doris_doris_failing_seconds{operation=\"load\"}") == std::optional<double>(0));
  // The terminal view: ready, the table with its freshness and the error
  // that is over, the partition with lag 0.
  auto ok = run_cli({"status", "--config", (dir / "cfg.yaml").string()}, dir);
  INFO(ok.output);
  CHECK(ok.status == 0);
  CHECK_THAT(ok.output, Catch::Contains(": READY"));
  CHECK_THAT(ok.output, Catch::Contains("hdb.items"));
  CHECK_THAT(ok.output, Catch::Contains("(none now; last"));
  CHECK_THAT(ok.output, Catch::Matches(R"((.|\n)*hl\.hdb\.items\[0\] +\d+ +\d+ +\d+ +0  no(.|\n)*)"));
  CHECK_THAT(ok.output, Catch::Contains("RECENT ERRORS"));
  CHECK(run_cli({"status"}, dir).status == daemon::kExitUsage);
  d.process().signal(SIGTERM);
  CHECK(d.process().wait(30s) == std::optional<int>(daemon::kExitOk));
  CHECK_THAT(d.log(), Catch::Contains("stopped cleanly"));
}

TEST_CASE("health: Doris hangs — lag counts what is not committed, /readyz and /healthz fail, the shutdown deadline "
          "holds (exit 4), a second signal exits at once, the next start recovers exactly once",
          "[daemon][health][shutdown]") {
  auto& broker = KafkaBroker::shared();
  TempDir dir("health-hang");
  EmulatorOptions eo;
  eo.stderr_file = (dir / "emulator.log").string();
  eo.data_dir = (dir / "doris").string();
  Emulator emu(eo);
  create_items(emu);
  const std::string topic = "hh.hdb.items";
  broker.create_topic(topic, 1);
  Settings s{broker.bootstrap(), emu.fe(), topic, "hhang", "3s"};
  const int64_t ts = unix_ms_now() - 1000;

  {
    Daemon d(s, dir, "daemon1.log");
    INFO(d.log());
    REQUIRE(wait_for(emu, d.admin(), "/readyz", [](auto& r) { return r.status == 200; }, 60s).status == 200);
    broker.produce(topic, records(1, 101, ts));
    REQUIRE(wait_for(emu, d.admin(), "/status", [](auto& r) { return has(r, "\"lag\":0,"); }, 60s).status == 200);

    ::kill(emu.pid(), SIGSTOP);
    Continue resume{emu.pid()};
    broker.produce(topic, records(101, 201, ts + 1000));
    // The pipeline consumed them (position at the end), nothing committed:
    // the lag counts them although the fetch position caught up.
    auto lagging = wait_for(emu, d.admin(), "/metrics", [&](auto& r) {
      return sample(r.body, "cdc2doris_consumer_lag_records{topic=\"" + topic + "\",partition=\"0\"}").value_or(0) >= 100;
    }, 30s);
    CHECK(sample(lagging.body, "cdc2doris_consumer_lag_records{topic=\"" + topic + "\",partition=\"0\"}").value_or(0) >=
          100);
    auto stalled = wait_for(emu, d.admin(), "/readyz", [](auto& r) { return has(r, "has not advanced"); }, 30s);
    CHECK(stalled.status == 503);
    auto dead = wait_for(emu, d.admin(), "/healthz", [](auto& r) { return r.status == 503; }, 30s);
    CHECK(dead.status == 503);
    CHECK_THAT(dead.body, Catch::Contains("pipeline thread"));

    // SIGTERM: the deadline (3 s) holds although Doris does not answer.
    const auto t0 = Clock::now();
    d.process().signal(SIGTERM);
    auto code = d.process().wait(20s);
    const auto took = Clock::now() - t0;
    CHECK(code == std::optional<int>(daemon::kExitShutdownDeadline));
    CHECK(took < 10s);
    const std::string log = d.log();
    // One line says what is abandoned and that the next start recovers it.
    std::string abandon_line;
    {
      std::istringstream in(log);
      for (std::string l; std::getline(in, l);)
        if (l.find("exiting with 4") != std::string::npos || l.find("shutdown incomplete") != std::string::npos)
          abandon_line = l;
    }
    INFO(abandon_line);
    CHECK_THAT(abandon_line, Catch::Matches(R"(.*epoch \d+ .*)"));
    CHECK_THAT(abandon_line, Catch::Contains("next start"));
    CHECK(log.find("stopped cleanly") == std::string::npos);

    // Doris still hanging: the next start waits in recovery; a second
    // signal ends it at once.
    Settings slow = s;
    slow.shutdown_deadline = "60s";
    Daemon d2(slow, dir, "daemon2.log");
    std::this_thread::sleep_for(3s);
    d2.process().signal(SIGTERM);
    std::this_thread::sleep_for(500ms);
    const auto t1 = Clock::now();
    d2.process().signal(SIGTERM);
    auto code2 = d2.process().wait(10s);
    CHECK(code2 == std::optional<int>(daemon::kExitShutdownDeadline));
    CHECK(Clock::now() - t1 < 3s);
    CHECK_THAT(d2.log(), Catch::Contains("second"));
  }

  // Doris back: the next start rolls forward / re-reads; every row exactly once.
  Daemon d3(s, dir, "daemon3.log");
  INFO(d3.log());
  std::vector<std::string> rows;
  const auto deadline = Clock::now() + 90s;
  while (Clock::now() < deadline) {
    rows = emu.rows("hdb", "items");
    if (rows.size() == 200) break;
    std::this_thread::sleep_for(200ms);
  }
  CHECK(rows.size() == 200);
  auto status = wait_for(emu, d3.admin(), "/status", [](auto& r) { return has(r, "\"lag\":0,"); }, 30s);
  CHECK_THAT(status.body, Catch::Contains("\"lag\":0,"));
  d3.process().signal(SIGTERM);
  CHECK(d3.process().wait(30s) == std::optional<int>(daemon::kExitOk));
}
