#pragma once
// CREATE TABLE and ALTER TABLE statements for Doris, and what a record's
// schema needs of a table (docs/schema-evolution.md). Pure: no I/O.
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/decode/connect_schema.hpp"

namespace cdc2doris::schema {

struct Column {
  std::string name;
  std::string type;  // Doris type text ("BIGINT", "VARCHAR(200)")
  bool nullable = true;
  std::optional<std::string> default_sql;  // a SQL literal
  bool key = false;
  // The type is the Connect type's widest fit, not the source column's
  // (no __debezium.source.column.type): a string of unknown length, a
  // timestamp of unknown precision. Such a type never asks for a MODIFY.
  bool loose = false;
  bool operator==(const Column&) const = default;
};

enum class KeyModel { Unique, Duplicate };

// How tables are created (routing.tables.<target>.auto_create and its options).
struct CreateOptions {
  KeyModel model = KeyModel::Unique;
  // A column the table maps as function_column.sequence_col (created as
  // BIGINT when the record does not carry it: the decoder's sequence column).
  std::string sequence_col;
  // Columns the decoder adds to every row (op, source ts, sequence) and their types.
  std::vector<Column> extra_columns;
  // Table properties; the defaults below are added unless given here.
  std::map<std::string, std::string> properties;
  // Flexible partial updates (Doris 3.1+): enable_unique_key_skip_bitmap_column.
  bool flexible_partial_updates = false;
  int buckets = 0;  // 0: BUCKETS AUTO
  // PROPERTIES of the database when auto_create finds it missing too
  // (routing.create_database_properties).
  std::map<std::string, std::string> database_properties;
  // Source fields that are not columns: flattened metadata (prefix, e.g. "__").
  std::string skip_prefix;
};

struct TableSpec {
  std::string db, table;
  KeyModel model = KeyModel::Unique;
  std::vector<Column> columns;  // key columns first, in key order
  std::vector<std::string> keys;
  std::map<std::string, std::string> properties;
  int buckets = 0;
};

class SchemaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The columns of a row schema (a Connect struct), with the Doris types of
// types.hpp; `keys` are the key columns (NOT NULL, key types).
std::vector<Column> columns_from_schema(const decode::SchemaNode& row, const std::vector<std::string>& keys,
                                        const std::string& skip_prefix = {});

// The table for a row schema. Throws SchemaError when a key column is not a
// field of the row, or there are no keys for a UNIQUE table.
TableSpec table_from_columns(const std::string& db, const std::string& table, std::vector<Column> columns,
                             const std::vector<std::string>& keys, const CreateOptions& opt);

// CREATE TABLE IF NOT EXISTS `db`.`table` (...) UNIQUE KEY(...) DISTRIBUTED BY
// HASH(...) BUCKETS AUTO PROPERTIES (...).
std::string create_table_sql(const TableSpec& spec);
// CREATE DATABASE IF NOT EXISTS, with PROPERTIES when any are given.
std::string create_database_sql(const std::string& db, const std::map<std::string, std::string>& properties);

// One ALTER TABLE step.
enum class OpKind { AddColumn, DropColumn, RenameColumn, ModifyColumn };
const char* to_string(OpKind k);  // "add", "drop", "rename", "modify"
struct DdlOp {
  OpKind kind = OpKind::AddColumn;
  Column column;         // add/modify: the new definition; drop/rename: its name
  std::string new_name;  // rename
  bool operator==(const DdlOp&) const = default;
};
std::string alter_sql(const std::string& db, const std::string& table, const DdlOp& op);

// A Doris table's column as DESC shows it.
struct TableColumn {
  std::string name;
  std::string type;  // normalized (types.hpp)
  bool key = false;
  bool nullable = true;
  std::optional<std::string> default_sql;
};

enum class Policy { Off, Add, Full };
const char* to_string(Policy p);

struct Diff {
  std::vector<DdlOp> ops;
  // Source columns the table lacks that the policy does not add (off), and
  // type changes it does not apply (off/add, or not a widening Doris allows).
  std::vector<std::string> missing;
  std::vector<std::string> not_applied;  // "col: INT -> VARCHAR(10)"
  bool empty() const { return ops.empty() && missing.empty() && not_applied.empty(); }
};

// What the table needs to take rows of `source`. `ignore`: table columns that
// do not come from the source (extra columns, the sequence column); they are
// never dropped or renamed. Key columns are never dropped, renamed or changed.
// Renames (full): exactly one column left the source and one came in, with
// the same type, at the same position — the shape a RENAME COLUMN leaves (the
// values of the old column stay; a drop and an add would lose them). Names
// in `renames` (old -> new, from a schema-change event) win over the guess.
Diff diff(const std::vector<TableColumn>& table, const std::vector<Column>& source, Policy policy,
          const std::set<std::string>& ignore = {}, const std::map<std::string, std::string>& renames = {});

}  // namespace cdc2doris::schema
