#pragma once
// Kafka Connect JSON schema (JsonConverter's "schema" part) compiled into a
// tree the decoder walks next to the payload. Compiling is the cold path:
// JsonConverter repeats the full schema in every message, so the decoder
// caches compiled schemas by their exact text and only compiles on a miss.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cdc2doris::decode {

enum class ConnectType : uint8_t { Boolean, Int8, Int16, Int32, Int64, Float, Double, String, Bytes, Array, Map, Struct };

// The logical types of debezium-format.md §2.3 that change how a value is
// written for Doris. Anything else is decoded by its base type.
enum class Logical : uint8_t {
  None,
  Decimal,               // bytes, parameter scale
  VariableScaleDecimal,  // struct {scale, value}
  Date,                  // int32 days
  TimeMillis,            // int32 ms of day
  TimeMicros,            // int64 us of day
  TimeNanos,             // int64 ns of day
  TimestampMillis,       // int64 ms since epoch, wall clock
  TimestampMicros,
  TimestampNanos,
  ZonedTimestamp,  // string, converted to the target zone
  ZonedTime,
  IsoDate,
  IsoTime,
  IsoTimestamp,
  Json,      // string holding JSON text, embedded as JSON
  Bits,      // bytes
  Geometry,  // struct {wkb, srid}
  Point,     // struct {x, y, wkb, srid}
  // Schemaless records typed by their Doris target column (doris_types.hpp):
  // these accept every wire form the column's type can arrive in.
  DorisDecimal,   // base64 bytes of `scale`, a number, decimal text, {scale, value}
  DorisDate,      // epoch days or an ISO date
  DorisDatetime,  // epoch integer (epoch_unit) or an ISO timestamp, zoned or not
  DorisJson,      // JSON text in a string, or any other JSON value (sent as its JSON text)
  DorisLargeint,  // a number, integer text, base64 Decimal bytes of scale 0
  // A column whose values are copied as they arrive (Doris converts them):
  // listed so that a JSON key the table lacks can be told apart (Change::unknown_columns).
  DorisAsIs,
};

// What a field's schema says beyond its type, for table creation and schema
// evolution (core/schema): the Connect `parameters` (scale, precision,
// Debezium's __debezium.source.column.* when column.propagate.source.type is
// set, allowed enum values) and the `default` value as JSON text. Absent
// (nullptr) for the many fields that have neither; the decoder never reads it.
struct FieldMeta {
  std::vector<std::pair<std::string, std::string>> parameters;
  std::string default_json;  // empty: no default given
  const std::string* parameter(std::string_view key) const {
    for (const auto& [k, v] : parameters)
      if (k == key) return &v;
    return nullptr;
  }
};

// Unit of an epoch integer loaded into a Doris DATETIME column: by the
// column's scale as Debezium's time.precision.mode=adaptive picks it
// (DATETIME(0-3) milliseconds, (4-6) microseconds), or as configured.
enum class EpochUnit : uint8_t { Seconds, Millis, Micros, Nanos };

struct SchemaNode {
  ConnectType type = ConnectType::String;
  Logical logical = Logical::None;
  bool optional = true;
  int32_t scale = 0;
  EpochUnit epoch_unit = EpochUnit::Millis;  // DorisDatetime only
  std::string field;  // name of this node inside its parent struct
  std::string name;   // Connect schema name (logical type or record name)
  std::vector<SchemaNode> fields;
  std::shared_ptr<SchemaNode> items, keys, values;
  std::shared_ptr<const FieldMeta> meta;  // nullptr: no parameters, no default
  // A row typed by its Doris table (schema_from_doris): Doris compares column
  // names case-insensitively, so a field is also found under another case.
  bool fields_ignore_case = false;

  // Finds a struct member. `hint` is the position where the caller expects
  // it (payload order normally equals schema order), making lookups O(1).
  const SchemaNode* find(std::string_view name, size_t& hint) const {
    if (hint < fields.size() && fields[hint].field == name) return &fields[hint++];  // inline: per field of every row
    return find_unhinted(name, hint);
  }
  const SchemaNode* find(std::string_view name) const {
    size_t h = 0;
    return find(name, h);
  }

 private:
  const SchemaNode* find_unhinted(std::string_view name, size_t& hint) const;
};

// Throws std::runtime_error with a JSON-path style message on a malformed schema.
SchemaNode compile_schema(std::string_view schema_json);
std::string_view logical_name(Logical l);

}  // namespace cdc2doris::decode
