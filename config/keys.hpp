#pragma once
// The configuration keys, each declared once (keys.cpp): its YAML path,
// type, bounds, doc text, and how it reads into and shows from the field it
// sets. Parsing (parse.cpp), unknown-key checks, docs/configuration.md and
// the dump all walk these declarations; defaults are the fields' own
// initialisers, shown through the same declarations.
#include <yaml-cpp/yaml.h>

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/bounds.hpp"

namespace cdc2doris::config {

class Reader;
struct Config;
struct TableOverride;
struct RoutingRule;

// What a key is, independent of the struct it sets.
struct KeyInfo {
  std::string path;  // dotted; "*" stands for a user-chosen name (a table, a list element)
  std::string type;  // string | integer | boolean | duration | size | list<string> | map<string,string> | enum(a|b) ...
  std::string_view doc;
  // The reference's default column when the field's initial value does not
  // say it ("(required)", "(the host name)"); nullopt: shown from the field.
  std::optional<std::string_view> default_text;
  bool secret = false;
  std::optional<Bounds> bounds;
  // Its value is a map of user-named sections or a list of maps whose keys are declared below it.
  bool nested = false;
  std::string shown;  // the reference's default column (filled by schema())
};

// A key setting a field of T (Config, or one table's / rule's settings).
template <class T>
struct Key : KeyInfo {
  // Reads the (defined, non-null) node at `where` into the field; validates the value itself.
  std::function<void(const Reader& r, const YAML::Node& n, const std::string& where, T& into)> read;
  // The field as YAML, secrets redacted: the dump, the reference's default and the keys test.
  std::function<YAML::Node(const T& from)> show;
  // Keys whose file holds the value of another field (`password_file`):
  // read after parsing, in one step (resolve_secret_files).
  std::function<std::string&(T& into)> file_target;
  std::function<const std::string&(const T& from)> file_path;
};

// The declarations, in the reference's order. Table and rule keys have full
// paths ("routing.tables.*.buckets") and are read by the nested key above them.
const std::vector<Key<Config>>& config_keys();
const std::vector<Key<TableOverride>>& table_keys();
const std::vector<Key<RoutingRule>>& rule_keys();

// Every key, nested ones after their parent: unknown-key checks and the reference.
const std::vector<KeyInfo>& schema();
const KeyInfo* find_key(std::string_view path);
// True if `path` names a section (a map whose children are keys of the schema).
bool is_section(std::string_view path);

// "integer (>= 1)", "duration (1ms..1h)": the type with its bounds, as the reference prints it.
std::string type_with_bounds(const KeyInfo& k);
// A value as the reference's default column shows it: `10s`, `[]`, `""`.
std::string show_default(const YAML::Node& n);
// Milliseconds and bytes as the reader reads them back: `10s`, `5m`, `200ms`; `1MiB`, `65536`.
std::string format_duration(int64_t ms);
std::string format_size(uint64_t bytes);

}  // namespace cdc2doris::config
