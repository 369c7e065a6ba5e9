#include "core/pipeline/health_monitor.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "core/common/thread_name.hpp"

namespace cdc2doris::pipeline {

namespace {

std::optional<kafka::TopicPartition> parse_tp(const std::string& s) {  // "topic[3]"
  auto open = s.rfind('[');
  if (open == std::string::npos || s.back() != ']') return std::nullopt;
  try {
    return kafka::TopicPartition{s.substr(0, open), std::stoi(s.substr(open + 1, s.size() - open - 2))};
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// Sleeps `d` or until stop is requested.
void pause(std::stop_token st, std::chrono::milliseconds d) {
  std::mutex m;
  std::condition_variable_any cv;
  std::unique_lock lk(m);
  cv.wait_for(lk, st, d, [] { return false; });
}

}  // namespace

HealthMonitor::HealthMonitor(kafka::Monitor& kafka, doris::DorisClient* doris, Metrics& metrics, HealthOptions options)
    : kafka_(kafka), doris_(doris), metrics_(metrics), options_(options) {
  kafka_thread_ = std::jthread([this](std::stop_token st) {
    name_this_thread("health-kafka");
    while (!st.stop_requested()) {
      probe_kafka();
      pause(st, options_.lag_refresh_interval);
    }
  });
  // Apart from Kafka: a hanging FE must not delay the lag refresh.
  if (doris_ != nullptr)
    doris_thread_ = std::jthread([this](std::stop_token st) {
      name_this_thread("health-doris");
      while (!st.stop_requested()) {
        probe_doris();
        pause(st, std::chrono::seconds(2));
      }
    });
}

HealthMonitor::~HealthMonitor() {
  kafka_thread_.request_stop();
  doris_thread_.request_stop();
}

void HealthMonitor::probe_kafka() {
  // Bounded so a stop is never held up long; the refresh interval paces the rest.
  const auto timeout = std::clamp<std::chrono::milliseconds>(options_.lag_refresh_interval * 2,
                                                             std::chrono::seconds(1), std::chrono::seconds(5));
  auto cluster = kafka_.cluster(timeout);
  if (auto* err = std::get_if<Error>(&cluster)) {
    metrics_.set_kafka_unreachable(err->what());
    return;
  }
  metrics_.set_kafka_reachable(std::get<kafka::ClusterView>(cluster).missing);

  std::vector<kafka::TopicPartition> tps;
  for (const auto& name : metrics_.partition_names())
    if (auto tp = parse_tp(name)) tps.push_back(*tp);
  if (tps.empty()) return;
  auto marks = kafka_.watermarks(tps, timeout);
  if (auto* err = std::get_if<Error>(&marks)) {
    spdlog::debug("health monitor: {}", err->what());
    return;
  }
  auto committed = kafka_.committed(tps, timeout);
  kafka::OffsetMap group;
  if (auto* offs = std::get_if<kafka::OffsetMap>(&committed)) group = std::move(*offs);
  const int64_t now = unix_now_ms();
  for (const auto& [tp, w] : std::get<std::map<kafka::TopicPartition, kafka::Watermarks>>(marks)) {
    auto g = group.find(tp);
    metrics_.set_partition_offsets(kafka::to_string(tp), w.low, w.high, g == group.end() ? -1 : g->second, now);
  }
}

void HealthMonitor::probe_doris() {
  auto up = doris_->health();
  metrics_.set_doris_fe_problem(up ? "" : "Doris FE not reachable: " + up.error().what());
}

}  // namespace cdc2doris::pipeline
