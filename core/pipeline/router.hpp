#pragma once
// Routing: which Doris table an identified change goes to, and how that table
// is loaded. The pipeline only sees this interface (through TableRouting,
// table_routing.hpp, which asks it once per source table); config/ builds the
// rule-based router from YAML (issue 7).
#include <compare>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/decode/decoder.hpp"
#include "core/schema/ddl_sql.hpp"

namespace cdc2doris::pipeline {

struct Target {
  std::string db;
  std::string table;
  auto operator<=>(const Target&) const = default;
  std::string name() const { return db + "." + table; }
};

// What a source TRUNCATE of a table does (docs/schema-evolution.md,
// "TRUNCATE"): run TRUNCATE TABLE in Doris between epochs, skip it (counted
// and logged), or stop naming the record.
enum class TruncatePolicy { Apply, Ignore, Fail };
const char* to_string(TruncatePolicy p);

// How one target table is loaded. Unset fields are discovered from Doris
// (`_schema`: the key model) or take the defaults.
struct TableSettings {
  std::optional<bool> unique_key;            // nullopt: ask Doris
  std::string sequence_col;                  // function_column.sequence_col header
  // The decoder fills sequence_col from the source position (monotonic in
  // source order), so Doris orders a key's rows by it whatever the load order.
  bool sequence_from_source_position = false;
  std::map<std::string, std::string> headers;  // extra Stream Load headers
  // For the decoder (decode::TableOptions, see table_routing.hpp).
  std::vector<std::string> key_columns;                 // empty: the Kafka key's fields
  std::optional<decode::ExtraColumns> extra_columns;    // nullopt: decoding.extra_columns
  std::map<std::string, decode::EpochUnit> epoch_units; // schemaless DATETIME columns (column_types.hpp)
  std::map<std::string, int> decimal_scales;  // schemaless base64 decimals into string columns (column_types.hpp)
  // Table creation and schema evolution (docs/schema-evolution.md).
  bool auto_create = false;  // create the table from the first record when it does not exist
  schema::Policy schema_evolution = schema::Policy::Add;
  schema::CreateOptions create;           // model, properties, buckets, flexible partial updates
  std::vector<schema::Column> columns;    // schemaless records: the table's columns for auto_create
  // Schemaless records: a JSON key the table lacks is added as this Doris
  // type (policy add/full); empty: such a record is a bad record.
  std::string new_column_type;
  // nullopt: apply for a UNIQUE KEY table, ignore for the others (a
  // DUPLICATE KEY table keeps history, which a source TRUNCATE does not undo).
  std::optional<TruncatePolicy> truncate;
  // nullopt: the decoder's DecoderOptions::deletes (routing.delete_mode ...).
  std::optional<decode::DeleteOptions> deletes;
  // nullopt: the decoder's DecoderOptions::transforms (routing.column_case, computed_columns).
  std::optional<decode::ColumnTransforms> transforms;
};

class Router {
 public:
  virtual ~Router() = default;
  // nullopt: the change is excluded by the rules (counted, not loaded).
  // Depends only on the change's db, schema and table (TableRouting
  // remembers the answer for a run of records of one source table).
  virtual std::optional<Target> route(const decode::Change& change) = 0;
  virtual TableSettings settings(const Target& target) = 0;
  // Tables the rules name explicitly; recovery probes them for lingering txns
  // even before any row for them was seen.
  virtual std::vector<Target> known_targets() = 0;
};

}  // namespace cdc2doris::pipeline
