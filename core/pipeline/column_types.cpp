#include "core/pipeline/column_types.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>
#include <optional>
#include <variant>

#include "core/decode/doris_types.hpp"
#include "core/schema/types.hpp"

namespace cdc2doris::pipeline {

namespace {
std::string upper(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// Sets the scale of every DATETIME column from DESC ("DATETIME(3)";
// "DATETIME" is scale 0): GET _schema reports scales of decimals only (fe
// TableSchemaAction), and the scale decides an epoch integer's unit.
std::optional<doris::DorisError> datetime_scales(doris::DorisClient& doris, const Target& t,
                                                 std::vector<decode::DorisColumn>& cols) {
  if (std::none_of(cols.begin(), cols.end(), [](const auto& c) { return upper(c.type).rfind("DATETIME", 0) == 0; }))
    return std::nullopt;
  auto res = doris.sql(t.db, "DESC " + schema::quote_ident(t.db) + "." + schema::quote_ident(t.table));
  if (!res) return res.error();
  const auto& sql = *res;
  size_t field = 0, type = 1;
  for (size_t i = 0; i < sql.columns.size(); ++i) {
    if (upper(sql.columns[i]) == "FIELD") field = i;
    if (upper(sql.columns[i]) == "TYPE") type = i;
  }
  for (const auto& row : sql.rows) {
    if (row.size() <= std::max(field, type) || !row[field] || !row[type]) continue;
    auto it = std::find_if(cols.begin(), cols.end(), [&](const auto& c) { return c.name == *row[field]; });
    if (it == cols.end() || upper(it->type).rfind("DATETIME", 0) != 0) continue;
    const std::string& ty = *row[type];
    const size_t open = ty.find('(');
    it->scale = open == std::string::npos ? 0 : std::atoi(ty.c_str() + open + 1);
  }
  return std::nullopt;
}
}  // namespace

std::optional<const decode::SchemaNode*> DorisColumnTypes::types(const Target& target) {
  if (auto it = by_target_.find(target); it != by_target_.end()) return it->second.get();
  std::unique_ptr<decode::SchemaNode> node;
  auto schema = doris_.schema(target.db, target.table);
  std::optional<doris::DorisError> failed;
  if (schema) {
    const doris::TableSchema* s = &*schema;
    std::vector<decode::DorisColumn> cols;
    for (const auto& c : s->columns) cols.push_back({c.name, c.type, c.precision, c.scale});
    failed = datetime_scales(doris_, target, cols);
    const TableSettings settings = router_.settings(target);
    if (!failed) {
      node = std::make_unique<decode::SchemaNode>(decode::schema_from_doris(cols, settings.epoch_units, settings.decimal_scales));
      // The decoder looks a value's type up by its source column name.
      if (settings.transforms)
        for (auto& f : node->fields) f.field = settings.transforms->source_name(f.field);
    }
  } else {
    failed = schema.error();
  }
  if (failed) {
    const auto& err = *failed;
    spdlog::warn("schemaless records for {}: no column types ({}); values are loaded as they arrive", target.name(),
                 err.what());
    // A transient failure is asked again (its loads fail too and are
    // re-read); only a final answer (no such table) is remembered.
    if (err.disposition() == Disposition::Retry) return std::nullopt;
  }
  return by_target_.emplace(target, std::move(node)).first->second.get();
}

void DorisColumnTypes::forget(const Target& target) {
  auto it = by_target_.find(target);
  if (it == by_target_.end()) return;
  if (it->second) retired_.push_back(std::move(it->second));
  by_target_.erase(it);
}

}  // namespace cdc2doris::pipeline
