// cdc2doris-demo: README command (1). Starts a real Kafka broker and the
// Doris emulator, creates the demo tables, starts cdc2doris with
// deploy/examples/demo.yaml, produces a Debezium change stream from the
// shared workload generator while showing progress, waits until cdc2doris
// has caught up and prints every table's row count and whether it matches
// the expected state. Then it keeps running for a look at /metrics and
// /status until Ctrl-C, which stops everything (every child dies with this
// process; temp dirs are removed).
//
// When something fails (cdc2doris exits, does not catch up, a table does not
// match, anything throws) the demo keeps its work directory (the logs of
// cdc2doris and the emulator, the broker's log tail, the state) and prints
// the logs' tails and the directory's path.
//
//   cdc2doris-demo [--records N] [--exit] [--daemon PATH] [--config PATH]
//   --exit: stop after the check (exit 0 when every table matches) — CI runs this.
#include <csignal>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "tools/doris_emulator/launcher.hpp"
#include "tools/reference/reference.hpp"
#include "tools/fixtures/cleanup.hpp"
#include "tools/fixtures/kafka_broker.hpp"
#include "tools/fixtures/process.hpp"
#include "tools/fixtures/temp_dir.hpp"  // free_port
#include "tools/workload/shop.hpp"

using namespace cdc2doris;
using namespace std::chrono_literals;

namespace {

void say(const std::string& s) { std::cout << "demo: " << s << std::endl; }

std::string json_field(const std::string& body, const std::string& key) {
  auto p = body.find("\"" + key + "\":");
  if (p == std::string::npos) return "?";
  p += key.size() + 3;
  auto e = body.find_first_of(",}", p);
  return body.substr(p, e - p);
}

// The demo's work directory: removed when the demo succeeds or is stopped
// with Ctrl-C before anything failed (the cleanup registry); kept once keep()
// was called.
class WorkDir {
 public:
  WorkDir() {
    const char* base = std::getenv("TMPDIR");
    std::string tmpl = std::string(base && *base ? base : "/tmp") + "/cdc2doris-demo-XXXXXX";
    if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed for " + tmpl);
    path_ = tmpl;
    test::cleanup::add_dir(path_.string());
  }
  ~WorkDir() {
    if (kept_) return;
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
    test::cleanup::remove_dir(path_.string());
  }
  WorkDir(const WorkDir&) = delete;
  WorkDir& operator=(const WorkDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& p) const { return path_ / p; }
  void keep() {
    kept_ = true;
    test::cleanup::remove_dir(path_.string());
  }

 private:
  std::filesystem::path path_;
  bool kept_ = false;
};

// The last `lines` lines of a file ("" when it cannot be read).
std::string tail(const std::filesystem::path& file, size_t lines) {
  std::ifstream in(file);
  std::deque<std::string> last;
  for (std::string line; std::getline(in, line);) {
    last.push_back(std::move(line));
    if (last.size() > lines) last.pop_front();
  }
  std::string out;
  for (const auto& l : last) out += "    " + l + "\n";
  return out;
}

// Keeps the work directory and shows what went wrong: each log's tail and
// where the whole logs are.
void report_failure(WorkDir& dir, const std::string& what, const test::KafkaBroker* broker) {
  dir.keep();
  std::cerr << "demo: FAILED: " << what << "\n";
  if (broker != nullptr) {
    // The broker's own directory goes with it; its tail is saved next to the others.
    std::ofstream(dir / "kafka-broker.log.tail") << broker->log_tail(16000);
  }
  for (const char* name : {"cdc2doris.log", "doris-emulator.log", "kafka-broker.log.tail"}) {
    const auto file = dir / name;
    if (!std::filesystem::exists(file)) continue;
    const std::string t = tail(file, name == std::string("cdc2doris.log") ? 40 : 15);
    std::cerr << "demo: last lines of " << file.string() << ":\n" << (t.empty() ? "    (empty)\n" : t);
  }
  std::cerr << "demo: logs and state kept in " << dir.path().string() << " (remove it when done)\n";
}

}  // namespace

int main(int argc, char** argv) {
  size_t records = 20000;
  bool exit_after = false;
  std::string daemon_bin = CDC2DORIS_DAEMON_BIN;
  std::string config_src = std::string(CDC2DORIS_SOURCE_DIR) + "/deploy/examples/demo.yaml";
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--records" && i + 1 < argc) records = std::stoul(argv[++i]);
    else if (a == "--exit") exit_after = true;
    else if (a == "--daemon" && i + 1 < argc) daemon_bin = argv[++i];
    else if (a == "--config" && i + 1 < argc) config_src = argv[++i];
    else {
      std::cerr << "usage: cdc2doris-demo [--records N] [--exit] [--daemon PATH] [--config PATH]\n";
      return 2;
    }
  }
  std::signal(SIGPIPE, SIG_IGN);
  // Ctrl-C: the cleanup registry kills every child and removes the temp dirs.
  test::cleanup::install_signal_handlers();

  std::optional<WorkDir> workdir;
  std::optional<test::KafkaBroker> broker_slot;
  try {
    workdir.emplace();
    WorkDir& dir = *workdir;
    say("starting a Kafka 4.1 broker (KRaft) ...");
    test::KafkaBroker& broker = broker_slot.emplace();
    say("Kafka at " + broker.bootstrap() + " (ready in " + std::to_string(broker.last_start_ms()) + " ms)");
    test::EmulatorOptions eo;
    eo.be_count = 3;
    eo.stderr_file = (dir / "doris-emulator.log").string();
    test::Emulator emu(eo);
    say("Doris emulator FE at " + emu.fe() + ", 3 BEs");

    // A small shop: customers and products without the schema envelope,
    // orders and order_items with it; inserts, updates, deletes, primary-key
    // changes, decimals, timestamps (tools/workload/shop.hpp).
    workload::ShopOptions wo;
    wo.server = "demo";
    wo.db = "shop";
    wo.partitions = 4;
    workload::ShopGenerator gen(wo);

    emu.sql("", "CREATE DATABASE shop");
    emu.sql("", "CREATE DATABASE ref_shop");
    for (const auto& t : gen.tables()) {
      const std::string table = t.substr(t.find('.') + 1);
      emu.sql("shop", gen.create_table_sql(table));
      std::string ref = gen.create_table_sql(table);
      for (size_t p = ref.find("`shop`."); p != std::string::npos; p = ref.find("`shop`.", p + 1))
        ref.replace(p, 7, "`ref_shop`.");
      emu.sql("ref_shop", ref);
      broker.create_topic("demo.shop." + table, wo.partitions);
    }
    say("created " + std::to_string(gen.tables().size()) + " tables in Doris and their Kafka topics");

    const int admin_port = test::free_port();
    const std::string admin = "127.0.0.1:" + std::to_string(admin_port);
    test::ProcessOptions po;
    po.argv = {daemon_bin, "run", "--config", config_src};
    po.env = {{"DEMO_KAFKA", broker.bootstrap()},
              {"DEMO_DORIS_FE", emu.fe()},
              {"DEMO_STATE_DIR", (dir / "state").string()},
              {"DEMO_ADMIN", admin}};
    po.stdout_file = (dir / "cdc2doris.log").string();
    po.stderr_file = (dir / "cdc2doris.log").string();
    test::Process daemon(po);
    say("cdc2doris started (log: " + po.stderr_file + "), admin on http://" + admin);
    const std::string exited = "cdc2doris exited";

    // Produce in waves so progress is visible while cdc2doris loads.
    std::vector<workload::Record> produced;
    const size_t wave = std::max<size_t>(records / 20, 100);
    auto status = [&]() -> std::string {
      try {
        return emu.http("GET", admin, "/status").body;
      } catch (const std::exception&) {
        return "";
      }
    };
    while (produced.size() < records) {
      auto batch = gen.generate(std::min(wave, records - produced.size()));
      std::map<std::string, std::vector<test::TestRecord>> by_topic;
      for (const auto& r : batch) by_topic[r.topic].push_back({r.key, r.value, r.headers, r.partition});
      for (const auto& [topic, recs] : by_topic) broker.produce(topic, recs);
      produced.insert(produced.end(), batch.begin(), batch.end());
      std::string st = status();
      say("produced " + std::to_string(produced.size()) + "/" + std::to_string(records) +
          " changes; cdc2doris consumed " + json_field(st, "records_consumed") + ", last committed epoch " +
          json_field(st, "last_committed_epoch"));
      if (!daemon.running()) throw std::runtime_error(exited);
      std::this_thread::sleep_for(200ms);
    }

    std::map<std::string, std::map<int32_t, int64_t>> want;
    for (const auto& r : produced) want[r.topic][r.partition] += 1;
    const auto deadline = std::chrono::steady_clock::now() + 300s;
    for (;;) {
      bool all = true;
      for (const auto& [topic, parts] : want) {
        auto got = broker.committed_offsets("cdc2doris-demo", topic);
        for (const auto& [p, end] : parts) all = all && got[p] == end;
      }
      if (all) break;
      if (!daemon.running()) throw std::runtime_error(exited);
      if (std::chrono::steady_clock::now() > deadline) throw std::runtime_error("cdc2doris did not catch up in 300 s");
      std::string st = status();
      say("waiting for cdc2doris to catch up: consumed " + json_field(st, "records_consumed") +
          ", last committed epoch " + json_field(st, "last_committed_epoch"));
      std::this_thread::sleep_for(1s);
    }
    say("cdc2doris has committed every change; checking Doris against the expected state");

    auto verdicts = test::verify_against_reference(emu, "shop", produced, {});
    bool ok = true;
    for (const auto& v : verdicts) {
      std::cout << "  " << v.table << ": " << v.rows << " rows, checksum "
                << (v.match ? "matches the expected state" : "DOES NOT MATCH (" + v.detail + ")") << "\n";
      ok = ok && v.match;
    }
    std::cout << "\n  metrics: curl http://" << admin << "/metrics\n  status:  curl http://" << admin
              << "/status\n  rows:    curl http://" << emu.fe() << "/_emulator/tables/shop/orders/rows\n"
              << "  sql:     mysql -h127.0.0.1 -P" << emu.query_port() << " -uroot shop -e 'SELECT COUNT(*) FROM orders'\n\n";
    if (exit_after) {
      int st = daemon.stop(30s);
      say(std::string("cdc2doris stopped (exit ") + std::to_string(st) + ")");
      if (!ok) throw std::runtime_error("a table does not match the expected state");
      if (st != 0) throw std::runtime_error("cdc2doris exited " + std::to_string(st) + " on SIGTERM");
      return 0;
    }
    if (!ok) report_failure(dir, "a table does not match the expected state", &broker);
    say(ok ? "all tables match. Press Ctrl-C to stop everything." : "MISMATCH. Press Ctrl-C to stop everything.");
    for (;;) {
      std::this_thread::sleep_for(1s);
      if (!daemon.running()) throw std::runtime_error(exited);
    }
  } catch (const std::exception& e) {
    if (workdir) {
      report_failure(*workdir, e.what(), broker_slot ? &*broker_slot : nullptr);
    } else {
      std::cerr << "demo: FAILED: " << e.what() << "\n";
    }
    return 1;
  }
}
