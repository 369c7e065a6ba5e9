#pragma once
// Relations the query port selects from (internal to query_*.cpp): a stored
// table's visible rows, information_schema views, SHOW results. Values are
// kept as the text the MySQL text protocol sends.
#include "tools/doris_emulator/engine.hpp"
#include "tools/doris_emulator/mysql_protocol.hpp"

#include <optional>
#include <string>
#include <vector>

namespace cdc2doris::emu::query {

struct RelColumn {
  std::string name;
  ColType type;  // drives comparisons (typed order) and the result column type
  bool hidden = false;  // selectable by name, not part of `*` (Doris' invisible columns)
};

struct Relation {
  std::string schema, table;
  std::vector<RelColumn> cols;
  std::vector<std::vector<std::optional<std::string>>> rows;
};

ColType varchar_type();
ColType bigint_type();
mysql::Type mysql_type(const ColType& t);

// Throws std::runtime_error ("errCode = 2, detailMessage = ...") if absent.
Relation table_relation(const Engine& e, const std::string& db, const std::string& table);
// information_schema.{schemata,tables,columns}; nullopt: not emulated.
std::optional<Relation> information_schema(const Engine& e, const std::string& view);
// SHOW TRANSACTION rows of database `db` (TransProcDir's columns); times in `zone`.
Relation transactions_relation(const Engine& e, const std::string& db, const std::string& zone);
// SHOW CREATE TABLE text.
std::string create_table_text(const Table& t);

}  // namespace cdc2doris::emu::query
