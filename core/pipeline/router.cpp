#include "core/pipeline/router.hpp"

#include <memory>

namespace cdc2doris::pipeline {

const char* to_string(TruncatePolicy p) {
  switch (p) {
    case TruncatePolicy::Apply: return "apply";
    case TruncatePolicy::Ignore: return "ignore";
    case TruncatePolicy::Fail: return "fail";
  }
  return "?";
}

ExplicitRouter::ExplicitRouter(std::map<std::string, Target> map, std::map<Target, TableSettings> settings)
    : map_(std::move(map)), settings_(std::move(settings)) {}

std::optional<Target> ExplicitRouter::route(const decode::Change& change) {
  if (!map_.empty()) {
    if (!change.schema.empty()) {
      auto it = map_.find(change.db + "." + change.schema + "." + change.table);
      if (it != map_.end()) return it->second;
    }
    auto it = map_.find(change.db + "." + change.table);
    if (it != map_.end()) return it->second;
  }
  // PostgreSQL sources name db and schema; the schema is the closer analogue
  // of a MySQL database, so "public.orders" rather than "inventory.orders"
  // would collide across databases — keep the database.
  return Target{change.db, change.table};
}

TableSettings ExplicitRouter::settings(const Target& target) {
  auto it = settings_.find(target);
  return it == settings_.end() ? TableSettings{} : it->second;
}

std::vector<Target> ExplicitRouter::known_targets() {
  std::vector<Target> out;
  for (const auto& [src, t] : map_) out.push_back(t);
  for (const auto& [t, s] : settings_) out.push_back(t);
  return out;
}

decode::DecoderOptions with_target_table_options(decode::DecoderOptions o, Router& router) {
  bool any = router.settings_by_rule();
  for (const auto& t : router.known_targets()) {
    const TableSettings s = router.settings(t);
    any = any || !s.key_columns.empty() || s.extra_columns.has_value() || s.deletes.has_value() ||
          s.transforms.has_value();
  }
  if (!any) return o;
  // Stable addresses: the decoder keeps the pointer it was given.
  auto cache = std::make_shared<std::map<Target, decode::TableOptions>>();
  o.table_options = [&router, cache](const decode::Change& c) -> const decode::TableOptions* {
    const auto target = router.route(c);
    if (!target) return nullptr;
    auto it = cache->find(*target);
    if (it == cache->end()) {
      TableSettings s = router.settings(*target);
      it = cache->emplace(*target, decode::TableOptions{std::move(s.key_columns), std::move(s.extra_columns), std::move(s.deletes),
                                                      std::move(s.transforms)}).first;
    }
    return &it->second;
  };
  return o;
}

}  // namespace cdc2doris::pipeline
