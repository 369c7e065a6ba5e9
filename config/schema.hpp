#pragma once
// The configuration schema: every key the daemon accepts, its type, default
// and meaning. Validation (unknown keys), defaults and docs/configuration.md
// all come from this one table.
#include <span>
#include <string_view>

namespace cdc2doris::config {

struct KeySpec {
  std::string_view path;  // dotted; "*" stands for a user-chosen name (a table, a source)
  std::string_view type;  // string | integer | boolean | duration | size | list<string> | map<string,string> | enum(a|b)
  std::string_view default_value;
  std::string_view description;
  bool secret = false;
};

std::span<const KeySpec> schema();
const KeySpec* find_key(std::string_view path);
// True if `path` names a section (a map whose children are keys of the schema).
bool is_section(std::string_view path);

}  // namespace cdc2doris::config
