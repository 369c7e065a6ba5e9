#include "core/decode/doris_types.hpp"

#include <algorithm>
#include <cctype>

namespace cdc2doris::decode {

namespace {

std::string upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return s;
}

}  // namespace

std::optional<EpochUnit> parse_epoch_unit(std::string_view text) {
  if (text == "s") return EpochUnit::Seconds;
  if (text == "ms") return EpochUnit::Millis;
  if (text == "us") return EpochUnit::Micros;
  if (text == "ns") return EpochUnit::Nanos;
  return std::nullopt;
}

SchemaNode schema_from_doris(const std::vector<DorisColumn>& columns, const std::map<std::string, EpochUnit>& units,
                             const std::map<std::string, int>& decimal_scales) {
  SchemaNode row;
  row.type = ConnectType::Struct;
  row.fields_ignore_case = true;
  for (const auto& c : columns) {
    const std::string t = upper(c.type);
    SchemaNode f;
    f.field = c.name;
    f.name = t;  // named in error messages ("expected ... for Doris DATETIMEV2")
    if (auto ds = decimal_scales.find(c.name); ds != decimal_scales.end()) {
      f.type = ConnectType::Bytes;
      f.logical = Logical::DorisDecimal;
      f.scale = ds->second;
    } else if (t.rfind("DECIMAL", 0) == 0) {
      f.type = ConnectType::Bytes;
      f.logical = Logical::DorisDecimal;
      f.scale = c.scale.value_or(0);
    } else if (t == "DATE" || t == "DATEV2") {
      f.type = ConnectType::Int32;
      f.logical = Logical::DorisDate;
    } else if (t == "DATETIME" || t == "DATETIMEV2") {
      f.type = ConnectType::Int64;
      f.logical = Logical::DorisDatetime;
      // As Debezium's adaptive precision mode writes a DATETIME(p): p <= 3 as
      // io.debezium.time.Timestamp (ms), 4..6 as MicroTimestamp (us).
      f.epoch_unit = c.scale.value_or(0) <= 3 ? EpochUnit::Millis : EpochUnit::Micros;
      if (auto it = units.find(c.name); it != units.end()) f.epoch_unit = it->second;
    } else if (t == "JSON" || t == "JSONB") {
      f.type = ConnectType::String;
      f.logical = Logical::DorisJson;
    } else if (t == "LARGEINT") {
      f.type = ConnectType::Bytes;
      f.logical = Logical::DorisLargeint;
    } else {
      // Copied as it arrives; Doris converts it (strict mode rejects what it cannot).
      f.logical = Logical::DorisAsIs;
    }
    row.fields.push_back(std::move(f));
  }
  return row;
}

}  // namespace cdc2doris::decode
