#pragma once
// Debezium field schema -> Doris column type, following the "recommended Doris
// type" columns of docs/decoding.md ("Real sources: type tables"), and the
// type changes Doris can apply in place (MODIFY COLUMN).
//
// The exact source type (varchar(50) -> VARCHAR(200), TINYINT UNSIGNED ->
// SMALLINT, BIGINT UNSIGNED -> LARGEINT, timestamp(3) -> DATETIME(3)) is only
// known when the connector propagates it (`column.propagate.source.type` or
// `datatype.propagate.source.type`: the field's parameters
// __debezium.source.column.type/.length/.scale). Without it the Connect type
// and logical name decide, choosing a type that holds every value the field
// can carry (a string of unknown length is STRING, VARCHAR(65533) as a key).
#include <optional>
#include <string>
#include <string_view>

#include "core/decode/connect_schema.hpp"
#include "core/decode/row_check.hpp"

namespace cdc2doris::schema {

// The Doris type text (upper case, e.g. "BIGINT", "VARCHAR(200)",
// "DECIMAL(10,2)", "DATETIME(6)") for one field of a row schema. A key column
// never gets a type Doris refuses as a key (STRING, JSON, FLOAT, DOUBLE):
// strings become VARCHAR(65533), the others keep their type and Doris'
// refusal names them.
std::string doris_type(const decode::SchemaNode& field, bool key_column = false);

// A Doris type text as DESC / SHOW CREATE TABLE print it, in one spelling:
// upper case, DECIMALV3 -> DECIMAL, DATETIMEV2 -> DATETIME, DATEV2 -> DATE,
// TEXT -> STRING, JSONB -> JSON, DATETIME(0) -> DATETIME, display widths of
// integers dropped ("INT(11)" -> "INT"), no spaces.
std::string normalize_type(std::string_view doris_type);

// Whether a column of type `from` can be changed to `to` with MODIFY COLUMN
// without losing values, as Doris allows it (fe SchemaChangeHandler /
// ColumnType.isSchemaChangeAllowed): an integer to a wider integer, VARCHAR(n)
// to VARCHAR(m) with m > n, VARCHAR to STRING, FLOAT to DOUBLE, DECIMAL(p,s)
// to DECIMAL(q,s) with q > p, DATETIME(p) to DATETIME(q) with q > p. Both
// are normalized first; equal types are not a widening.
bool is_widening(std::string_view from, std::string_view to);

// Whether a value of type `from` always fits `to` (equal, or a widening):
// a source column whose type narrowed needs no DDL.
bool fits(std::string_view from, std::string_view to);

// A SQL literal for the field's Connect `default`, when it has one Doris can
// take as a column default: integers, floats, booleans (as 0/1... as true/false),
// strings (quoted), Date (days -> 'YYYY-MM-DD'), Decimal with a numeric text.
// nullopt: no default, JSON null, or a form that is not converted (the column
// is then added without a default and rows written before the change read NULL).
std::optional<std::string> default_literal(const decode::SchemaNode& field);

// What a row value must satisfy to load into a column of this (DESC) type,
// nullability and default (decode::RowCheck). STRING's 1 MiB soft limit is
// not checked: Doris BE's string_type_length_soft_limit_bytes is a setting
// of the BE, not of the table.
decode::ColumnLimit column_limit(std::string name, std::string_view type, bool nullable, bool has_default);

// The VARCHAR a column of `type` widens to for a value of `bytes` bytes
// (docs/schema-evolution.md, "Long strings"): twice the length, or the next
// power of two that holds the value if that is more, at most VARCHAR(65533),
// Doris' longest (fe ScalarType.MAX_VARCHAR_LENGTH); STRING beyond it.
// nullopt: `type` is no VARCHAR.
std::optional<std::string> widened_varchar(std::string_view type, uint64_t bytes);

// `name` as a quoted Doris identifier (`a``b`).
std::string quote_ident(std::string_view name);

}  // namespace cdc2doris::schema
