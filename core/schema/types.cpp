#include "core/schema/types.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace cdc2doris::schema {
namespace {

using decode::ConnectType;
using decode::Logical;
using decode::SchemaNode;

std::string upper(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

std::optional<int64_t> to_int(const std::string* s) {
  if (s == nullptr) return std::nullopt;
  int64_t v = 0;
  auto r = std::from_chars(s->data(), s->data() + s->size(), v);
  if (r.ec != std::errc() || r.ptr != s->data() + s->size()) return std::nullopt;
  return v;
}

const std::string* param(const SchemaNode& f, std::string_view key) {
  return f.meta ? f.meta->parameter(key) : nullptr;
}

// Doris CHAR/VARCHAR lengths count bytes: n characters of UTF-8 need 4n
// (docs/decoding.md: varchar(50) -> VARCHAR(200)). VARCHAR ends at 65533.
constexpr int64_t kMaxVarchar = 65533;

std::string varchar_for_chars(int64_t n, bool key) {
  if (n <= 0) return key ? "VARCHAR(65533)" : "STRING";
  const int64_t bytes = n * 4;
  if (bytes > kMaxVarchar) return key ? "VARCHAR(65533)" : "STRING";
  return "VARCHAR(" + std::to_string(bytes) + ")";
}

std::string string_type(bool key) { return key ? "VARCHAR(65533)" : "STRING"; }

std::string datetime(int64_t precision) {
  precision = std::clamp<int64_t>(precision, 0, 6);
  return precision == 0 ? "DATETIME" : "DATETIME(" + std::to_string(precision) + ")";
}

std::string decimal(int64_t p, int64_t s) {
  if (p > 38 || s > 38 || s > p) return "";  // beyond Doris' DECIMAL: the caller picks STRING
  if (p <= 0) p = 38;
  return "DECIMAL(" + std::to_string(p) + "," + std::to_string(s) + ")";
}

// The longest label of an Enum (parameter "allowed", comma-separated), or
// the longest EnumSet value (every label and the commas between them).
int64_t enum_chars(const SchemaNode& f, bool set) {
  const std::string* allowed = param(f, "allowed");
  if (allowed == nullptr) return 0;
  int64_t longest = 0, total = 0, n = 0, cur = 0;
  for (char c : *allowed) {
    if (c == ',') {
      longest = std::max(longest, cur);
      total += cur;
      ++n;
      cur = 0;
    } else if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) {
      ++cur;  // characters, not bytes: a UTF-8 continuation byte is not counted
    }
  }
  longest = std::max(longest, cur);
  total += cur;
  ++n;
  return set ? total + (n - 1) : longest;
}

// The recommended type from the source column type, when the connector
// propagates it; "" when the source type is not one the tables name.
std::string from_source_type(const SchemaNode& f, bool key) {
  const std::string* st = param(f, "__debezium.source.column.type");
  if (st == nullptr) return "";
  std::string t = upper(*st);
  const bool is_unsigned = t.find("UNSIGNED") != std::string::npos;
  if (auto sp = t.find(' '); sp != std::string::npos) t.resize(sp);
  const auto length = to_int(param(f, "__debezium.source.column.length"));
  const auto scale = to_int(param(f, "__debezium.source.column.scale"));
  // MariaDB / MySQL
  if (t == "TINYINT") return is_unsigned ? "SMALLINT" : "TINYINT";
  if (t == "BOOLEAN" || t == "BOOL") return f.type == ConnectType::Boolean ? "BOOLEAN" : "TINYINT";
  if (t == "SMALLINT" || t == "INT2") return is_unsigned ? "INT" : "SMALLINT";
  if (t == "MEDIUMINT") return "INT";
  if (t == "INT" || t == "INTEGER" || t == "INT4" || t == "SERIAL") return is_unsigned ? "BIGINT" : "INT";
  if (t == "BIGINT" || t == "INT8" || t == "BIGSERIAL" || t == "OID") return is_unsigned ? "LARGEINT" : "BIGINT";
  if (t == "YEAR") return "SMALLINT";
  if (t == "FLOAT" || t == "REAL" || t == "FLOAT4") return "FLOAT";
  if (t == "DOUBLE" || t == "FLOAT8" || t == "DOUBLE PRECISION") return "DOUBLE";
  if (t == "MONEY") return "DECIMAL(19,2)";
  if (t == "DECIMAL" || t == "NUMERIC") {
    if (f.logical == Logical::VariableScaleDecimal) return "DECIMAL(38,10)";
    if (length && *length > 0) {
      std::string d = decimal(*length, scale.value_or(0));
      return d.empty() ? string_type(key) : d;
    }
    return "";
  }
  if (t == "BIT") {
    if (f.type == ConnectType::Boolean) return "BOOLEAN";
    return "STRING";
  }
  if (t == "VARBIT") return "STRING";
  if (t == "CHAR" || t == "BPCHAR" || t == "CHARACTER") {
    if (length && *length > 0 && *length * 4 <= 255) return "CHAR(" + std::to_string(*length * 4) + ")";
    return varchar_for_chars(length.value_or(0), key);
  }
  if (t == "VARCHAR" || t == "CHARACTER VARYING") return varchar_for_chars(length.value_or(0), key);
  if (t == "TEXT" || t == "TINYTEXT" || t == "MEDIUMTEXT" || t == "LONGTEXT" || t == "CITEXT" || t == "XML" ||
      t == "LTREE" || t == "TSVECTOR")
    return string_type(key);
  if (t == "BINARY" || t == "VARBINARY" || t == "BLOB" || t == "TINYBLOB" || t == "MEDIUMBLOB" ||
      t == "LONGBLOB" || t == "BYTEA")
    return string_type(key);
  if (t == "DATE") return "DATE";
  if (t == "TIME" || t == "TIMETZ") return string_type(key);
  if (t == "DATETIME" || t == "TIMESTAMP" || t == "TIMESTAMPTZ") {
    // MySQL reports the fractional digits as the length, PostgreSQL as the scale.
    int64_t p = scale.value_or(0);
    if (t == "DATETIME" || (t == "TIMESTAMP" && f.logical == Logical::ZonedTimestamp && !scale))
      p = length.value_or(p);
    if (t == "TIMESTAMPTZ" && !scale) p = 6;
    if (f.logical == Logical::TimestampMicros && !scale && !length) p = 6;
    return datetime(p);
  }
  if (t == "INTERVAL") return "BIGINT";
  if (t == "UUID") return "VARCHAR(36)";
  if (t == "JSON" || t == "JSONB" || t == "HSTORE") return key ? "VARCHAR(65533)" : "JSON";
  if (t == "INET" || t == "CIDR") return "VARCHAR(64)";
  if (t == "MACADDR" || t == "MACADDR8") return "VARCHAR(" + std::string(t == "MACADDR" ? "17" : "23") + ")";
  if (t.find("RANGE") != std::string::npos) return "VARCHAR(64)";
  if (t == "ENUM") return varchar_for_chars(std::max<int64_t>(enum_chars(f, false), 1), key);
  if (t == "SET") return varchar_for_chars(std::max<int64_t>(enum_chars(f, true), 1), key);
  if (t == "POINT" || t == "GEOMETRY" || t == "GEOGRAPHY") return string_type(key);
  return "";
}

}  // namespace

std::string quote_ident(std::string_view name) {
  std::string out = "`";
  for (char c : name) {
    if (c == '`') out.push_back('`');
    out.push_back(c);
  }
  out.push_back('`');
  return out;
}

std::string doris_type(const SchemaNode& f, bool key) {
  if (std::string s = from_source_type(f, key); !s.empty()) return s;
  const std::string& name = f.name;
  switch (f.logical) {
    case Logical::Decimal: {
      const auto p = to_int(param(f, "connect.decimal.precision"));
      if (!p) return "DECIMAL(38," + std::to_string(std::clamp(f.scale, 0, 38)) + ")";
      std::string d = decimal(*p, f.scale);
      return d.empty() ? string_type(key) : d;
    }
    case Logical::VariableScaleDecimal: return "DECIMAL(38,10)";
    case Logical::Date:
    case Logical::IsoDate: return "DATE";
    case Logical::TimeMillis:
    case Logical::TimeMicros:
    case Logical::TimeNanos:
    case Logical::ZonedTime:
    case Logical::IsoTime: return string_type(key);
    case Logical::TimestampMillis: return datetime(3);
    case Logical::TimestampMicros:
    case Logical::TimestampNanos:
    case Logical::ZonedTimestamp:
    case Logical::IsoTimestamp: return datetime(6);
    case Logical::Json: return key ? "VARCHAR(65533)" : "JSON";
    case Logical::Bits:
    case Logical::Geometry:
    case Logical::Point: return string_type(key);
    default: break;
  }
  if (name == "io.debezium.data.Uuid") return "VARCHAR(36)";
  if (name == "io.debezium.data.Enum") return varchar_for_chars(std::max<int64_t>(enum_chars(f, false), 1), key);
  if (name == "io.debezium.data.EnumSet") return varchar_for_chars(std::max<int64_t>(enum_chars(f, true), 1), key);
  if (name == "io.debezium.time.Year") return "SMALLINT";
  switch (f.type) {
    case ConnectType::Boolean: return "BOOLEAN";
    case ConnectType::Int8: return "TINYINT";
    case ConnectType::Int16: return "SMALLINT";
    case ConnectType::Int32: return "INT";
    case ConnectType::Int64: return "BIGINT";  // MicroDuration (interval) too
    case ConnectType::Float: return "FLOAT";
    case ConnectType::Double: return "DOUBLE";
    case ConnectType::String:
    case ConnectType::Bytes: return string_type(key);
    case ConnectType::Array:
    case ConnectType::Map:
    case ConnectType::Struct: return key ? "VARCHAR(65533)" : "JSON";
  }
  return string_type(key);
}

namespace {

struct Parsed {
  std::string base;
  std::vector<int64_t> args;
};

Parsed parse(std::string_view t) {
  Parsed p;
  std::string u;
  for (char c : t)
    if (!std::isspace(static_cast<unsigned char>(c))) u.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
  const size_t lp = u.find('(');
  p.base = u.substr(0, lp);
  if (lp != std::string::npos && u.find('<') == std::string::npos) {
    const size_t rp = u.find(')', lp);
    std::string inner = u.substr(lp + 1, rp == std::string::npos ? std::string::npos : rp - lp - 1);
    size_t start = 0;
    while (start <= inner.size()) {
      size_t comma = inner.find(',', start);
      std::string part = inner.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      int64_t v = 0;
      std::from_chars(part.data(), part.data() + part.size(), v);
      p.args.push_back(v);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  } else if (lp != std::string::npos) {
    p.base = u;  // ARRAY<...>, MAP<...>: compared as text
  }
  if (p.base == "DECIMALV3" || p.base == "DECIMALV2" || p.base == "NUMERIC") p.base = "DECIMAL";
  if (p.base == "DATETIMEV2") p.base = "DATETIME";
  if (p.base == "DATEV2") p.base = "DATE";
  if (p.base == "TEXT") p.base = "STRING";
  if (p.base == "JSONB") p.base = "JSON";
  if (p.base == "INTEGER") p.base = "INT";
  if (p.base == "BOOL") p.base = "BOOLEAN";
  if (p.base == "TINYINT" || p.base == "SMALLINT" || p.base == "INT" || p.base == "BIGINT" || p.base == "LARGEINT" ||
      p.base == "BOOLEAN" || p.base == "FLOAT" || p.base == "DOUBLE" || p.base == "DATE" || p.base == "STRING" ||
      p.base == "JSON")
    p.args.clear();
  if (p.base == "DECIMAL" && p.args.empty()) p.args = {9, 0};
  if (p.base == "DECIMAL" && p.args.size() == 1) p.args.push_back(0);
  if (p.base == "DATETIME" && !p.args.empty() && p.args[0] == 0) p.args.clear();
  if (p.base == "VARCHAR" && p.args.empty()) p.args = {65533};
  if (p.base == "CHAR" && p.args.empty()) p.args = {1};
  return p;
}

std::string render(const Parsed& p) {
  if (p.args.empty()) return p.base;
  std::string out = p.base + "(";
  for (size_t i = 0; i < p.args.size(); ++i) out += (i ? "," : "") + std::to_string(p.args[i]);
  return out + ")";
}

int int_rank(const std::string& b) {
  if (b == "TINYINT") return 1;
  if (b == "SMALLINT") return 2;
  if (b == "INT") return 3;
  if (b == "BIGINT") return 4;
  if (b == "LARGEINT") return 5;
  return 0;
}

}  // namespace

std::string normalize_type(std::string_view t) { return render(parse(t)); }

decode::ColumnLimit column_limit(std::string name, std::string_view type, bool nullable, bool has_default) {
  using Kind = decode::ColumnLimit::Kind;
  const Parsed p = parse(type);
  decode::ColumnLimit c;
  c.name = std::move(name);
  c.type = render(p);
  c.not_null = !nullable && !has_default;
  if ((p.base == "VARCHAR" || p.base == "CHAR") && !p.args.empty() && p.args[0] > 0) {
    c.kind = Kind::Bytes;
    c.max_bytes = static_cast<uint32_t>(p.args[0]);
  } else if (p.base == "DECIMAL" && p.args.size() == 2) {
    c.kind = Kind::Decimal;
    c.int_digits = static_cast<int>(p.args[0] - p.args[1]);
  } else if (int rank = int_rank(p.base)) {
    c.kind = Kind::Integer;
    c.bits = 8 << (rank - 1);
  } else if (p.base == "DATE" || p.base == "DATETIME") {
    c.kind = Kind::Date;
  }
  return c;
}

std::optional<std::string> widened_varchar(std::string_view type, uint64_t bytes) {
  const Parsed p = parse(type);
  if (p.base != "VARCHAR" || p.args.empty()) return std::nullopt;
  if (bytes > static_cast<uint64_t>(kMaxVarchar)) return "STRING";
  uint64_t len = static_cast<uint64_t>(std::max<int64_t>(p.args[0], 1)) * 2;
  uint64_t pow2 = 1;
  while (pow2 < bytes) pow2 *= 2;
  len = std::min(std::max(len, pow2), static_cast<uint64_t>(kMaxVarchar));
  return "VARCHAR(" + std::to_string(len) + ")";
}

bool is_widening(std::string_view from_text, std::string_view to_text) {
  const Parsed a = parse(from_text), b = parse(to_text);
  if (render(a) == render(b)) return false;
  // Doris' schema-change matrix (fe ColumnType.schemaChangeMatrix) with
  // Column.checkSchemaChangeAllowed: "Cannot shorten string length".
  if (int ra = int_rank(a.base), rb = int_rank(b.base); ra && rb) return rb > ra;
  if (a.base == "FLOAT" && b.base == "DOUBLE") return true;
  if ((a.base == "VARCHAR" || a.base == "CHAR") && b.base == "VARCHAR") return b.args[0] > a.args[0];
  if (a.base == "CHAR" && b.base == "CHAR") return b.args[0] > a.args[0];
  if ((a.base == "VARCHAR" || a.base == "CHAR") && b.base == "STRING") return true;
  if (a.base == "DECIMAL" && b.base == "DECIMAL")
    return b.args[1] == a.args[1] && b.args[0] > a.args[0];
  if (a.base == "DATETIME" && b.base == "DATETIME")
    return (b.args.empty() ? 0 : b.args[0]) > (a.args.empty() ? 0 : a.args[0]);
  return false;
}

bool fits(std::string_view from, std::string_view to) {
  const Parsed a = parse(from), b = parse(to);
  if (render(a) == render(b)) return true;
  if (int ra = int_rank(a.base), rb = int_rank(b.base); ra && rb) return ra <= rb;
  if (a.base == "FLOAT" && b.base == "DOUBLE") return true;
  if ((a.base == "VARCHAR" || a.base == "CHAR") && (b.base == "VARCHAR" || b.base == "CHAR"))
    return a.args[0] <= b.args[0];
  if ((a.base == "VARCHAR" || a.base == "CHAR") && b.base == "STRING") return true;
  if (a.base == "DECIMAL" && b.base == "DECIMAL")
    return a.args[1] <= b.args[1] && a.args[0] - a.args[1] <= b.args[0] - b.args[1];
  if (a.base == "DATETIME" && b.base == "DATETIME")
    return (a.args.empty() ? 0 : a.args[0]) <= (b.args.empty() ? 0 : b.args[0]);
  return false;
}

std::optional<std::string> default_literal(const SchemaNode& f) {
  if (!f.meta || f.meta->default_json.empty() || f.meta->default_json == "null") return std::nullopt;
  const std::string& d = f.meta->default_json;
  auto quoted = [](std::string_view s) {
    std::string out = "'";
    for (char c : s) {
      if (c == '\'' || c == '\\') out.push_back('\\');
      out.push_back(c);
    }
    return out + "'";
  };
  auto json_string = [&](std::string& out) {
    // A JSON string token without escapes we would have to decode.
    if (d.size() < 2 || d.front() != '"' || d.back() != '"') return false;
    out = d.substr(1, d.size() - 2);
    return out.find('\\') == std::string::npos;
  };
  switch (f.logical) {
    case Logical::None: break;
    case Logical::Date: {
      int64_t days = 0;
      auto r = std::from_chars(d.data(), d.data() + d.size(), days);
      if (r.ec != std::errc() || r.ptr != d.data() + d.size()) return std::nullopt;
      // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
      int64_t z = days + 719468;
      const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
      const int64_t doe = z - era * 146097;
      const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
      const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
      const int64_t mp = (5 * doy + 2) / 153;
      const int64_t day = doy - (153 * mp + 2) / 5 + 1;
      const int64_t month = mp < 10 ? mp + 3 : mp - 9;
      const int64_t year = yoe + era * 400 + (month <= 2 ? 1 : 0);
      if (year < 1 || year > 9999) return std::nullopt;
      char buf[16];
      std::snprintf(buf, sizeof buf, "%04d-%02d-%02d", static_cast<int>(year), static_cast<int>(month),
                    static_cast<int>(day));
      return quoted(buf);
    }
    default: {
      // Only names whose value is the plain string (Uuid, Enum, Json text...).
      if (f.type != ConnectType::String || f.logical == Logical::ZonedTimestamp || f.logical == Logical::ZonedTime)
        return std::nullopt;
      std::string s;
      if (!json_string(s)) return std::nullopt;
      return quoted(s);
    }
  }
  switch (f.type) {
    case ConnectType::Boolean:
      if (d == "true" || d == "false") return d;
      return std::nullopt;
    case ConnectType::Int8:
    case ConnectType::Int16:
    case ConnectType::Int32:
    case ConnectType::Int64:
    case ConnectType::Float:
    case ConnectType::Double: {
      if (d.empty() || d.front() == '"' || d.front() == '{' || d.front() == '[') return std::nullopt;
      return "'" + d + "'";
    }
    case ConnectType::String: {
      std::string s;
      if (!json_string(s)) return std::nullopt;
      return quoted(s);
    }
    default: return std::nullopt;
  }
}

}  // namespace cdc2doris::schema
