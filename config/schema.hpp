#pragma once
// The configuration schema: every key the daemon accepts, its type, default
// and meaning. Validation (unknown keys), defaults and docs/configuration.md
// all come from this one table.
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace cdc2doris::config {

// Inclusive bounds of an integer, duration (in milliseconds) or size (in
// bytes) key; the reader rejects values outside them with the key's mark.
struct Bounds {
  int64_t min = std::numeric_limits<int64_t>::min();
  int64_t max = std::numeric_limits<int64_t>::max();
};
constexpr std::optional<Bounds> at_least(int64_t min) { return Bounds{min, std::numeric_limits<int64_t>::max()}; }
constexpr std::optional<Bounds> between(int64_t min, int64_t max) { return Bounds{min, max}; }
inline constexpr int64_t kIntMax = std::numeric_limits<int32_t>::max();  // keys held in an int

struct KeySpec {
  std::string_view path;  // dotted; "*" stands for a user-chosen name (a table, a source)
  std::string_view type;  // string | integer | boolean | duration | size | list<string> | map<string,string> | enum(a|b)
  std::string_view default_value;
  std::string_view description;
  bool secret = false;
  std::optional<Bounds> bounds = std::nullopt;
};

// "integer (>= 1)", "duration (1ms..1h)": the type with its bounds, as the reference prints it.
std::string type_with_bounds(const KeySpec& k);

std::span<const KeySpec> schema();
const KeySpec* find_key(std::string_view path);
// True if `path` names a section (a map whose children are keys of the schema).
bool is_section(std::string_view path);

}  // namespace cdc2doris::config
