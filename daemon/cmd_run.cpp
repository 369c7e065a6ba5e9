// `cdc2doris run`: the pipeline until SIGTERM/SIGINT.
//
// Threads of `run` and who stops them:
//   main thread      Pipeline::run(): Kafka poll, decode, loads, RocksDB writes.
//                    Returns after a graceful shutdown or a fatal error.
//   signal thread    sigtimedwait() for SIGTERM/SIGINT/SIGHUP (blocked in every
//                    other thread), sd_notify READY/STOPPING/WATCHDOG; stopped
//                    through its stop_token after run() returns. It also
//                    enforces the shutdown deadline, counted from a signal or
//                    from the pipeline's stop on an error: if run() has not
//                    returned by then (a Doris call or the Kafka close hangs)
//                    or a second signal comes, it logs what is abandoned and
//                    _exit()s with 4 (1 after a fatal error). The watchdog
//                    is fed only while the pipeline thread's heartbeat is fresh.
//   health monitor   two threads (pipeline::HealthMonitor): Kafka reachability,
//                    topics, watermarks and committed offsets; the Doris FE.
//                    Joined by its destructor, after run() returned.
//   admin thread     AdminServer's io_context; stopped and joined by its destructor.
//   Doris I/O        owned by the DorisClient; joined by its destructor.
//   librdkafka       owned by the Kafka source; ended by close()/destruction.
#include <signal.h>
#include <spdlog/spdlog.h>
#include <systemd/sd-daemon.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <optional>
#include <thread>

#include "core/avro/avro_records.hpp"
#include "core/common/build_info.hpp"
#include "core/common/thread_name.hpp"
#include "core/kafka/dlq.hpp"
#include "core/kafka/monitor.hpp"
#include "core/kafka/source.hpp"
#include "core/pipeline/health.hpp"
#include "core/pipeline/health_monitor.hpp"
#include "core/pipeline/pipeline.hpp"
#include "daemon/admin_server.hpp"
#include "daemon/commands.hpp"
#include "daemon/exit_codes.hpp"
#include "daemon/instance_claim.hpp"
#include "daemon/logging.hpp"

namespace cdc2doris::daemon {
namespace {

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

// The pipeline's own shutdown ends at the deadline; this margin lets it
// report and close Kafka before the signal thread gives up on it.
constexpr auto kHardStopMargin = std::chrono::seconds(3);

[[noreturn]] void exit_abandoning(const pipeline::Metrics& metrics, const std::string& why,
                                  int code = kExitShutdownDeadline) {
  spdlog::error("{}: exiting with {} without waiting for the pipeline (phase {}); {}", why, code,
                metrics.snapshot().phase, pipeline::abandoned_epochs(metrics));
  spdlog::default_logger()->flush();
  // No destructors: they would wait for the very calls that hang. The
  // checkpoint state is crash-safe by design (every write is synced), and
  // the state directory's lock dies with the process.
  std::_Exit(code);
}

// The subscribed topics' schemas, read before the first record needs one:
// a registry outage later costs nothing for them. A registry that cannot be
// reached now only costs that (each schema is fetched when a record needs
// it); credentials it refuses would stop the pipeline at its first Avro
// record, so they stop the start.
int prefetch_schemas(avro::AvroRecords& records, const std::vector<std::string>& topics) {
  const auto started = std::chrono::steady_clock::now();
  std::variant<avro::RegistryClient::Prefetched, avro::RegistryFailure> got;
  try {
    got = records.prefetch(topics);
  } catch (const std::exception& e) {
    spdlog::warn("schema registry: no schemas prefetched: {}", e.what());
    return kExitOk;
  }
  if (const auto* f = std::get_if<avro::RegistryFailure>(&got)) {
    if (f->kind == avro::RegistryFailure::Kind::Refused) {
      spdlog::error("schema registry: {}", f->message);
      return kExitFatal;
    }
    spdlog::warn("schema registry: prefetch stopped, the schemas not read are fetched when a record needs them: {}",
                 f->message);
    return kExitOk;
  }
  const auto& p = std::get<avro::RegistryClient::Prefetched>(got);
  spdlog::info("schema registry: {} schema(s) of {} subject(s) of the subscribed topics prefetched in {} ms", p.schemas,
               p.subjects,
               std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started).count());
  return kExitOk;
}

}  // namespace

int cmd_run(const Args& a) {
  config::Config cfg = load_config_or_exit(a);
  setup_logging(cfg.log_level, cfg.log_format);
  const sigset_t signals = block_signals();
  spdlog::info("{} starting; config {}", version_line(), cfg.path);

  auto store = open_state_or_exit(cfg);
  adopt_recorded_label_prefix(cfg, *store);
  // Before the consumer exists: a second member with this group.instance.id
  // would fence the running one, and a second writer under this label
  // prefix would abort its txns (issue 31). The state directory's lock
  // (above) covers a shared state directory; these cover a copy of the
  // configuration with another one.
  std::vector<std::unique_ptr<IdentityClaim>> claims;
  struct Claim {
    std::string name, what, remedy;
  };
  std::vector<Claim> wanted;
  if (cfg.static_membership)
    wanted.push_back({"member/" + cfg.group_id + "/" + cfg.instance_id,
                      "kafka.group_id '" + cfg.group_id + "' and kafka.instance_id '" + cfg.instance_id + "'",
                      "a second member with the same group.instance.id would fence it; set another "
                      "kafka.instance_id (the default is the host name)"});
  wanted.push_back({"label-prefix/" + cfg.delivery.label_prefix,
                    "delivery.label_prefix '" + cfg.delivery.label_prefix + "'",
                    "two writers under one label prefix abort each other's transactions; set another "
                    "delivery.label_prefix"});
  for (const auto& w : wanted) {
    try {
      claims.push_back(std::make_unique<IdentityClaim>(w.name));
    } catch (const ClaimTaken& e) {
      const std::string who = e.holder() ? "pid " + std::to_string(*e.holder()) : "another process";
      const std::string msg = "another cdc2doris (" + who + ") is running on this host with " + w.what +
                              ": refusing to start, the running one is left alone (" + w.remedy + ")";
      spdlog::error("{}", msg);
      std::cerr << "cdc2doris: " << msg << "\n";
      return kExitState;
    } catch (const std::exception& e) {
      spdlog::warn("{}; duplicate starts on this host are not detected", e.what());
    }
  }
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
  std::unique_ptr<avro::AvroRecords> avro_records;
  if (cfg.record_format.any_avro()) {
    try {
      avro_records = std::make_unique<avro::AvroRecords>(cfg.record_format, cfg.schema_registry);
    } catch (const std::exception& e) {
      spdlog::error("configuration: {}", e.what());
      return kExitUsage;
    }
    if (int code = prefetch_schemas(*avro_records, cfg.topics); code != kExitOk) return code;
  }
  auto router = config::make_router(cfg);
  pipeline::Metrics metrics;
  pipeline::Pipeline pipe(
      cfg.delivery, cfg.decoding,
      pipeline::Dependencies{*source, *doris, *store, *router, metrics, dlq.get(), avro_records.get()});

  std::atomic<bool> stopping{false};
  std::unique_ptr<kafka::Monitor> kafka_monitor;
  try {
    kafka_monitor = kafka::make_kafka_monitor(cfg.source_config());
  } catch (const std::exception& e) {
    spdlog::error("configuration: {}", e.what());
    return kExitUsage;
  }
  const pipeline::HealthOptions health = cfg.health;
  Readiness readiness{[&]() -> std::string {
                        if (stopping.load()) return "shutting down";
                        return pipeline::not_ready_reason(metrics, health);
                      },
                      [&]() { return pipeline::not_alive_reason(metrics, health); }};
  AdminOptions admin_options;
  admin_options.version = std::string(build_info::version());
  admin_options.commit = std::string(build_info::commit());
  admin_options.process_metrics = true;
  admin_options.token = cfg.admin_token;
  admin_options.probes_require_token = cfg.admin_probes_require_token;
  admin_options.tls_cert_file = cfg.admin_tls_cert_file;
  admin_options.tls_key_file = cfg.admin_tls_key_file;
  std::unique_ptr<AdminServer> admin;
  try {
    admin = std::make_unique<AdminServer>(cfg.admin_listen, metrics, readiness, admin_options);
    spdlog::info("admin endpoint on {}://{} (/healthz /readyz /metrics /status){}",
                 cfg.admin_tls_cert_file.empty() ? "http" : "https", admin->address(),
                 cfg.admin_token.empty()                ? "; no token (admin.token)"
                 : cfg.admin_probes_require_token ? "; bearer token required on every path"
                                                        : "; bearer token required on /metrics and /status");
  } catch (const std::exception& e) {
    spdlog::error("admin.listen {}: {}", cfg.admin_listen, e.what());
    return kExitUsage;
  }
  auto monitor = std::make_unique<pipeline::HealthMonitor>(*kafka_monitor, doris.get(), metrics, health);

  std::jthread signal_thread([&](std::stop_token st) {
    name_this_thread("signals");
    uint64_t watchdog_usec = 0;
    const bool watchdog = sd_watchdog_enabled(0, &watchdog_usec) > 0;
    auto last_ping = std::chrono::steady_clock::now();
    bool ready_sent = false;
    bool starving_logged = false;
    std::optional<std::chrono::steady_clock::time_point> hard_stop;
    bool error_stop = false;
    while (!st.stop_requested()) {
      timespec timeout{0, 200'000'000};
      int sig = sigtimedwait(&signals, nullptr, &timeout);
      if (sig > 0 && stopping.load()) exit_abandoning(metrics, std::string("received a second ") + strsignal(sig));
      if (sig > 0) {
        spdlog::info("received {}; finishing the current epoch (deadline {} ms; a second signal exits at once)",
                     strsignal(sig), cfg.delivery.shutdown_deadline.count());
        stopping = true;
        sd_notify(0, "STOPPING=1");
        pipe.request_stop();
        hard_stop = std::chrono::steady_clock::now() + cfg.delivery.shutdown_deadline + kHardStopMargin;
      }
      if (!hard_stop && metrics.stopping_on_error.load()) {
        // The pipeline stopped on an error and is closing Kafka. librdkafka
        // before 2.4 (Debian 12: 2.0.2) can block for good inside that close
        // (a cooperative consumer closing while it handles an assignment,
        // confluentinc/librdkafka#4527): seen once after a retention-gap
        // stop at the first assignment, issue 31.
        hard_stop = std::chrono::steady_clock::now() + cfg.delivery.shutdown_deadline + kHardStopMargin;
        error_stop = true;
      }
      if (hard_stop && std::chrono::steady_clock::now() >= *hard_stop) {
        const std::string deadline = std::to_string(cfg.delivery.shutdown_deadline.count()) + " ms";
        if (error_stop)
          exit_abandoning(metrics,
                          "the pipeline stopped on an error and its shutdown (aborting loads, closing Kafka) did not "
                          "end within the shutdown deadline of " + deadline,
                          metrics.stopping_fatal.load() ? kExitFatal : kExitShutdownDeadline);
        exit_abandoning(metrics, "shutdown deadline of " + deadline +
                                     " passed and the pipeline is still waiting (most likely on Doris)");
      }
      if (!ready_sent && metrics.recovered.load()) {
        sd_notify(0, "READY=1");
        ready_sent = true;
      }
      if (watchdog && std::chrono::steady_clock::now() - last_ping > std::chrono::microseconds(watchdog_usec / 2)) {
        // Fed only while the pipeline thread itself shows progress: a wedged
        // pipeline lets systemd's WatchdogSec run out and restart the unit.
        const std::string why = pipeline::not_alive_reason(metrics, health);
        if (why.empty()) {
          sd_notify(0, "WATCHDOG=1");
          last_ping = std::chrono::steady_clock::now();
          starving_logged = false;
        } else if (!starving_logged) {
          spdlog::error("not feeding the systemd watchdog: {}", why);
          starving_logged = true;
        }
      }
    }
  });

  pipeline::RunResult result = pipe.run();
  signal_thread.request_stop();
  signal_thread.join();
  monitor.reset();
  admin.reset();
  source.reset();
  try {
    store->close();
  } catch (const state::StateError& e) {
    spdlog::error("closing the checkpoint state: {}", e.what());
    return kExitState;
  }
  if (!result.error) {
    spdlog::info("stopped cleanly; every epoch with data is committed");
    return kExitOk;
  }
  spdlog::error("stopped: {}", result.error->what());
  return result.error->disposition() == Disposition::Retry ? kExitShutdownDeadline : kExitFatal;
}

}  // namespace cdc2doris::daemon
