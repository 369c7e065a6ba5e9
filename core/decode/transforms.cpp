#include "core/decode/transforms.hpp"
#include "core/common/ascii_case.hpp"

#include <algorithm>
#include <cctype>

namespace cdc2doris::decode {

const char* to_string(NameCase c) {
  switch (c) {
    case NameCase::AsIs: return "as_is";
    case NameCase::Lower: return "lower";
    case NameCase::Upper: return "upper";
  }
  return "?";
}

const char* doris_type(Meta m) {
  switch (m) {
    case Meta::Op: return "VARCHAR(1)";
    case Meta::Partition: return "INT";
    case Meta::SourceTs:
    case Meta::Offset:
    case Meta::Sequence: return "BIGINT";
    default: return "VARCHAR(255)";  // names: Doris caps identifiers far below this
  }
}

bool ColumnTransforms::excluded(std::string_view source) const {
  return std::find(exclude.begin(), exclude.end(), source) != exclude.end();
}

std::optional<std::string> ColumnTransforms::target_name(std::string_view source) const {
  if (excluded(source)) return std::nullopt;
  if (auto it = rename.find(std::string(source)); it != rename.end()) return it->second;
  std::string out(source);
  // ASCII only: Doris compares column names case-insensitively the same way,
  // and a multi-byte character must not be cut.
  if (name_case == NameCase::Lower)
    out = ascii_lower(std::move(out));
  if (name_case == NameCase::Upper)
    for (auto& ch : out) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return out;
}

std::string ColumnTransforms::source_name(std::string_view target) const {
  for (const auto& [from, to] : rename)
    if (to == target) return from;
  return std::string(target);
}

}  // namespace cdc2doris::decode
