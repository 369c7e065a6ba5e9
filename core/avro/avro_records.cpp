#include "core/avro/avro_records.hpp"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

namespace cdc2doris::avro {
namespace {

using Code = decode::DecodeErrorCode;

decode::DecodeError bad(const decode::KafkaRecord& in, Code code, std::string_view side, std::string expected,
                        std::string detail) {
  return decode::DecodeError{code,          std::string(in.topic), in.partition,     in.offset,
                             std::string(side), std::move(expected), std::move(detail)};
}

int64_t big_endian(std::string_view bytes) {
  uint64_t id = 0;
  for (const char c : bytes) id = (id << 8) | static_cast<unsigned char>(c);
  return static_cast<int64_t>(id);
}

// Apicurio's DefaultHeadersHandler: the global id, or with use-id=contentId
// the content id, as an 8-byte big-endian long in a header of the side.
struct HeaderId {
  std::string_view name;
  std::string_view value;
  IdKind kind;
};
// Without an id Apicurio's serializer names the artifact in headers instead:
// then the body is bare too, but this reader cannot tell which version.
bool has_artifact_header(const decode::KafkaRecord& in, std::string_view side) {
  const std::string_view name = side == "key" ? "apicurio.key.artifactId" : "apicurio.value.artifactId";
  for (const auto& h : in.headers)
    if (h.first == name) return true;
  return false;
}

std::optional<HeaderId> header_id(const decode::KafkaRecord& in, std::string_view side, const IdHeaders& names) {
  const bool key = side == "key";
  const std::string_view global = key ? names.key_global : names.value_global;
  const std::string_view content = key ? names.key_content : names.value_content;
  std::optional<HeaderId> found;
  // Kafka's lastHeader, as Apicurio's deserializer reads them; a global id first.
  for (const auto& [name, value] : in.headers) {
    if (name == global) found = HeaderId{name, value, IdKind::Global};
    if (name == content && (!found || found->kind != IdKind::Global)) found = HeaderId{name, value, IdKind::Content};
  }
  return found;
}

bool looks_like_json(std::string_view bytes) {
  const auto first = bytes.find_first_not_of(" \t\r\n");
  return first != std::string_view::npos && bytes[first] == '{';
}

std::string first_bytes(std::string_view bytes) {
  if (bytes.empty()) return "0 bytes";
  std::string out = "first bytes";
  constexpr size_t kShown = 8;
  char hex[4];
  for (size_t i = 0; i < bytes.size() && i < kShown; ++i) {
    std::snprintf(hex, sizeof hex, " %02x", static_cast<unsigned char>(bytes[i]));
    out += hex;
  }
  return out + " (of " + std::to_string(bytes.size()) + ")";
}

RecordOptions all_avro() {
  RecordOptions o;
  o.format = RecordFormat::Avro;
  return o;
}

}  // namespace

bool RecordOptions::any_avro() const {
  if (format != RecordFormat::Json) return true;
  for (const auto& [pattern, f] : topic_formats)
    if (f != RecordFormat::Json) return true;
  return false;
}

std::optional<Framed> unframe(std::string_view bytes, int id_bytes, std::string& why) {
  const size_t header = 1 + static_cast<size_t>(id_bytes);
  if (bytes.size() < header) {
    why = std::to_string(bytes.size()) + " bytes";
    return std::nullopt;
  }
  if (bytes[0] != '\0') {
    why = "magic byte " + std::to_string(static_cast<unsigned char>(bytes[0]));
    if (bytes[0] == '{') why += " ('{': a JSON record?)";
    return std::nullopt;
  }
  return Framed{big_endian(bytes.substr(1, header - 1)), bytes.substr(header)};
}

AvroRecords::AvroRecords(RecordOptions records, RegistryOptions registry, size_t max_cached_schemas)
    : options_(std::move(records)),
      registry_(std::move(registry)),
      max_cached_schemas_(max_cached_schemas == 0 ? 1 : max_cached_schemas) {
  if (options_.id_bytes != 4 && options_.id_bytes != 8)
    throw std::invalid_argument("schema id length " + std::to_string(options_.id_bytes) + ": expected 4 or 8 bytes");
  for (const auto& [pattern, format] : options_.topic_formats) {
    try {
      patterns_.emplace_back(std::regex(pattern), format);
    } catch (const std::regex_error& e) {
      throw std::invalid_argument("topic pattern '" + pattern + "': not a regex: " + e.what());
    }
  }
}

AvroRecords::AvroRecords(RegistryOptions registry) : AvroRecords(all_avro(), std::move(registry)) {}

AvroRecords::~AvroRecords() = default;

RecordFormat AvroRecords::format_of(std::string_view topic) {
  if (patterns_.empty()) return options_.format;
  if (auto it = topic_format_.find(topic); it != topic_format_.end()) return it->second;
  const std::string name(topic);
  RecordFormat format = options_.format;
  for (const auto& [re, f] : patterns_) {
    if (std::regex_match(name, re)) {
      format = f;
      break;
    }
  }
  topic_format_.emplace(name, format);
  return format;
}

std::variant<RegistryClient::Prefetched, RegistryFailure> AvroRecords::prefetch(
    const std::vector<std::string>& topics) {
  std::vector<std::string_view> names;
  std::vector<std::regex> regexes;
  for (const auto& t : topics) {
    if (!t.starts_with('^')) {
      names.push_back(t);
      continue;
    }
    try {
      regexes.emplace_back(t);
    } catch (const std::regex_error& e) {
      throw std::invalid_argument("topic regex '" + t + "': std::regex cannot read it: " + e.what());
    }
  }
  return registry_.prefetch([&](std::string_view topic) {
    if (format_of(topic) == RecordFormat::Json) return false;
    if (std::find(names.begin(), names.end(), topic) != names.end()) return true;
    const std::string name(topic);
    return std::any_of(regexes.begin(), regexes.end(), [&](const std::regex& re) { return std::regex_search(name, re); });
  });
}

std::optional<AvroRecords::Failure> AvroRecords::to_json(const decode::KafkaRecord& in, decode::KafkaRecord& out) {
  out.topic = in.topic;
  out.partition = in.partition;
  out.offset = in.offset;
  out.headers = in.headers;
  out.key.reset();
  out.value.reset();
  const RecordFormat format = format_of(in.topic);
  std::string_view view;
  if (in.key) {
    if (auto f = convert(in, format, "key", *in.key, key_json_, view)) return f;
    out.key = view;
  }
  if (in.value) {
    if (auto f = convert(in, format, "value", *in.value, value_json_, view)) return f;
    out.value = view;
  }
  return std::nullopt;
}

std::optional<AvroRecords::Failure> AvroRecords::convert(const decode::KafkaRecord& in, RecordFormat format,
                                                         std::string_view side, std::string_view bytes,
                                                         std::string& out, std::string_view& view) {
  view = bytes;
  if (format == RecordFormat::Json) return std::nullopt;
  if (const auto header = header_id(in, side, options_.id_headers)) {
    const std::string origin = "header " + std::string(header->name);
    if (header->value.size() != 8)
      return bad(in, Code::InvalidAvro, side, "Apicurio's " + origin + ": an 8-byte big-endian id",
                 std::to_string(header->value.size()) + " bytes");
    auto f = avro_to_json(in, side, SchemaRef{header->kind, big_endian(header->value)}, origin, bytes, out);
    if (!f) view = out;
    return f;
  }
  const bool key = side == "key";
  const std::string id_headers = key ? options_.id_headers.key_global + " or " + options_.id_headers.key_content
                                     : options_.id_headers.value_global + " or " + options_.id_headers.value_content;
  if (has_artifact_header(in, side))
    return bad(in, Code::InvalidAvro, side, "Apicurio's id header " + id_headers,
               "only the artifact's name in headers (apicurio." + std::string(side) +
                   ".artifactId): schemas by artifact and version are not read");
  if (format == RecordFormat::Auto && looks_like_json(bytes)) return std::nullopt;
  if (format == RecordFormat::Auto && (bytes.empty() || bytes[0] != '\0'))
    return bad(in, Code::UnknownFormat, side,
               "JSON (a '{' first), Avro (magic byte 0) or Apicurio's id header " + id_headers,
               first_bytes(bytes));
  std::string why;
  const auto framed = unframe(bytes, options_.id_bytes, why);
  if (!framed)
    return bad(in, Code::InvalidAvro, side,
               options_.id_bytes == 4 ? "Confluent's wire format: magic byte 0, a 4-byte schema id, Avro binary"
                                      : "Apicurio's wire format: magic byte 0, an 8-byte id, Avro binary",
               why);
  auto f = avro_to_json(in, side, SchemaRef{options_.payload_id, framed->schema_id}, "", framed->body, out);
  if (!f) view = out;
  return f;
}

std::optional<AvroRecords::Failure> AvroRecords::avro_to_json(const decode::KafkaRecord& in, std::string_view side,
                                                              SchemaRef ref, const std::string& origin,
                                                              std::string_view body, std::string& out) {
  // "value (header apicurio.value.globalId)": where the id came from, when not the payload.
  const std::string where = std::string(side) + (origin.empty() ? "" : " (" + origin + ")");
  auto it = bridges_.find(ref);
  if (it == bridges_.end()) {
    auto got = registry_.schema(ref);
    if (auto* f = std::get_if<RegistryFailure>(&got)) {
      ErrorContext ctx;
      ctx.topic = std::string(in.topic);
      ctx.partition = in.partition;
      ctx.offset = in.offset;
      switch (f->kind) {
        case RegistryFailure::Kind::Unreachable: return Error(Disposition::Retry, where + ": " + f->message, ctx);
        case RegistryFailure::Kind::Refused:
        case RegistryFailure::Kind::WrongApi: return Error(Disposition::Fatal, where + ": " + f->message, ctx);
        case RegistryFailure::Kind::UnknownId:
          return bad(in, Code::UnknownSchemaId, where, "a schema id the registry knows", f->message);
        case RegistryFailure::Kind::NotAvro: return bad(in, Code::InvalidAvro, where, "an Avro schema", f->message);
      }
    }
    std::unique_ptr<ConnectBridge> bridge;
    try {
      bridge = std::make_unique<ConnectBridge>(*std::get<RegistryClient::Schema>(got));
    } catch (const AvroError& e) {
      return bad(in, Code::SchemaInvalid, where, "an Avro schema with a Kafka Connect equivalent",
                 registry_.describe(ref) + ": " + e.what());
    }
    if (bridges_.size() >= max_cached_schemas_) {
      bridges_.erase(order_.front());
      order_.pop_front();
    }
    it = bridges_.emplace(ref, std::move(bridge)).first;
    order_.push_back(ref);
  }
  out.clear();
  try {
    it->second->to_json(body, out);
  } catch (const AvroError& e) {
    return bad(in, Code::InvalidAvro, where, "Avro binary of " + registry_.describe(ref), e.what());
  }
  return std::nullopt;
}

}  // namespace cdc2doris::avro
