// `cdc2doris run`: the pipeline until SIGTERM/SIGINT.
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

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>

#include "core/kafka/dlq.hpp"
#include "core/kafka/source.hpp"
#include "core/pipeline/pipeline.hpp"
#include "daemon/admin_server.hpp"
#include "daemon/commands.hpp"
#include "daemon/exit_codes.hpp"
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

}  // namespace

int cmd_run(const Args& a) {
  config::Config cfg = load_config_or_exit(a);
  setup_logging(cfg.log_level, cfg.log_format, cfg.secrets());
  const sigset_t signals = block_signals();
  spdlog::info("{} starting; config {}", version_line(), cfg.path);

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

}  // namespace cdc2doris::daemon
