#pragma once
// A router for tests: an explicit "src_db.src_table" -> "db.table" map, else
// `{source_db}.{source_table}`; settings per target as given. The daemon's
// router is config::make_router (config/rule_router.cpp).
#include <atomic>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/pipeline/router.hpp"

namespace cdc2doris::pipeline {

class ExplicitRouter : public Router {
 public:
  // "src_db.src_table" (or "src_db.src_schema.src_table") -> target.
  explicit ExplicitRouter(std::map<std::string, Target> map = {},
                          std::map<Target, TableSettings> settings = {});
  std::optional<Target> route(const decode::Change& change) override;
  TableSettings settings(const Target& target) override;
  std::vector<Target> known_targets() override;
  // How often route() was asked (the pipeline asks once per source table
  // change in its stream of records, table_routing.hpp).
  std::atomic<uint64_t> routes{0};

 private:
  std::map<std::string, Target> map_;
  std::map<Target, TableSettings> settings_;
};

}  // namespace cdc2doris::pipeline
