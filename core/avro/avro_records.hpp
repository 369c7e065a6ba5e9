#pragma once
// decoding.format avro: each record's key and value in Confluent's wire
// format (magic byte 0, the schema id as 4 bytes big-endian, Avro binary),
// turned into the Kafka Connect JSON the decoder reads (avro_connect.hpp)
// with the writer schema fetched from the registry by id.
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>

#include "core/avro/avro_connect.hpp"
#include "core/avro/registry_client.hpp"
#include "core/common/error.hpp"
#include "core/decode/decoder.hpp"

namespace cdc2doris::avro {

enum class RecordFormat { Json, Avro };

struct Framed {
  int32_t schema_id = 0;
  std::string_view body;  // the Avro binary
};
// Confluent's framing; nullopt with `why` (what was found) when it is not.
std::optional<Framed> unframe(std::string_view bytes, std::string& why);

class AvroRecords {
 public:
  // Throws std::invalid_argument for registry options it cannot use.
  explicit AvroRecords(RegistryOptions registry, size_t max_cached_schemas = 1000);
  ~AvroRecords();
  AvroRecords(const AvroRecords&) = delete;
  AvroRecords& operator=(const AvroRecords&) = delete;

  // A record that cannot be read (framing, unknown id, a body its schema does
  // not describe) is a bad record: DecodeError. A registry that cannot be
  // reached is Error (Retry: the pipeline backs off and reads it again),
  // credentials it refuses Error (Fatal).
  using Failure = std::variant<decode::DecodeError, Error>;
  // `out` is `in` with key and value (Kafka nulls stay null) as JsonConverter
  // JSON, viewing buffers of this object valid until the next call.
  std::optional<Failure> to_json(const decode::KafkaRecord& in, decode::KafkaRecord& out);

  size_t registry_fetches() const { return registry_.fetches(); }

 private:
  std::optional<Failure> convert(const decode::KafkaRecord& in, std::string_view side, std::string_view bytes,
                                 std::string& out);
  RegistryClient registry_;
  size_t max_cached_schemas_;
  std::unordered_map<int32_t, std::unique_ptr<ConnectBridge>> bridges_;
  std::deque<int32_t> order_;  // oldest first
  std::string key_json_, value_json_;
};

}  // namespace cdc2doris::avro
