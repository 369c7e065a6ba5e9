#pragma once
// Statements of the MySQL query port, executed against the emulator engine:
// the drivers' session set-up (SET, SELECT @@var, SHOW VARIABLES), USE,
// SHOW DATABASES/TABLES/CREATE TABLE/TRANSACTION, DESC, information_schema
// SCHEMATA/TABLES/COLUMNS, the DDL of the HTTP SQL endpoint (sql.cpp), and
// SELECT over one table with WHERE (=, !=, <, <=, >, >=, IN, LIKE, IS NULL,
// AND), ORDER BY, LIMIT and COUNT(*). Everything else is an error packet, never
// an approximate answer. Single-threaded like the engine.
#include "tools/doris_emulator/engine.hpp"
#include "tools/doris_emulator/mysql_protocol.hpp"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace cdc2doris::emu {

struct QueryResult {
  bool error = false;
  uint16_t code = 0;
  std::string sqlstate, message;
  bool has_rows = false;  // false: OK packet
  uint64_t affected = 0;
  std::vector<mysql::ResultColumn> cols;
  std::vector<std::vector<std::optional<std::string>>> rows;

  static QueryResult ok(uint64_t affected = 0);
  // Doris' generic error: ERR 1105 (HY000) "errCode = 2, detailMessage = <msg>".
  static QueryResult fail(const std::string& msg, uint16_t code = 1105, const std::string& sqlstate = "HY000");
};

class QuerySession {
 public:
  QuerySession(Engine& e, std::string user, std::string client_host, uint32_t conn_id);
  QueryResult run(const std::string& sql);
  QueryResult use(const std::string& db);                 // COM_INIT_DB and USE
  QueryResult field_list(const std::string& table);       // COM_FIELD_LIST (column definitions only)
  const std::string& db() const { return db_; }

 private:
  QueryResult run_inner(const std::string& sql);
  std::optional<std::string> variable(const std::string& name) const;

  Engine& e_;
  std::string user_, host_, db_;
  uint32_t conn_id_;
  std::map<std::string, std::string> vars_;  // session overrides, lower-case names
};

}  // namespace cdc2doris::emu
