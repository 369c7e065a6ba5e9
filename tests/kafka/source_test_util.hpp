#pragma once
// Helpers shared by the Kafka source tests: a listener that records the
// rebalance calls, and a loop that polls until enough records arrived.
#include <chrono>
#include <unistd.h>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/kafka/source.hpp"

namespace cdc2doris::kafka::testing {

struct Copied {
  std::string topic;
  int32_t partition = 0;
  int64_t offset = 0;
  std::optional<std::string> key;
  std::optional<std::string> value;
  std::vector<std::pair<std::string, std::optional<std::string>>> headers;
};

inline Copied copy(const Message& m) {
  Copied c{std::string(m.topic), m.partition, m.offset, {}, {}, {}};
  if (m.key) c.key = std::string(*m.key);
  if (m.value) c.value = std::string(*m.value);
  for (const auto& h : m.headers) {
    c.headers.emplace_back(std::string(h.key), h.value ? std::optional<std::string>(std::string(*h.value)) : std::nullopt);
  }
  return c;
}

class RecordingListener : public RebalanceListener {
 public:
  OffsetMap starts;  // returned from on_assign for the partitions it covers
  std::vector<std::vector<TopicPartition>> assigns;
  std::vector<std::vector<TopicPartition>> revokes;
  std::vector<bool> revoke_lost;
  std::function<void(const std::vector<TopicPartition>&)> on_revoke_hook;

  OffsetMap on_assign(const std::vector<TopicPartition>& added) override {
    assigns.push_back(added);
    OffsetMap out;
    for (const auto& tp : added) {
      if (auto it = starts.find(tp); it != starts.end()) out[tp] = it->second;
    }
    return out;
  }
  void on_revoke(const std::vector<TopicPartition>& revoked, bool lost) override {
    revokes.push_back(revoked);
    revoke_lost.push_back(lost);
    if (on_revoke_hook) on_revoke_hook(revoked);
  }
};

struct Drained {
  std::vector<Copied> records;
  std::vector<Error> errors;
  std::vector<Error> transient;
};

// Polls until `want` records arrived or `timeout` passed; with want == 0 it
// polls for the whole timeout (to show that nothing arrives).
inline Drained drain(Source& s, size_t want, std::chrono::milliseconds timeout,
                     const std::function<void(const Copied&)>& each = {}) {
  Drained d;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline && (want == 0 || d.records.size() < want)) {
    PollResult r = s.poll(std::chrono::milliseconds(100), 500);
    for (const auto& m : r.batch) {
      d.records.push_back(copy(m));
      if (each) each(d.records.back());
    }
    for (auto& e : r.errors) d.errors.push_back(std::move(e));
    for (auto& e : r.transient) d.transient.push_back(std::move(e));
  }
  return d;
}

inline std::string unique_name(const std::string& base) {
  static int n = 0;
  return base + "-" + std::to_string(::getpid()) + "-" + std::to_string(++n);
}

}  // namespace cdc2doris::kafka::testing
