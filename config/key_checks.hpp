#pragma once
// What no single key can judge: keys required together, bounds relative to
// another key, defaults derived from other keys, and the components (the
// decoder, librdkafka) judging their options as a whole.
#include <yaml-cpp/yaml.h>

#include <string>

namespace cdc2doris::config {

class Reader;
struct Config;
struct TableOverride;
struct RowSettings;

// One routing.tables entry, at `where`.
void check_table(const Reader& r, const YAML::Node& node, const std::string& where, const TableOverride& t);
// The delete mode and transforms of a routing.tables entry or a routing rule, at `where`.
void check_row_settings(const Reader& r, const YAML::Node& node, const std::string& where, const RowSettings& t);
// The whole configuration, after every key was read and the secret files resolved.
void check_config(const Reader& r, const YAML::Node& root, Config& c);

}  // namespace cdc2doris::config
