#pragma once
// Reading the keys that name Doris columns or shape a table's columns
// (keys.cpp declares them): column names, name case mapping, computed
// columns and the row filter (docs/decoding.md, "Column transforms").
#include <yaml-cpp/yaml.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "config/key_builders.hpp"
#include "core/decode/transforms.hpp"

namespace cdc2doris::config {

// A column the configuration names must be one the table can have; the
// deleted-at column may be empty (none).
keys::Check<std::string> column_name(bool may_be_empty);
void check_column(const Reader& r, const YAML::Node& n, const std::string& where, const std::string& v);

const std::vector<std::pair<std::string, decode::NameCase>>& name_cases();

// routing.computed_columns / routing.tables.*.computed_columns: Doris column -> metadata, in YAML order.
std::vector<decode::ComputedColumn> read_computed(const Reader& r, const YAML::Node& n, const std::string& where);
YAML::Node show_computed(const std::vector<decode::ComputedColumn>& cols);

// routing.tables.*.filter / routing.rules.*.filter, parsed once here.
std::shared_ptr<const decode::RowFilter> read_filter(const Reader& r, const YAML::Node& n, const std::string& where);

}  // namespace cdc2doris::config
