#pragma once
// What a Doris user may do, read from its `SHOW GRANTS` row, so `cdc2doris
// check --connect` can say which privilege a target table lacks before the
// first load is refused. Columns are found by name (fe Auth.getUserAuthInfo,
// AuthProcDir.TITLE_NAMES: GlobalPrivs, DatabasePrivs, TablePrivs; roles'
// privileges are merged into them). Cells look like
//   GlobalPrivs   "Node_priv,Admin_priv"            (1.x: "Admin_priv Node_priv  (false)")
//   DatabasePrivs "internal.shop: Select_priv,Load_priv; internal.information_schema: Select_priv"
//   TablePrivs    "internal.shop.orders: Load_priv"  (1.x: "default_cluster:shop.orders: ...")
// and "\N" when empty.
#include <map>
#include <optional>
#include <set>
#include <string>

#include "core/doris/client.hpp"

namespace cdc2doris::doris {

struct Grants {
  std::set<std::string> global;                          // upper case: LOAD_PRIV, ADMIN_PRIV, ...
  std::map<std::string, std::set<std::string>> dbs;      // db -> privileges
  std::map<std::string, std::set<std::string>> tables;   // "db.table" -> privileges

  // `priv` ("LOAD_PRIV") or ADMIN_PRIV held on db.table through *.*, db.* or db.table.
  bool holds(const std::string& priv, const std::string& db, const std::string& table) const;
};

// nullopt: the answer has no GlobalPrivs/DatabasePrivs/TablePrivs columns or no row.
std::optional<Grants> parse_grants(const SqlResult& show_grants);

}  // namespace cdc2doris::doris
