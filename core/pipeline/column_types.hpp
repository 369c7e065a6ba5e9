#pragma once
// Schemaless records (JsonConverter schemas.enable=false) are typed by the
// columns of their Doris target table (docs/decoding.md, "Schemaless records").
#include <functional>
#include <memory>

#include "core/decode/decoder.hpp"
#include "core/doris/client.hpp"
#include "core/pipeline/router.hpp"

namespace cdc2doris::pipeline {

// Installs DecoderOptions::schemaless_types: the record's source table is
// routed to its target, whose columns come from DorisClient::schema() (GET
// /api/{db}/{table}/_schema) once per target and are compiled with the
// target's epoch_units. A target whose schema cannot be read gets no types
// (its values are copied as they arrive, and strict mode judges them); a
// transient failure is asked again at the next record.
// `router` and `doris` must outlive the decoder. An installed hook is kept.
// `forget` (optional) receives a function that drops a target's types, so
// that its next record reads `_schema` again (after a DDL); the dropped types
// stay alive, as the decoder may still hold them as a prediction.
decode::DecoderOptions with_doris_column_types(decode::DecoderOptions o, Router& router, doris::DorisClient& doris,
                                               std::function<void(const Target&)>* forget = nullptr);

}  // namespace cdc2doris::pipeline
