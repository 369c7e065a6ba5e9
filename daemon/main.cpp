// cdc2doris: Debezium change events from Kafka into Apache Doris, exactly once.
//
// Threads of `run` and who stops them:
//   main thread      Pipeline::run(): Kafka poll, decode, loads, RocksDB writes.
//                    Returns after a graceful shutdown or a fatal error.
//   signal thread    sigtimedwait() for SIGTERM/SIGINT/SIGHUP (blocked in every
//                    other thread), sd_notify READY/STOPPING/WATCHDOG; stopped
//                    through its stop_token after run() returns.
//   admin thread     AdminServer's io_context; stopped and joined by its destructor.
//   Doris I/O        owned by the DorisClient; joined by its destructor.
//   librdkafka       owned by the Kafka source; ended by close()/destruction.
#include <signal.h>
#include <spdlog/spdlog.h>
#include <systemd/sd-daemon.h>

#include <boost/json.hpp>

#include <csignal>
#include <cstdio>
#include <set>
#include <cstdlib>
#include <iostream>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "config/config.hpp"
#include "core/kafka/dlq.hpp"
#include "core/kafka/source.hpp"
#include "core/pipeline/pipeline.hpp"
#include "daemon/admin_server.hpp"
#include "daemon/exit_codes.hpp"
#include "daemon/logging.hpp"
#include "state/rocksdb_store.hpp"

#include "core/decode/decode_cli.hpp"

#ifndef CDC2DORIS_VERSION
#define CDC2DORIS_VERSION "0.0.0-dev"
#endif

namespace cdc2doris::daemon {
namespace {

constexpr const char* kUsage = R"(cdc2doris — Debezium change events from Kafka into Apache Doris, exactly once.

Usage:
  cdc2doris run --config FILE              run the pipeline until SIGTERM/SIGINT
  cdc2doris check --config FILE [--connect]
                                           validate the configuration; with --connect also
                                           reach Kafka and every Doris FE and check the tables
  cdc2doris state show --config FILE       print the checkpoint state (JSON)
  cdc2doris state reset --config FILE --yes
                                           delete the checkpoint state
  cdc2doris decode [--config FILE] [--framed] [options]
                                           decode Debezium JSON lines from stdin (dry run)
  cdc2doris config-reference               print the configuration reference (Markdown)
  cdc2doris version                        print the version
  cdc2doris COMMAND --help                 help for one command

Exit codes:
  0  success / clean shutdown
  1  the pipeline stopped on a fatal error (auth, unknown table, bad record under 'fail', ...)
  2  usage or configuration error
  3  the state directory is locked by another process, corrupt, or from a newer version
  4  shutdown deadline passed before the last epoch committed (the next start recovers it)
  5  check --connect found a problem
)";

struct Args {
  std::vector<std::string> positional;
  std::map<std::string, std::string> options;  // --key value / --flag ("")
  bool has(const std::string& k) const { return options.count(k) > 0; }
  std::string get(const std::string& k) const {
    auto it = options.find(k);
    return it == options.end() ? "" : it->second;
  }
};

Args parse_args(int argc, char** argv, int from, const std::set<std::string>& flags) {
  Args a;
  for (int i = from; i < argc; ++i) {
    std::string s = argv[i];
    if (s.rfind("--", 0) == 0) {
      std::string key = s.substr(2), val;
      if (auto eq = key.find('='); eq != std::string::npos) {
        val = key.substr(eq + 1);
        key.resize(eq);
      } else if (!flags.count(key) && i + 1 < argc) {
        val = argv[++i];
      }
      a.options[key] = val;
    } else {
      a.positional.push_back(s);
    }
  }
  return a;
}

config::Config load_config_or_exit(const Args& a) {
  if (!a.has("config") || a.get("config").empty()) {
    std::cerr << "cdc2doris: --config FILE is required\n";
    std::exit(kExitUsage);
  }
  try {
    return config::load_file(a.get("config"));
  } catch (const config::ConfigError& e) {
    std::cerr << "cdc2doris: configuration error: " << e.what() << "\n";
    std::exit(kExitUsage);
  }
}

std::unique_ptr<state::RocksCheckpointStore> open_state_or_exit(const config::Config& cfg) {
  try {
    state::RocksStoreOptions o;
    o.path = cfg.state_dir;
    o.retain_epochs = static_cast<size_t>(std::max(1, cfg.state_retention_epochs));
    return std::make_unique<state::RocksCheckpointStore>(o);
  } catch (const state::StateError& e) {
    spdlog::error("checkpoint state: {}", e.what());
    std::cerr << "cdc2doris: checkpoint state: " << e.what() << "\n";
    std::exit(kExitState);
  }
}

// Blocks the shutdown signals in this thread and every thread created after.
sigset_t block_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  return set;
}

int cmd_run(const Args& a) {
  config::Config cfg = load_config_or_exit(a);
  setup_logging(cfg.log_level, cfg.log_format, cfg.secrets());
  const sigset_t signals = block_signals();
  spdlog::info("cdc2doris {} starting; config {}", CDC2DORIS_VERSION, cfg.path);

  auto store = open_state_or_exit(cfg);
  std::unique_ptr<doris::DorisClient> doris;
  std::unique_ptr<kafka::Source> source;
  std::unique_ptr<kafka::DeadLetterQueue> dlq;
  try {
    doris = doris::make_client(cfg.doris);
    source = kafka::make_kafka_source(cfg.source_config());
    if (cfg.delivery.bad_record_policy == pipeline::BadRecordPolicy::DeadLetter) {
      auto props = cfg.kafka_properties;
      props["bootstrap.servers"] = cfg.bootstrap_servers;
      dlq = kafka::make_kafka_dlq(props);
    }
  } catch (const std::exception& e) {
    spdlog::error("configuration: {}", e.what());
    return kExitUsage;
  }
  auto router = config::make_router(cfg);
  pipeline::Metrics metrics;
  pipeline::Pipeline pipe(cfg.delivery, cfg.decoding,
                          pipeline::Dependencies{*source, *doris, *store, *router, metrics, dlq.get()});

  std::atomic<bool> stopping{false};
  // Doris reachability for /readyz, checked off the pipeline thread.
  std::mutex doris_mu;
  std::string doris_problem = "not checked yet";
  std::jthread health_thread([&](std::stop_token st) {
    std::mutex m;
    std::condition_variable_any cv;
    while (!st.stop_requested()) {
      auto err = doris->health();
      {
        std::lock_guard lk(doris_mu);
        doris_problem = err ? "Doris FE not reachable: " + err->what() : "";
      }
      std::unique_lock lk(m);
      cv.wait_for(lk, st, std::chrono::seconds(2), [] { return false; });
    }
  });
  Readiness readiness{[&]() -> std::string {
    if (stopping.load()) return "shutting down";
    if (!metrics.recovered.load()) return "recovery has not finished";
    {
      std::lock_guard lk(doris_mu);
      if (!doris_problem.empty()) return doris_problem;
    }
    const int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                               std::chrono::system_clock::now().time_since_epoch()).count();
    if (now_ms - metrics.kafka_error_unix_ms.load() < 10'000) return "Kafka reported a connectivity error in the last 10 s";
    return "";
  }};
  std::unique_ptr<AdminServer> admin;
  try {
    admin = std::make_unique<AdminServer>(cfg.admin_listen, metrics, readiness);
    spdlog::info("admin endpoint on http://{} (/healthz /readyz /metrics /status)", admin->address());
  } catch (const std::exception& e) {
    spdlog::error("admin.listen {}: {}", cfg.admin_listen, e.what());
    return kExitUsage;
  }

  std::jthread signal_thread([&](std::stop_token st) {
    uint64_t watchdog_usec = 0;
    const bool watchdog = sd_watchdog_enabled(0, &watchdog_usec) > 0;
    auto last_ping = std::chrono::steady_clock::now();
    bool ready_sent = false;
    while (!st.stop_requested()) {
      timespec timeout{0, 200'000'000};
      int sig = sigtimedwait(&signals, nullptr, &timeout);
      if (sig > 0) {
        spdlog::info("received {}; finishing the current epoch (deadline {} ms)", strsignal(sig),
                     cfg.delivery.shutdown_deadline.count());
        stopping = true;
        sd_notify(0, "STOPPING=1");
        pipe.request_stop();
      }
      if (!ready_sent && metrics.recovered.load()) {
        sd_notify(0, "READY=1");
        ready_sent = true;
      }
      if (watchdog && std::chrono::steady_clock::now() - last_ping > std::chrono::microseconds(watchdog_usec / 2)) {
        sd_notify(0, "WATCHDOG=1");
        last_ping = std::chrono::steady_clock::now();
      }
    }
  });

  pipeline::RunResult result = pipe.run();
  signal_thread.request_stop();
  signal_thread.join();
  health_thread.request_stop();
  health_thread.join();
  admin.reset();
  source.reset();
  try {
    store->close();
  } catch (const state::StateError& e) {
    spdlog::error("closing the checkpoint state: {}", e.what());
    return kExitState;
  }
  if (!result.error) {
    spdlog::info("stopped cleanly");
    return kExitOk;
  }
  spdlog::error("stopped: {}", result.error->what());
  return result.error->disposition() == Disposition::Retry ? kExitShutdownDeadline : kExitFatal;
}

int cmd_check(const Args& a) {
  config::Config cfg = load_config_or_exit(a);
  std::cout << "configuration " << cfg.path << " is valid\n";
  if (!a.has("connect")) return kExitOk;
  setup_logging("warn", "text", cfg.secrets());
  int problems = 0;
  // Kafka: a metadata round trip through the source's consumer.
  try {
    auto source = kafka::make_kafka_source(cfg.source_config());
    auto committed = source->committed({}, std::chrono::seconds(10));
    if (auto* err = std::get_if<Error>(&committed)) {
      std::cout << "kafka: FAILED: " << err->what() << "\n";
      ++problems;
    } else {
      std::cout << "kafka: reachable (" << cfg.bootstrap_servers << ", group " << cfg.group_id << ")\n";
    }
    source->close(std::chrono::seconds(5));
  } catch (const std::exception& e) {
    std::cout << "kafka: FAILED: " << config::redact(e.what(), cfg.secrets()) << "\n";
    ++problems;
  }
  // Doris: every FE, and every table the routing rules name.
  for (const auto& fe : cfg.doris.fe_urls) {
    auto one = cfg.doris;
    one.fe_urls = {fe};
    auto client = doris::make_client(one);
    if (auto err = client->health()) {
      std::cout << "doris FE " << fe << ": FAILED: " << err->what() << "\n";
      ++problems;
    } else {
      std::cout << "doris FE " << fe << ": reachable\n";
    }
  }
  auto client = doris::make_client(cfg.doris);
  auto router = config::make_router(cfg);
  for (const auto& t : router->known_targets()) {
    auto schema = client->schema(t.db, t.table);
    if (auto* err = std::get_if<doris::DorisError>(&schema)) {
      std::cout << "table " << t.name() << ": FAILED: " << err->what() << "\n";
      ++problems;
      continue;
    }
    const auto& keys = std::get<doris::TableSchema>(schema).keys_type;
    std::cout << "table " << t.name() << ": " << keys;
    if (keys == "DUP_KEYS") std::cout << " (WARNING: deletes cannot apply to a DUPLICATE KEY table; every change is appended)";
    std::cout << "\n";
  }
  if (router->known_targets().empty())
    std::cout << "tables: routing names no explicit target; tables are derived from the data ('"
              << cfg.target_template << "')\n";
  return problems == 0 ? kExitOk : kExitCheckFailed;
}

int cmd_state(const Args& a) {
  if (a.positional.empty() || (a.positional[0] != "show" && a.positional[0] != "reset")) {
    std::cerr << "usage: cdc2doris state show|reset --config FILE [--yes]\n";
    return kExitUsage;
  }
  config::Config cfg = load_config_or_exit(a);
  setup_logging("warn", "text", cfg.secrets());
  auto store = open_state_or_exit(cfg);
  if (a.positional[0] == "reset") {
    if (!a.has("yes")) {
      std::cerr << "cdc2doris: state reset deletes every checkpoint in " << cfg.state_dir
                << "; the next run resumes from the consumer group's offsets. Add --yes to confirm.\n";
      return kExitUsage;
    }
    store->reset();
    std::cout << "state in " << cfg.state_dir << " reset\n";
    return kExitOk;
  }
  boost::json::object o;
  o["state_dir"] = cfg.state_dir;
  boost::json::array epochs;
  for (const auto& e : store->list()) {
    boost::json::array txns, parts;
    for (const auto& t : e.txns)
      txns.push_back({{"db", t.db}, {"table", t.table}, {"label", t.label}, {"txn_id", t.txn_id}, {"committed", t.committed}});
    for (const auto& p : e.partitions)
      parts.push_back({{"topic", p.topic}, {"partition", p.partition}, {"start", p.start_offset}, {"end", p.end_offset}});
    epochs.push_back({{"epoch", e.epoch},
                      {"state", state::to_string(e.state)},
                      {"label_prefix", e.label_prefix},
                      {"created_unix_ms", e.created_unix_ms},
                      {"txns", std::move(txns)},
                      {"partitions", std::move(parts)}});
  }
  o["epochs"] = std::move(epochs);
  boost::json::object offsets;
  for (const auto& [tp, off] : store->committed_offsets())
    offsets[tp.topic + "[" + std::to_string(tp.partition) + "]"] = {{"offset", off.offset}, {"epoch", off.epoch}};
  o["committed_offsets"] = std::move(offsets);
  boost::json::array prefixes;
  for (const auto& p : store->label_prefixes())
    prefixes.push_back({{"prefix", p.prefix}, {"first_epoch", p.first_epoch}, {"last_epoch", p.last_epoch}});
  o["label_prefixes"] = std::move(prefixes);
  std::cout << boost::json::serialize(o) << "\n";
  return kExitOk;
}

int cmd_decode(int argc, char** argv) {
  decode::DecodeCommandOptions base;
  // `--config FILE`: the same decoding, routing and bad-record settings as `run`.
  base.load_config = [](const std::string& path, decode::DecodeCommandOptions& o) -> std::optional<std::string> {
    std::shared_ptr<config::Config> cfg;
    try {
      cfg = std::make_shared<config::Config>(config::load_file(path));
    } catch (const config::ConfigError& e) {
      return std::string(e.what());
    }
    o.decoder = cfg->decoding;
    switch (cfg->delivery.bad_record_policy) {
      case pipeline::BadRecordPolicy::Fail: o.policy = decode::ErrorPolicy::Fail; break;
      case pipeline::BadRecordPolicy::Skip: o.policy = decode::ErrorPolicy::Skip; break;
      case pipeline::BadRecordPolicy::DeadLetter: o.policy = decode::ErrorPolicy::DeadLetter; break;
    }
    if (!cfg->delivery.dead_letter_topic.empty()) o.dead_letter_topic = cfg->delivery.dead_letter_topic;
    std::shared_ptr<pipeline::Router> router = config::make_router(*cfg);
    o.route = [cfg, router](const decode::Change& c) -> std::string {
      auto t = router->route(c);
      return t ? t->name() : std::string("(excluded by routing)");
    };
    return std::nullopt;
  };
  std::vector<std::string> args(argv + 2, argv + argc);
  return decode::run_decode_command(args, std::cin, std::cout, std::cerr, std::move(base));
}

}  // namespace
}  // namespace cdc2doris::daemon

int main(int argc, char** argv) {
  using namespace cdc2doris::daemon;
  std::signal(SIGPIPE, SIG_IGN);
  if (argc < 2) {
    std::cerr << kUsage;
    return kExitUsage;
  }
  const std::string cmd = argv[1];
  const bool help = [&] {
    for (int i = 2; i < argc; ++i)
      if (std::string(argv[i]) == "--help" || std::string(argv[i]) == "-h") return true;
    return false;
  }();
  if (cmd == "--help" || cmd == "-h" || cmd == "help" || (help && cmd != "decode")) {
    std::cout << kUsage;
    return kExitOk;
  }
  if (cmd == "version" || cmd == "--version") {
    std::cout << "cdc2doris " << CDC2DORIS_VERSION << "\n";
    return kExitOk;
  }
  if (cmd == "config-reference") {
    std::cout << cdc2doris::config::reference_markdown();
    return kExitOk;
  }
  if (cmd == "decode") return cmd_decode(argc, argv);
  Args a = parse_args(argc, argv, 2, {"connect", "yes"});
  if (cmd == "run") return cmd_run(a);
  if (cmd == "check") return cmd_check(a);
  if (cmd == "state") return cmd_state(a);
  std::cerr << "cdc2doris: unknown command '" << cmd << "'\n\n" << kUsage;
  return kExitUsage;
}
