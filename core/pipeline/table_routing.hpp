#pragma once
// Between the decoder's two steps: an identified record (Decoder::identify)
// is routed to its target table once, and the target's context (its
// decoding settings, the column types of schemaless records) is what
// Decoder::convert writes the rows with (docs/architecture.md, "The walk of
// one record").
#include <map>
#include <optional>
#include <string>

#include "core/decode/decoder.hpp"
#include "core/pipeline/column_types.hpp"
#include "core/pipeline/router.hpp"

namespace cdc2doris::pipeline {

struct RoutedTable {
  const Target* target = nullptr;  // nullptr: excluded by the rules
  decode::TableContext context;
};

// Routing depends only on the source's db, schema and table, and records
// come in runs of one table: the router and the settings are asked once per
// change of source table, not per record; settings and column types once
// per target.
class TableRouting {
 public:
  // `router` (and `column_types`, when given) must outlive it. Without
  // column types, schemaless values are converted as they arrive.
  explicit TableRouting(Router& router, ColumnTypes* column_types = nullptr)
      : router_(router), column_types_(column_types) {}
  // `change` identified; `wants_column_types`: Decoder::wants_column_types().
  // The answer (and its target) stays valid until the next route(); its
  // target and options for as long as this object.
  const RoutedTable& route(const decode::Change& change, bool wants_column_types);
  // After a DDL changed the target's columns: its types are read again.
  void forget_column_types(const Target& target);

 private:
  struct PerTarget {
    decode::TableOptions options;
    const decode::SchemaNode* column_types = nullptr;
    bool column_types_known = false;
  };
  Router& router_;
  ColumnTypes* column_types_;
  std::map<Target, PerTarget> targets_;  // node addresses are stable: RoutedTable points into it
  // The last source table routed, and its answer.
  bool have_last_ = false;
  std::string db_, schema_, table_;
  PerTarget* last_target_ = nullptr;
  RoutedTable last_;
};

// identify → route (changes and truncates, which have a target table) →
// convert, the one way the pipeline and `cdc2doris decode --config` decode
// a record. `routed`: the record's routing, or nullptr when it has none
// (another kind, or an error).
std::optional<decode::DecodeError> decode_routed(decode::Decoder& decoder, TableRouting& routing,
                                                 const decode::KafkaRecord& record, decode::Change& out,
                                                 const RoutedTable*& routed);

}  // namespace cdc2doris::pipeline
