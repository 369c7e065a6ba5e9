#pragma once
// Schemaless records (JsonConverter schemas.enable=false) lose Debezium's
// logical types: a decimal is base64 bytes without its scale, a timestamp an
// integer without its unit. Their Doris target table still knows the column
// types, so the row schema is built from it (docs/decoding.md has the rule
// table) and given to Decoder::convert as TableContext::column_types.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/decode/connect_schema.hpp"

namespace cdc2doris::decode {

// One column of GET /api/{db}/{table}/_schema.
struct DorisColumn {
  std::string name;
  std::string type;  // "DECIMALV3", "DATETIMEV2", "JSONB", "VARCHAR", ...
  // DECIMAL: from _schema; DATETIME: the fractional digits, which _schema
  // does not say (fe TableSchemaAction reports them for decimals only): DESC.
  std::optional<int> precision, scale;
};

// A struct schema with one field per column: those whose values need
// converting (decimals, dates, datetimes, JSON) typed, the others
// Logical::DorisAsIs, copied as they arrive (Doris converts them, in strict
// mode); a JSON key without a field is one the table lacks. An epoch
// integer into a DATETIME(p) column is milliseconds for p <= 3, microseconds
// for p 4..6 (Debezium's adaptive precision mode), unless `units` names the
// column's unit; never guessed from the value.
// `decimal_scales` names columns of other types (STRING, VARCHAR) whose values
// are Debezium Decimal bytes of that scale: a DECIMAL(65,30) beyond Doris' 38
// digits lands as its exact text, never as the base64 encoding.
SchemaNode schema_from_doris(const std::vector<DorisColumn>& columns, const std::map<std::string, EpochUnit>& units = {},
                             const std::map<std::string, int>& decimal_scales = {});

// "s", "ms", "us", "ns" -> unit; nullopt otherwise.
std::optional<EpochUnit> parse_epoch_unit(std::string_view text);

}  // namespace cdc2doris::decode
