#pragma once
// What the health monitor asks Kafka, off the pipeline thread (issue 13 §3,
// §4): is the cluster reachable, do the subscribed topics exist, and where
// are each partition's high watermark and the group's committed offset.
//
// The real implementation uses its own librdkafka consumer handle with the
// pipeline's properties (security settings and group.id included) that never
// subscribes, so it never joins the group and shares nothing with the
// pipeline's consumer: a probe cannot block a poll, and the pipeline closing
// its consumer cannot pull a handle away from under a probe.
//
// Threads: one caller at a time (the monitor thread).
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "core/common/error.hpp"
#include "core/kafka/source.hpp"

namespace cdc2doris::kafka {

struct ClusterView {
  // Configured topic names that do not exist, and configured regexes
  // (entries starting with '^') that match no topic.
  std::vector<std::string> missing;
  // Every topic the configuration selects, with its partition count.
  std::map<std::string, int> partitions;
};

class Monitor {
 public:
  virtual ~Monitor();
  // One metadata round trip. An Error when no broker answered in time.
  virtual std::variant<ClusterView, Error> cluster(std::chrono::milliseconds timeout) = 0;
  // Queried from the partition leaders (not the fetcher's cache, which goes
  // stale while partitions are paused or nothing is fetched).
  virtual std::variant<std::map<TopicPartition, Watermarks>, Error> watermarks(
      const std::vector<TopicPartition>& tps, std::chrono::milliseconds timeout) = 0;
  // The consumer group's committed offsets (absent: none committed).
  virtual std::variant<OffsetMap, Error> committed(const std::vector<TopicPartition>& tps,
                                                   std::chrono::milliseconds timeout) = 0;
  // The same with each offset's metadata (`state abort-lingering` reads the
  // epochs named there). The default has no metadata.
  virtual std::variant<GroupOffsetMap, Error> committed_group(const std::vector<TopicPartition>& tps,
                                                              std::chrono::milliseconds timeout);
};

// Throws std::invalid_argument for a bad property (like make_kafka_source).
std::unique_ptr<Monitor> make_kafka_monitor(const SourceConfig& cfg);

// True when `topic` is selected by the configured entry (a name, or a regex
// when it starts with '^'). A regex that does not compile selects nothing.
bool topic_selected(const std::string& entry, const std::string& topic);

}  // namespace cdc2doris::kafka
