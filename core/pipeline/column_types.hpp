#pragma once
// Schemaless records (JsonConverter schemas.enable=false) are typed by the
// columns of their Doris target table (docs/decoding.md, "Schemaless records").
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "core/decode/decoder.hpp"
#include "core/doris/client.hpp"
#include "core/pipeline/router.hpp"

namespace cdc2doris::pipeline {

// Where the column types of schemaless records come from, by target table:
// a seam (pipeline::Dependencies::column_types) that tests fill from a
// workload. Answers keep their address (the decoder predicts by pointer),
// forgotten ones too, for as long as the object.
class ColumnTypes {
 public:
  virtual ~ColumnTypes() = default;
  // nullptr: no types (values are loaded as they arrive). nullopt: a
  // transient failure, to be asked again at the next record.
  virtual std::optional<const decode::SchemaNode*> types(const Target& target) = 0;
  // The target's next question is answered afresh (after a DDL).
  virtual void forget(const Target& target) = 0;
};

// The column types of target tables, read from DorisClient::schema() (GET
// /api/{db}/{table}/_schema, DESC for DATETIME scales) once per target and
// compiled with the target's epoch_units and decimal_scales, under the
// source column names its transforms map from. `router` and `doris` must
// outlive it.
class DorisColumnTypes : public ColumnTypes {
 public:
  DorisColumnTypes(Router& router, doris::DorisClient& doris) : router_(router), doris_(doris) {}
  // nullptr also when there is no such table or its schema cannot be read
  // (strict mode then judges the values).
  std::optional<const decode::SchemaNode*> types(const Target& target) override;
  // The target's next question reads `_schema` again.
  void forget(const Target& target) override;

 private:
  Router& router_;
  doris::DorisClient& doris_;
  std::map<Target, std::unique_ptr<decode::SchemaNode>> by_target_;  // nullptr: no types
  std::vector<std::unique_ptr<decode::SchemaNode>> retired_;  // forgotten, still referenced by the decoder
};

}  // namespace cdc2doris::pipeline
