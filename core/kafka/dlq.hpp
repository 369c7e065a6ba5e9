#pragma once
// Dead-letter queue: the original record (key, value, headers) is produced to
// a topic with headers that say why and where it came from. Behind an
// interface so the pipeline's tests can fake it.
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "core/common/error.hpp"
#include "core/kafka/source.hpp"

namespace cdc2doris::kafka {

// Header names added to every dead letter.
inline constexpr std::string_view kDlqErrorHeader = "cdc2doris.error";
inline constexpr std::string_view kDlqTopicHeader = "cdc2doris.source.topic";
inline constexpr std::string_view kDlqPartitionHeader = "cdc2doris.source.partition";
inline constexpr std::string_view kDlqOffsetHeader = "cdc2doris.source.offset";

class DeadLetterQueue {
 public:
  virtual ~DeadLetterQueue();
  // Enqueues; copies everything it needs, so the message's batch may be
  // released right after. An error here is local (queue full, unknown topic
  // in the producer's cache); delivery failures are reported by flush().
  virtual std::optional<Error> produce(const std::string& topic, const Message& original,
                                       const std::string& error_text) = 0;
  // Waits until every produced record is acknowledged. Returns the first
  // delivery failure since the last flush, or a Retry error on timeout.
  // The pipeline flushes before it commits the epoch's offsets, so a dead
  // letter is durable before its source offset is committed.
  virtual std::optional<Error> flush(std::chrono::milliseconds timeout) = 0;
};

// Idempotent librdkafka producer (enable.idempotence=true, acks=all).
// `properties` as for SourceConfig (bootstrap.servers, SASL/SSL...).
// Throws std::invalid_argument for a bad property. Single-threaded use.
std::unique_ptr<DeadLetterQueue> make_kafka_dlq(const std::map<std::string, std::string>& properties);

}  // namespace cdc2doris::kafka
