#pragma once
// The health monitor's thread (issue 13 §3, §4): every
// HealthOptions::lag_refresh_interval it asks Kafka (its own handle, see
// core/kafka/monitor.hpp) whether the cluster answers and the subscribed
// topics exist, and for every partition assigned to this pipeline the high
// watermark and the group's committed offset, so lag is fresh even when
// nothing is consumed (partitions paused, Doris hanging); and it checks the
// Doris FE. Everything goes into Metrics; nothing here touches the pipeline.
#include <condition_variable>
#include <mutex>
#include <thread>

#include "core/doris/client.hpp"
#include "core/kafka/monitor.hpp"
#include "core/pipeline/health.hpp"
#include "core/pipeline/metrics.hpp"

namespace cdc2doris::pipeline {

class HealthMonitor {
 public:
  // doris may be null (no FE check). Starts the thread.
  HealthMonitor(kafka::Monitor& kafka, doris::DorisClient* doris, Metrics& metrics, HealthOptions options);
  ~HealthMonitor();  // stops and joins
  HealthMonitor(const HealthMonitor&) = delete;
  HealthMonitor& operator=(const HealthMonitor&) = delete;

  // One round; the thread calls it, tests may too (with no thread running).
  void probe_kafka();
  void probe_doris();

 private:
  kafka::Monitor& kafka_;
  doris::DorisClient* doris_;
  Metrics& metrics_;
  HealthOptions options_;
  std::jthread kafka_thread_;
  std::jthread doris_thread_;
};

}  // namespace cdc2doris::pipeline
