#pragma once
// The Kafka side of the pipeline (issue 6 §1, §7, §8, §10), behind an
// interface so the pipeline's tests can use a fake. The real implementation
// comes from make_kafka_source() (core/kafka/kafka_source.cpp); see
// docs/kafka-source.md for the thread model and the rebalance/epoch hand-off.
//
// Threads: one "poll thread" (the pipeline's) calls every Source method;
// RebalanceListener callbacks run on that thread, inside poll() or close().
// lag() may also be called from a metrics thread. librdkafka's own threads
// (broker I/O, main) belong to librdkafka and end in close()/destruction.
#include <chrono>
#include <compare>
#include <functional>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/common/error.hpp"

namespace cdc2doris::kafka {

struct TopicPartition {
  std::string topic;
  int32_t partition = 0;
  auto operator<=>(const TopicPartition&) const = default;
};
std::string to_string(const TopicPartition& tp);  // "topic[3]"

using OffsetMap = std::map<TopicPartition, int64_t>;  // next offset to read

// A group offset with the metadata string committed with it (the pipeline
// names its epoch there, see core/pipeline/group_meta.hpp).
struct GroupOffset {
  int64_t offset = 0;
  std::string metadata;
  bool operator==(const GroupOffset&) const = default;
};
using GroupOffsetMap = std::map<TopicPartition, GroupOffset>;
// A read of committed offsets without the metadata, and one answered by a
// reader that has none (fakes, the defaults of committed_group()).
std::variant<OffsetMap, Error> offsets_only(std::variant<GroupOffsetMap, Error> r);
std::variant<GroupOffsetMap, Error> without_metadata(std::variant<OffsetMap, Error> r);

// The answer to a commit made with the member's generation.
enum class CommitStatus {
  Committed,
  // The coordinator refused it because this member no longer belongs to the
  // current generation (ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID,
  // FENCED_INSTANCE_ID, REBALANCE_IN_PROGRESS): nothing was written.
  Fenced,
  // Anything else (coordinator unreachable, timeout): it may or may not have
  // been written.
  Failed,
};
struct CommitResult {
  CommitStatus status = CommitStatus::Committed;
  std::optional<Error> error;  // set unless Committed
};

struct Header {
  std::string_view key;
  std::optional<std::string_view> value;  // Kafka distinguishes null from empty
};

enum class TimestampType : uint8_t { None, CreateTime, LogAppendTime };

// A view into a record owned by its MessageBatch; valid until the batch is
// released or destroyed. Copy what must outlive the batch.
struct Message {
  std::string_view topic;
  int32_t partition = 0;
  int64_t offset = 0;
  std::optional<std::string_view> key;    // nullopt: null key
  std::optional<std::string_view> value;  // nullopt: tombstone
  std::span<const Header> headers;
  int64_t timestamp_ms = -1;
  TimestampType timestamp_type = TimestampType::None;
};

// Owns the records behind a batch's views. Move-only; may be handed to and
// released on another thread.
class MessageBatch {
 public:
  // Whatever keeps the bytes alive (librdkafka messages, or strings in a fake).
  struct Owner {
    virtual ~Owner() = default;
  };

  MessageBatch() = default;
  // headers: storage the messages' header spans point into.
  MessageBatch(std::vector<Message> messages, std::unique_ptr<std::vector<Header>> headers,
               std::unique_ptr<Owner> owner);
  MessageBatch(MessageBatch&&) noexcept = default;
  MessageBatch& operator=(MessageBatch&&) noexcept;
  ~MessageBatch();

  std::span<const Message> messages() const { return messages_; }
  auto begin() const { return messages_.begin(); }
  auto end() const { return messages_.end(); }
  size_t size() const { return messages_.size(); }
  bool empty() const { return messages_.empty(); }
  const Message& operator[](size_t i) const { return messages_[i]; }
  // Key + value + header bytes, for the memory cap (§7).
  size_t bytes() const { return bytes_; }
  // Frees the underlying records; every view into the batch dangles after.
  void release();

 private:
  std::vector<Message> messages_;
  std::unique_ptr<std::vector<Header>> headers_;
  std::unique_ptr<Owner> owner_;
  size_t bytes_ = 0;
};

struct PollResult {
  MessageBatch batch;
  // Partitions whose next offset had been deleted (retention) and that were
  // moved to the log start under SourceConfig::skip_offset_gaps (logged).
  std::vector<TopicPartition> offset_gaps_skipped;
  // Errors the pipeline must act on, by disposition: Fatal (authentication,
  // authorization, librdkafka fatal error, offset reset under
  // auto.offset.reset=error) stops the daemon; Retry aborts the epoch and
  // rewinds.
  std::vector<Error> errors;
  // Conditions librdkafka recovers from by itself (broker down, transport
  // errors, unknown topic): log/count them, no action needed.
  std::vector<Error> transient;
};

// A partition's log-start offset (the first offset retention or
// DeleteRecords left) and high watermark (the next offset to be written).
// (Also the health monitor's, core/kafka/monitor.hpp.)
struct Watermarks {
  int64_t low = -1;
  int64_t high = -1;
};
using WatermarkMap = std::map<TopicPartition, Watermarks>;

// The remedies printed with a retention gap, in one place (the pipeline's
// start-offset check and the source's offset-reset event).
std::string offset_gap_message(const TopicPartition& tp, int64_t next, int64_t log_start);

struct PartitionLag {
  TopicPartition tp;
  std::optional<int64_t> position;        // next offset the consumer will fetch
  std::optional<int64_t> high_watermark;  // as of the last fetch response
  std::optional<int64_t> lag;             // high_watermark - position
};

// The pipeline's side of a rebalance. Both calls run on the poll thread,
// synchronously, inside Source::poll() (or Source::close()).
class RebalanceListener {
 public:
  virtual ~RebalanceListener() = default;
  // Partitions newly assigned to this consumer. Return the start offset for
  // each partition the checkpoint store knows; a partition left out starts at
  // the group's committed offset, else per auto.offset.reset.
  virtual OffsetMap on_assign(const std::vector<TopicPartition>& added) = 0;
  // Partitions about to be taken away. The pipeline closes (pre-commits,
  // records, commits) the epoch covering them before returning; after the
  // return the partitions are unassigned. Messages of these partitions that
  // poll() had fetched but not yet returned are dropped (the next owner
  // reads them from the committed offset). lost=true: the group already gave
  // them to someone else (session timeout) — abort, do not commit.
  virtual void on_revoke(const std::vector<TopicPartition>& revoked, bool lost) = 0;
  // After every rebalance callback, also a cooperative one that changes
  // nothing for this member (no on_assign/on_revoke then): the group has
  // settled on a generation this member belongs to.
  virtual void on_rebalance() {}
};

class Source {
 public:
  virtual ~Source();

  // Joins the group with the configured topics. The listener must outlive
  // the Source (or close()).
  virtual void subscribe(RebalanceListener& listener) = 0;

  // Waits up to `timeout` for the first message, then takes what is already
  // fetched, up to max_messages. Serves rebalance callbacks. Must be called
  // at least every max.poll.interval.ms, also while every partition is paused.
  virtual PollResult poll(std::chrono::milliseconds timeout, size_t max_messages) = 0;

  // Next fetch of the partition starts at `offset`; records already fetched
  // past it are discarded. The partition must be assigned.
  virtual std::optional<Error> seek(const TopicPartition& tp, int64_t offset,
                                    std::chrono::milliseconds timeout) = 0;
  // Backpressure: paused partitions stay assigned, are not fetched.
  virtual std::optional<Error> pause(const std::vector<TopicPartition>& tps) = 0;
  virtual std::optional<Error> resume(const std::vector<TopicPartition>& tps) = 0;

  // Synchronous commit of the given offsets to the consumer group (offsets
  // are the next offset to read). metadata is stored with each offset (the
  // pipeline puts its epoch there).
  virtual std::optional<Error> commit(const OffsetMap& offsets, const std::string& metadata) = 0;
  // The group's committed offsets for the partitions; a partition without a
  // committed offset is absent from the map.
  virtual std::variant<OffsetMap, Error> committed(const std::vector<TopicPartition>& tps,
                                                   std::chrono::milliseconds timeout) = 0;

  // Synchronous commit with a metadata string per partition, carrying this
  // member's generation: the fenced commit point of multi-instance operation
  // (docs/architecture.md). The default commits each distinct metadata
  // string with commit() and never reports Fenced (fakes without a group).
  virtual CommitResult commit_group(const GroupOffsetMap& offsets);
  // The group's committed offsets with their metadata. The default reads
  // committed() and has no metadata.
  virtual std::variant<GroupOffsetMap, Error> committed_group(const std::vector<TopicPartition>& tps,
                                                              std::chrono::milliseconds timeout);

  // Asks the partition leaders for the watermarks (a broker round trip per
  // partition). The default (fakes) knows none: an empty map.
  virtual std::variant<WatermarkMap, Error> watermarks(const std::vector<TopicPartition>& tps,
                                                       std::chrono::milliseconds timeout);

  virtual std::vector<TopicPartition> assignment() = 0;
  virtual std::vector<PartitionLag> lag() = 0;

  // Reads the records in [first, end) of each partition, whether this member
  // owns it or not, on a handle of its own that never joins the group, and
  // hands each to `fn` in partition offset order; the group's assignment and
  // positions are untouched. For the replay of a recorded epoch, whose range
  // may span partitions the group gave to others meanwhile (issue 31).
  // nullopt when done; an Error when a record could not be read (a range
  // deleted by retention is Fatal). The default: Unsupported (Retry) — the
  // pipeline then replays through the subscribed consumer.
  using Ranges = std::map<TopicPartition, std::pair<int64_t, int64_t>>;
  virtual std::optional<Error> read_range(const Ranges& ranges, const std::function<void(const Message&)>& fn,
                                          std::chrono::milliseconds timeout);
  virtual bool can_read_range() const { return false; }

  // Leaves the group: on_revoke runs for the remaining assignment, then the
  // consumer is closed. If `timeout` passes first the handle is destroyed
  // without a clean leave (the group notices after session.timeout.ms) and an
  // Error is returned. Idempotent.
  virtual std::optional<Error> close(std::chrono::milliseconds timeout) = 0;
};

// Configuration of the real source.
struct SourceConfig {
  // Topic names; an entry starting with '^' is a regex (librdkafka syntax).
  std::vector<std::string> topics;
  // Passed to librdkafka verbatim (bootstrap.servers, group.id, SASL/SSL...).
  // enable.auto.commit and enable.auto.offset.store are forced to false (a
  // "true" is rejected); partition.assignment.strategy defaults to
  // cooperative-sticky, auto.offset.reset to earliest.
  std::map<std::string, std::string> properties;
  // Parse each record's headers into Message::headers. librdkafka parses them
  // lazily (a buffer allocation and a varint walk per record, ~7% of the
  // pipeline thread); the daemon needs them only to copy bad records to a
  // dead-letter topic, so it turns this off otherwise and Message::headers
  // is then empty.
  bool read_headers = true;
  // auto.offset.reset is handed to librdkafka as "error" and the configured
  // value (default earliest) is applied only to a partition the group and
  // the pipeline have no offset for, so a next offset deleted by retention
  // is never passed over silently: it is a Fatal error naming the gap, or,
  // with this set (kafka.on_offset_gap: skip), a seek to the log start
  // reported in PollResult::offset_gaps_skipped.
  bool skip_offset_gaps = false;
};

// Copy of the properties safe to log: values of keys that carry secrets
// (password, secret, sasl.jaas.config, key material, tokens) become "[redacted]".
std::map<std::string, std::string> redact(const std::map<std::string, std::string>& props);
bool is_sensitive_property(std::string_view key);

// Creates the librdkafka-backed source. Throws std::invalid_argument for a
// bad property (naming the key, never a secret value).
std::unique_ptr<Source> make_kafka_source(SourceConfig cfg);

}  // namespace cdc2doris::kafka
