#pragma once
// Checks against Kafka that need no consumer group membership: whether
// librdkafka accepts a configuration (used by config validation, so `check`
// and `run` reject the same properties) and a metadata round trip
// (`cdc2doris check --connect`).
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace cdc2doris::kafka {

struct PropertyProblem {
  std::string key;      // empty when librdkafka rejects the combination, not one key
  std::string message;  // librdkafka's reason; never the value of a sensitive key
};

// Applies every property to a scratch librdkafka conf and then creates (and
// destroys) a consumer handle from it without bootstrap servers, so nothing
// connects: the first property librdkafka rejects, or a combination it
// cannot build a client from (e.g. an unsupported sasl.mechanism). Files the
// properties name are not opened.
std::optional<PropertyProblem> check_properties(const std::map<std::string, std::string>& props);

// Whether `pattern` compiles as librdkafka compiles subscription regexes
// (POSIX extended, through the C library's regcomp). nullopt if it does, else
// the reason.
std::optional<std::string> check_topic_regex(const std::string& pattern);
bool topic_regex_matches(const std::string& pattern, const std::string& topic);

struct ClusterMetadata {
  int32_t answered_by = -1;  // id of the broker that answered
  std::vector<std::string> brokers;  // "host:port" as the cluster advertises them
  // Topic name -> partition count; topics whose metadata carried an error
  // (e.g. TOPIC_AUTHORIZATION_FAILED) are in `topic_errors` instead.
  std::map<std::string, int> topics;
  std::map<std::string, std::string> topic_errors;
};

struct ProbeResult {
  std::optional<ClusterMetadata> metadata;
  // Why there is no metadata: librdkafka's error, with the last broker-level
  // error it reported meanwhile (connection refused, SASL authentication
  // failed, TLS handshake) since those explain a timeout.
  std::string error;
};

// A metadata request for all topics with the given librdkafka properties
// (bootstrap.servers and the security settings); fails when no broker
// answers within `timeout`.
ProbeResult probe_metadata(const std::map<std::string, std::string>& props, std::chrono::milliseconds timeout);

// Reads the consumer group's committed offsets of `partitions` (an
// OffsetFetch, as the daemon does at its start) without joining the group:
// it needs DESCRIBE on the group and on each topic, which READ implies, so a
// principal without READ on the group or a topic fails here with the
// explained error (errors.hpp) instead of at the first poll of `run`.
// nullopt when the coordinator answered for every partition.
std::optional<std::string> probe_group(const std::map<std::string, std::string>& props,
                                       const std::vector<std::pair<std::string, int32_t>>& partitions,
                                       std::chrono::milliseconds timeout);

}  // namespace cdc2doris::kafka
