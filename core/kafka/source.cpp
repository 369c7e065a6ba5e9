#include "core/kafka/source.hpp"

namespace cdc2doris::kafka {

Source::~Source() = default;

CommitResult Source::commit_group(const GroupOffsetMap& offsets) {
  std::map<std::string, OffsetMap> by_meta;
  for (const auto& [tp, go] : offsets) by_meta[go.metadata][tp] = go.offset;
  for (const auto& [meta, offs] : by_meta)
    if (auto err = commit(offs, meta)) return {CommitStatus::Failed, std::move(err)};
  return {};
}

std::variant<GroupOffsetMap, Error> Source::committed_group(const std::vector<TopicPartition>& tps,
                                                            std::chrono::milliseconds timeout) {
  return without_metadata(committed(tps, timeout));
}

std::variant<WatermarkMap, Error> Source::watermarks(const std::vector<TopicPartition>&, std::chrono::milliseconds) {
  return WatermarkMap{};
}

std::string offset_gap_message(const TopicPartition& tp, int64_t next, int64_t log_start) {
  return "Kafka: " + to_string(tp) + ": the next offset to read, " + std::to_string(next) +
         ", is below the partition's log-start offset " + std::to_string(log_start) + ": records " +
         std::to_string(next) + ".." + std::to_string(log_start - 1) +
         " were deleted (retention or DeleteRecords) before cdc2doris loaded them. Remedies: re-snapshot the "
         "affected tables from the source (Debezium incremental snapshot or a new connector) and keep the "
         "topic's retention.ms/retention.bytes above the longest outage; or, accepting the loss, set "
         "kafka.on_offset_gap: skip to continue at the log start (docs/kafka-source.md, \"Offset gaps\")";
}

std::optional<Error> Source::read_range(const Ranges&, const std::function<void(const Message&)>&,
                                        std::chrono::milliseconds) {
  return Error(Disposition::Retry, "this Kafka source cannot read a range outside its assignment");
}

std::variant<OffsetMap, Error> offsets_only(std::variant<GroupOffsetMap, Error> r) {
  if (auto* err = std::get_if<Error>(&r)) return std::move(*err);
  OffsetMap out;
  for (const auto& [tp, go] : std::get<GroupOffsetMap>(r)) out[tp] = go.offset;
  return out;
}

std::variant<GroupOffsetMap, Error> without_metadata(std::variant<OffsetMap, Error> r) {
  if (auto* err = std::get_if<Error>(&r)) return std::move(*err);
  GroupOffsetMap out;
  for (const auto& [tp, off] : std::get<OffsetMap>(r)) out[tp] = {off, {}};
  return out;
}

std::string to_string(const TopicPartition& tp) { return tp.topic + "[" + std::to_string(tp.partition) + "]"; }

MessageBatch::MessageBatch(std::vector<Message> messages, std::unique_ptr<std::vector<Header>> headers,
                           std::unique_ptr<Owner> owner)
    : messages_(std::move(messages)), headers_(std::move(headers)), owner_(std::move(owner)) {
  for (const auto& m : messages_) {
    bytes_ += (m.key ? m.key->size() : 0) + (m.value ? m.value->size() : 0);
    for (const auto& h : m.headers) bytes_ += h.key.size() + (h.value ? h.value->size() : 0);
  }
}

MessageBatch& MessageBatch::operator=(MessageBatch&& other) noexcept {
  if (this != &other) {
    release();
    messages_ = std::move(other.messages_);
    headers_ = std::move(other.headers_);
    owner_ = std::move(other.owner_);
    bytes_ = other.bytes_;
    other.bytes_ = 0;
  }
  return *this;
}

MessageBatch::~MessageBatch() { release(); }

void MessageBatch::release() {
  // Views first, so nothing can observe them dangling through this object.
  messages_.clear();
  headers_.reset();
  owner_.reset();
  bytes_ = 0;
}

}  // namespace cdc2doris::kafka
