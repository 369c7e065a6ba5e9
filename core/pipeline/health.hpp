#pragma once
// What /readyz, /healthz and the systemd watchdog say, decided in one place
// from the Metrics the pipeline and the health monitor write (issue 13 §3).
// docs/operations.md "Health" documents every reason and grace period.
#include <chrono>
#include <string>

#include "core/pipeline/metrics.hpp"

namespace cdc2doris::pipeline {

struct HealthOptions {
  // Kafka unreachable, or a configured topic missing (a regex matching none),
  // for longer than this: not ready. A broker that never answered since
  // start is not ready at once.
  std::chrono::milliseconds kafka_grace{15'000};
  // Doris loads (or commits) failing without a success in between for longer
  // than this: not ready. 0: from the first failure until a load (commit)
  // succeeds again. A grace would answer 200 while every attempt fails, and
  // probes sampling across retries saw readiness flap (issue 35).
  std::chrono::milliseconds doris_failure_grace{0};
  // The epoch machine has not advanced (no epoch committed, no idle epoch
  // end) for longer than this: not ready. Never below 2 x epoch_interval.
  std::chrono::milliseconds stall_timeout{120'000};
  std::chrono::milliseconds epoch_interval{10'000};
  // The pipeline thread's heartbeat older than this: /healthz fails and the
  // watchdog is no longer fed. Keep it above doris.load_timeout, the longest
  // single wait of that thread.
  std::chrono::milliseconds heartbeat_timeout{600'000};
  // How often the monitor asks Kafka for watermarks and committed offsets.
  std::chrono::milliseconds lag_refresh_interval{3'000};
};

// Empty when ready, else every reason, "; "-separated.
std::string not_ready_reason(const Metrics& m, const HealthOptions& o);
// Empty when the pipeline thread is alive, else why not.
std::string not_alive_reason(const Metrics& m, const HealthOptions& o);

// What a forced exit (the shutdown deadline, a second signal) leaves behind,
// in words, from the last published state: never "nothing" while records
// were consumed that no committed epoch covers.
std::string abandoned_epochs(const Metrics& m);

}  // namespace cdc2doris::pipeline
