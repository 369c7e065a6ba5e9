#pragma once
// Decodes one Kafka record at a time into `change`, as the pipeline does
// (identify, the table context, convert): the decode unit tests' driver. Each test file fixes its default topic and
// partition (they appear in error messages).
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "core/decode/decoder.hpp"

namespace cdc2doris::decode::test {

struct DecodeRun {
  Decoder dec;
  Change change;
  std::string topic;
  int32_t partition;
  // The context of an identified change, as routing gives it; unset: none.
  std::function<TableContext(const Change&)> context;

  DecodeRun(DecoderOptions o, std::string default_topic, int32_t default_partition)
      : dec(std::move(o)), topic(std::move(default_topic)), partition(default_partition) {}
  // An empty `record_topic` is the default topic.
  std::optional<DecodeError> operator()(std::optional<std::string_view> value,
                                        std::optional<std::string_view> key = std::nullopt,
                                        std::string_view record_topic = {}, int64_t offset = 7) {
    KafkaRecord r;
    r.topic = record_topic.empty() ? std::string_view(topic) : record_topic;
    r.partition = partition;
    r.offset = offset;
    r.key = key;
    r.value = value;
    if (!context) return dec.decode(r, change);
    if (auto e = dec.identify(r, change)) return e;
    return dec.convert(context(change), change);
  }
  std::string row(size_t i = 0) const { return i < change.rows.size() ? change.rows[i].json : "<none>"; }
};

}  // namespace cdc2doris::decode::test
