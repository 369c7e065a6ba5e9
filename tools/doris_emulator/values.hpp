#pragma once
// Column types and value conversion for the Doris emulator.
//
// A stored row is kept as one canonical JSON line (columns in schema order);
// keys and sequence values are additionally kept in a memcomparable byte
// encoding so that hashing, ordering ("rows ordered by key columns") and the
// "largest sequence wins" rule work on plain byte strings without re-parsing.
#include "tools/doris_emulator/datetime.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cdc2doris::emu {

enum class Kind {
  Boolean, TinyInt, SmallInt, Int, BigInt, LargeInt, Float, Double, Decimal,
  Date, DateTime, Char, Varchar, String, Json, Array
};

struct ColType {
  Kind kind = Kind::String;
  int len = 0;        // CHAR/VARCHAR(n), bytes
  int precision = 0;  // DECIMAL(p,s)
  int scale = 0;
  int frac = 0;       // DATETIME(p)
  std::shared_ptr<const ColType> elem;  // ARRAY<elem>

  // SQL spelling as DESC shows it, e.g. "DECIMAL(10,2)", "VARCHAR(32)".
  std::string sql() const;
  // Type name for GET /api/{db}/{tbl}/_schema ("DECIMALV3", "DATETIMEV2", ...).
  std::string schema_name() const;
};

// Parses "BIGINT", "decimal(10, 2)", "varchar(20)", "DATETIME(6)", "ARRAY<INT>", ...
// Returns nullopt with *err set when the type is unknown or malformed.
std::optional<ColType> parse_type(std::string_view text, std::string* err);

// One incoming value as the parsers see it.
struct InValue {
  enum Tag { Null, Str, Num, Bool, Raw } tag = Null;  // Raw: a JSON object/array
  std::string_view text;  // Str: unescaped text; Num/Raw: raw JSON text
  bool b = false;
};

// Appends the canonical JSON token for `in` converted to `t` to *out and, if
// key != nullptr, the memcomparable encoding to *key. Returns false with a
// reason in *why when the value does not fit the type; *out/*key are then
// left in an unspecified (partially appended) state and must be truncated.
// `zone`: the load's time zone for zone-suffixed DATE/DATETIME text
// (nullptr: Doris' default, Asia/Shanghai).
bool convert(const ColType& t, const InValue& in, std::string* out, std::string* key, std::string* why,
             const LoadZone* zone = nullptr);

// Memcomparable encoding of NULL (sorts first).
void encode_null(std::string* key);
void encode_not_null(std::string* key);

// JSON string escaping (appends "quoted").
void append_json_string(std::string* out, std::string_view s);

}  // namespace cdc2doris::emu
