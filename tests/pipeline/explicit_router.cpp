#include "tests/pipeline/explicit_router.hpp"

namespace cdc2doris::pipeline {

ExplicitRouter::ExplicitRouter(std::map<std::string, Target> map, std::map<Target, TableSettings> settings)
    : map_(std::move(map)), settings_(std::move(settings)) {}

std::optional<Target> ExplicitRouter::route(const decode::Change& change) {
  ++routes;
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

}  // namespace cdc2doris::pipeline
