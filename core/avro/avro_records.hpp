#pragma once
// decoding.format avro / auto: each record's key and value, when Avro, turned
// into the Kafka Connect JSON the decoder reads (avro_connect.hpp) with the
// writer schema fetched from the registry by id. The id travels in one of
// the framings the converters write:
//   - Apicurio's headers `apicurio.{key,value}.{globalId,contentId}` (an
//     8-byte big-endian long) with the bare Avro body as key or value;
//   - magic byte 0, the id big-endian (4 bytes: Confluent, Apicurio's
//     as-confluent; 8 bytes: Apicurio's default), then the Avro body.
// Headers decide where present (a converter writing them writes no magic
// byte); otherwise the payload framing, whose id length cannot be read from
// the bytes, is configured (RecordOptions::id_bytes).
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include "core/avro/avro_connect.hpp"
#include "core/avro/registry_client.hpp"
#include "core/common/error.hpp"
#include "core/decode/decoder.hpp"

namespace cdc2doris::avro {

enum class RecordFormat {
  Json,  // JsonConverter: passed to the decoder as is
  Avro,  // one of the framings above
  Auto,  // per key and value: Apicurio's id header or magic byte 0 is Avro, '{' is JSON
};

// The headers Apicurio's converter puts an id in, as its
// apicurio.registry.headers.{key,value}.{globalId,contentId}.name name them.
struct IdHeaders {
  std::string key_global = "apicurio.key.globalId";
  std::string key_content = "apicurio.key.contentId";
  std::string value_global = "apicurio.value.globalId";
  std::string value_content = "apicurio.value.contentId";
  bool operator==(const IdHeaders&) const = default;
};

struct RecordOptions {
  RecordFormat format = RecordFormat::Json;  // decoding.format: topics no pattern names
  // decoding.topic_formats: (ECMAScript regex matching the whole topic name,
  // format); the first that matches wins.
  std::vector<std::pair<std::string, RecordFormat>> topic_formats;
  int id_bytes = 4;                     // the id after the magic byte: 4 or 8
  IdKind payload_id = IdKind::Content;  // what that id counts (headers name their own)
  IdHeaders id_headers{};
  bool operator==(const RecordOptions&) const = default;
  // Whether any topic may carry Avro (else no registry is needed).
  bool any_avro() const;
};

struct Framed {
  int64_t schema_id = 0;
  std::string_view body;  // the Avro binary
};
// Magic byte 0 and an `id_bytes`-byte big-endian id; nullopt with `why`
// (what was found) when the bytes are not that.
std::optional<Framed> unframe(std::string_view bytes, int id_bytes, std::string& why);

class AvroRecords {
 public:
  // Throws std::invalid_argument for options it cannot use (a registry URL,
  // a topic pattern that is not a regex).
  AvroRecords(RecordOptions records, RegistryOptions registry, size_t max_cached_schemas = 1000);
  // Every topic Avro, the id in 4 bytes (Confluent's framing) or a header.
  explicit AvroRecords(RegistryOptions registry);
  ~AvroRecords();
  AvroRecords(const AvroRecords&) = delete;
  AvroRecords& operator=(const AvroRecords&) = delete;

  // A record that cannot be read (framing, unknown id, a body its schema does
  // not describe, neither JSON nor Avro) is a bad record: DecodeError. A
  // registry that cannot be reached is Error (Retry: the pipeline backs off
  // and reads it again), credentials it refuses or an id the configured API
  // cannot serve Error (Fatal).
  using Failure = std::variant<decode::DecodeError, Error>;
  // `out` is `in` with key and value (Kafka nulls stay null) as JsonConverter
  // JSON, viewing buffers of this object or of `in`, valid until the next call.
  std::optional<Failure> to_json(const decode::KafkaRecord& in, decode::KafkaRecord& out);

  // The format of a topic (decoding.topic_formats, else decoding.format).
  RecordFormat format_of(std::string_view topic);

  size_t registry_fetches() const { return registry_.fetches(); }

  // The registry's schemas of the subscribed topics that may carry Avro
  // (RegistryClient::prefetch), read at start. `topics`: kafka.topics, an
  // entry starting with '^' a regex (matched here with std::regex, which
  // reads the usual patterns as librdkafka does; a subject it misses is
  // fetched when a record needs it). Throws std::invalid_argument for such
  // a pattern std::regex cannot read.
  std::variant<RegistryClient::Prefetched, RegistryFailure> prefetch(const std::vector<std::string>& topics);

 private:
  // Sets `view` to the side's JSON (its own bytes, or Avro converted into `out`).
  std::optional<Failure> convert(const decode::KafkaRecord& in, RecordFormat format, std::string_view side,
                                 std::string_view bytes, std::string& out, std::string_view& view);
  std::optional<Failure> avro_to_json(const decode::KafkaRecord& in, std::string_view side, SchemaRef ref,
                                      const std::string& origin, std::string_view body, std::string& out);
  RecordOptions options_;
  std::vector<std::pair<std::regex, RecordFormat>> patterns_;
  struct TopicHash {
    using is_transparent = void;
    size_t operator()(std::string_view t) const { return std::hash<std::string_view>()(t); }
  };
  // Pattern matches by topic, looked up without a copy of the name per record.
  std::unordered_map<std::string, RecordFormat, TopicHash, std::equal_to<>> topic_format_;
  RegistryClient registry_;
  size_t max_cached_schemas_;
  std::unordered_map<SchemaRef, std::unique_ptr<ConnectBridge>, SchemaRefHash> bridges_;
  std::deque<SchemaRef> order_;  // oldest first
  std::string key_json_, value_json_;
};

}  // namespace cdc2doris::avro
