#pragma once
// Private to core/pipeline: what the pipeline knows of each target table's
// shape for table creation and schema evolution (table_ddl.cpp,
// docs/schema-evolution.md).
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/decode/connect_schema.hpp"
#include "core/decode/row_check.hpp"
#include "core/pipeline/router.hpp"
#include "core/schema/ddl_sql.hpp"
#include "state/checkpoint_store.hpp"

namespace cdc2doris::pipeline {

struct TableShape {
  bool exists = false;
  bool database_missing = false;  // !exists because its database does not exist either
  std::vector<schema::TableColumn> columns;
  const schema::TableColumn* find(const std::string& name) const {
    for (const auto& c : columns)
      if (c.name == name) return &c;
    return nullptr;
  }
};

// state::DdlStep kinds beyond core/schema's OpKind (0..3).
inline constexpr uint8_t kCreateTable = 4;
inline constexpr uint8_t kTruncateTable = 5;

// The truncate a DDL record is written for (state::DdlRecord::truncate_seq/at).
struct TruncateMark {
  std::optional<int64_t> seq;
  std::string at;  // topic[partition]@offset
};

inline bool is_truncate(const state::DdlRecord& rec) {
  return !rec.steps.empty() && rec.steps.front().kind == kTruncateTable;
}

// One recorded DDL step: its kind, column, argument and statement.
state::DdlStep to_step(const std::string& db, const std::string& table, const schema::DdlOp& op);

// Whether Doris already shows a step's effect (a restart converges by
// skipping these instead of running them again).
bool step_done(const state::DdlStep& step, const TableShape& shape);

// Columns of an old-shape row renamed to the table's (old -> new).
using ColumnRenames = std::vector<std::pair<std::string, std::string>>;

struct TableDdl {
  bool loaded = false;       // settings and shape read
  bool create_refused = false;  // auto_create refused under skip/dead_letter: the table's records are skipped
  TableSettings settings;
  TableShape shape;
  bool shape_read = false;  // `shape` came from Doris (DESC), when shape_read_at
  std::chrono::steady_clock::time_point shape_read_at;
  std::unique_ptr<decode::RowCheck> row_check;  // built from `shape` (row_checks.cpp); reset with it
  void set_shape(TableShape s) {
    shape = std::move(s);
    shape_read = true;
    shape_read_at = std::chrono::steady_clock::now();
    row_check.reset();
  }
  std::set<const decode::SchemaNode*> checked;  // row schemas the table already takes
  // Source columns an applied change renamed: old name -> the table's column
  // (chained over several renames). A record of the old shape arriving after
  // the change (a lagging partition) loads its value under the new name.
  std::map<std::string, std::string> renamed;
  std::map<const decode::SchemaNode*, ColumnRenames> remap;  // checked schemas of an old shape
  std::set<std::string> reported;               // columns logged once (policy off, type changes not applied)
  std::set<std::string> widen_refused;          // VARCHARs whose widening for a long value Doris refused
  uint64_t version = 0;                         // schema changes applied by this pipeline
  // The newest truncate applied (from the DDL record; docs/schema-evolution.md, "TRUNCATE").
  std::optional<int64_t> truncate_seq;
  std::string truncate_at;
};

struct DdlTracking {
  std::map<Target, TableDdl> tables;
  uint64_t cache_misses = 0;  // decoder's schema_cache_misses when `checked` was filled
  // The last record's schema and target that needed nothing (the per-record fast path).
  const decode::SchemaNode* last_schema = nullptr;
  Target last_target;
  const ColumnRenames* last_renames = nullptr;  // last_schema's, if of an old shape
};

// The columns of `source` (a row schema's columns) that an applied rename
// gave another name in the table: the old name is not a table column, the
// new one is, and the source does not carry the new one itself.
ColumnRenames old_shape_renames(const TableDdl& td, const std::vector<schema::Column>& source);

// Records what a DONE record renamed into `renamed`.
void note_renames(std::map<std::string, std::string>& renamed, const state::DdlRecord& rec);

}  // namespace cdc2doris::pipeline
