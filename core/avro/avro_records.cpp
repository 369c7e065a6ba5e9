#include "core/avro/avro_records.hpp"

namespace cdc2doris::avro {
namespace {

constexpr size_t kHeader = 5;  // magic byte + 4-byte id

decode::DecodeError bad(const decode::KafkaRecord& in, decode::DecodeErrorCode code, std::string_view side,
                        std::string expected, std::string detail) {
  return decode::DecodeError{code,          std::string(in.topic), in.partition,     in.offset,
                             std::string(side), std::move(expected), std::move(detail)};
}

}  // namespace

std::optional<Framed> unframe(std::string_view bytes, std::string& why) {
  if (bytes.size() < kHeader) {
    why = std::to_string(bytes.size()) + " bytes";
    return std::nullopt;
  }
  if (bytes[0] != '\0') {
    why = "magic byte " + std::to_string(static_cast<unsigned char>(bytes[0]));
    if (bytes[0] == '{') why += " ('{': a JSON record?)";
    return std::nullopt;
  }
  uint32_t id = 0;
  for (size_t i = 1; i < kHeader; ++i) id = (id << 8) | static_cast<unsigned char>(bytes[i]);
  return Framed{static_cast<int32_t>(id), bytes.substr(kHeader)};
}

AvroRecords::AvroRecords(RegistryOptions registry, size_t max_cached_schemas)
    : registry_(std::move(registry)), max_cached_schemas_(max_cached_schemas == 0 ? 1 : max_cached_schemas) {}

AvroRecords::~AvroRecords() = default;

std::optional<AvroRecords::Failure> AvroRecords::to_json(const decode::KafkaRecord& in, decode::KafkaRecord& out) {
  out.topic = in.topic;
  out.partition = in.partition;
  out.offset = in.offset;
  out.headers = in.headers;
  out.key.reset();
  out.value.reset();
  if (in.key) {
    if (auto f = convert(in, "key", *in.key, key_json_)) return f;
    out.key = key_json_;
  }
  if (in.value) {
    if (auto f = convert(in, "value", *in.value, value_json_)) return f;
    out.value = value_json_;
  }
  return std::nullopt;
}

std::optional<AvroRecords::Failure> AvroRecords::convert(const decode::KafkaRecord& in, std::string_view side,
                                                         std::string_view bytes, std::string& out) {
  using Code = decode::DecodeErrorCode;
  std::string why;
  const auto framed = unframe(bytes, why);
  if (!framed)
    return bad(in, Code::InvalidAvro, side, "Confluent's wire format: magic byte 0, a 4-byte schema id, Avro binary",
               why);
  const int32_t id = framed->schema_id;
  auto it = bridges_.find(id);
  if (it == bridges_.end()) {
    auto got = registry_.schema(id);
    if (auto* f = std::get_if<RegistryFailure>(&got)) {
      ErrorContext ctx;
      ctx.topic = std::string(in.topic);
      ctx.partition = in.partition;
      ctx.offset = in.offset;
      switch (f->kind) {
        case RegistryFailure::Kind::Unreachable: return Error(Disposition::Retry, std::string(side) + ": " + f->message, ctx);
        case RegistryFailure::Kind::Refused: return Error(Disposition::Fatal, std::string(side) + ": " + f->message, ctx);
        case RegistryFailure::Kind::UnknownId:
          return bad(in, Code::UnknownSchemaId, side, "a schema id the registry knows", f->message);
        case RegistryFailure::Kind::NotAvro: return bad(in, Code::InvalidAvro, side, "an Avro schema", f->message);
      }
    }
    std::unique_ptr<ConnectBridge> bridge;
    try {
      bridge = std::make_unique<ConnectBridge>(*std::get<RegistryClient::Schema>(got));
    } catch (const AvroError& e) {
      return bad(in, Code::SchemaInvalid, side, "an Avro schema with a Kafka Connect equivalent",
                 "schema id " + std::to_string(id) + ": " + e.what());
    }
    if (bridges_.size() >= max_cached_schemas_) {
      bridges_.erase(order_.front());
      order_.pop_front();
    }
    it = bridges_.emplace(id, std::move(bridge)).first;
    order_.push_back(id);
  }
  out.clear();
  try {
    it->second->to_json(framed->body, out);
  } catch (const AvroError& e) {
    return bad(in, Code::InvalidAvro, side, "Avro binary of schema id " + std::to_string(id), e.what());
  }
  return std::nullopt;
}

}  // namespace cdc2doris::avro
