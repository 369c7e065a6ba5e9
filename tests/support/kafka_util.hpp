#pragma once
// Small blocking librdkafka helpers shared by the real-broker and mock-cluster
// fixtures: topic creation, producing, reading a group's committed offsets and
// draining a topic. They throw std::runtime_error with the broker's message.
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace cdc2doris::test {

struct TestRecord {
  std::optional<std::string> key;
  std::optional<std::string> value;  // nullopt = tombstone
  std::vector<std::pair<std::string, std::string>> headers;
  int32_t partition = -1;  // -1: librdkafka's partitioner (by key)
};

struct ConsumedRecord {
  std::string topic;
  int32_t partition = 0;
  int64_t offset = 0;
  std::optional<std::string> key;
  std::optional<std::string> value;
  std::vector<std::pair<std::string, std::string>> headers;
};

void create_topic(const std::string& bootstrap, const std::string& topic, int partitions);
// configs: topic-level configs (cleanup.policy, segment.ms, ...).
void create_topic(const std::string& bootstrap, const std::string& topic, int partitions,
                  const std::map<std::string, std::string>& configs);
// DeleteTopics; returns once the metadata no longer shows the topic.
void delete_topic(const std::string& bootstrap, const std::string& topic);
// DeleteRecords: moves the partition's log start to `before`.
void delete_records(const std::string& bootstrap, const std::string& topic, int32_t partition, int64_t before);
// {log start, high watermark}.
std::pair<int64_t, int64_t> watermarks(const std::string& bootstrap, const std::string& topic, int32_t partition);
// Grows `topic` to `total` partitions (CreatePartitions) and waits until the
// metadata shows them.
void add_partitions(const std::string& bootstrap, const std::string& topic, int total);
void produce(const std::string& bootstrap, const std::string& topic, const std::vector<TestRecord>& records,
             std::chrono::milliseconds flush_timeout = std::chrono::seconds(60));
// Committed offsets of `group` for every partition of `topic` (-1001 = none).
std::map<int32_t, int64_t> committed_offsets(const std::string& bootstrap, const std::string& group,
                                             const std::string& topic);
// Consumes `topic` from the beginning with a fresh group until `expected`
// records arrived or `timeout` passed.
std::vector<ConsumedRecord> consume_all(const std::string& bootstrap, const std::string& topic,
                                        size_t expected, std::chrono::milliseconds timeout);
// Waits until the cluster answers a metadata request.
bool wait_for_cluster(const std::string& bootstrap, std::chrono::milliseconds timeout);

}  // namespace cdc2doris::test
