#include "tools/workload/shop_tables.hpp"

#include <date/date.h>

#include <chrono>
#include <stdexcept>

#include "core/decode/wire_values.hpp"
#include "tools/workload/workload.hpp"

namespace cdc2doris::workload::shop {

// ---- value formatting (own code, independent of the decoder) ----

std::string fmt_micros(int64_t us) {
  using namespace std::chrono;
  std::string s = date::format("%F %T", date::sys_time<microseconds>{microseconds{us}});
  if (s.size() > 7 && s.compare(s.size() - 7, 7, ".000000") == 0) s.resize(s.size() - 7);
  return s;
}

std::string fmt_seconds(int64_t secs, const char* f) {
  using namespace std::chrono;
  return date::format(f, date::sys_time<seconds>{seconds{secs}});
}

std::string fmt_days(int64_t d) { return date::format("%F", date::sys_days{date::days{d}}); }

std::string fmt_decimal(int64_t unscaled, int scale) {
  std::string s = unscaled < 0 ? "-" : "";
  const uint64_t mag = unscaled < 0 ? 0 - static_cast<uint64_t>(unscaled) : static_cast<uint64_t>(unscaled);
  uint64_t div = 1;
  for (int i = 0; i < scale; ++i) div *= 10;
  s += std::to_string(mag / div);
  if (scale > 0) {
    std::string frac = std::to_string(mag % div);
    s += "." + std::string(static_cast<size_t>(scale) - frac.size(), '0') + frac;
  }
  return s;
}

// ---- tables ----

const std::vector<TableDef>& defs() {
  static const std::vector<TableDef> d = {
      {"customers",
       {{"id", Kind::Int64, true, false},
        {"name", Kind::Str, false, true, 0, 0, "VARCHAR(255)"},
        {"email", Kind::Str, false, true, 0, 0, "VARCHAR(255)"},
        {"created_at", Kind::ZonedTs, false, false},
        {"loyalty_points", Kind::Int32, false, false},
        {"birth_date", Kind::Date}}},
      {"products",
       {{"id", Kind::Int64, true, false},
        {"sku", Kind::Str, false, false, 0, 0, "VARCHAR(32)"},
        {"name", Kind::Str, false, true, 0, 0, "VARCHAR(255)"},
        {"price", Kind::Dec, false, false, 10, 2},
        {"stock", Kind::Int32, false, false},
        {"updated_at", Kind::MicroTs, false, false}}},
      {"orders",
       {{"id", Kind::Int64, true, false},
        {"customer_id", Kind::Int64, false, false},
        {"status", Kind::Str, false, false, 0, 0, "VARCHAR(16)", "pending,paid,shipped,delivered,cancelled"},
        {"total", Kind::Dec, false, false, 12, 2},
        {"placed_at", Kind::MicroTs, false, false},
        {"shipped_on", Kind::Date}}},
      {"order_items",
       {{"order_id", Kind::Int64, true, false},
        {"line_no", Kind::Int32, true, false},
        {"product_id", Kind::Int64, false, false},
        {"quantity", Kind::Int32, false, false},
        {"unit_price", Kind::Dec, false, false, 10, 2}}},
  };
  return d;
}

std::string connect_field(const Col& c) {
  std::string opt = c.optional ? "true" : "false";
  std::string f = "\",\"optional\":" + opt;
  switch (c.kind) {
    case Kind::Int64: return "{\"type\":\"int64" + f + ",\"field\":\"" + c.name + "\"}";
    case Kind::Int32: return "{\"type\":\"int32" + f + ",\"field\":\"" + c.name + "\"}";
    case Kind::Str:
      if (c.enum_allowed)
        return "{\"type\":\"string" + f + R"(,"name":"io.debezium.data.Enum","version":1,"parameters":{"allowed":")" +
               c.enum_allowed + "\"},\"field\":\"" + c.name + "\"}";
      return "{\"type\":\"string" + f + ",\"field\":\"" + c.name + "\"}";
    case Kind::Dec:
      return "{\"type\":\"bytes" + f + R"(,"name":"org.apache.kafka.connect.data.Decimal","version":1,"parameters":{"scale":")" +
             std::to_string(c.scale) + R"(","connect.decimal.precision":")" + std::to_string(c.precision) + "\"},\"field\":\"" +
             c.name + "\"}";
    case Kind::MicroTs:
      return "{\"type\":\"int64" + f + R"(,"name":"io.debezium.time.MicroTimestamp","version":1,"field":")" + c.name + "\"}";
    case Kind::ZonedTs:
      return "{\"type\":\"string" + f + R"(,"name":"io.debezium.time.ZonedTimestamp","version":1,"field":")" + c.name + "\"}";
    case Kind::Date:
      return "{\"type\":\"int32" + f + R"(,"name":"io.debezium.time.Date","version":1,"field":")" + c.name + "\"}";
  }
  return "";
}

// Doris column type for a schema-envelope (typed) table.
std::string doris_typed(const Col& c) {
  switch (c.kind) {
    case Kind::Int64: return "BIGINT";
    case Kind::Int32: return "INT";
    case Kind::Str: return c.varchar;
    case Kind::Dec: return "DECIMAL(" + std::to_string(c.precision) + "," + std::to_string(c.scale) + ")";
    case Kind::MicroTs: return "DATETIME(6)";
    case Kind::ZonedTs: return "DATETIME";
    case Kind::Date: return "DATE";
  }
  return "";
}

// Doris column type for a plain (schemaless) table: the raw Connect value.
std::string doris_raw(const Col& c) {
  switch (c.kind) {
    case Kind::Int64: return "BIGINT";
    case Kind::Int32: return "INT";
    case Kind::Str: return c.varchar;
    case Kind::Dec:
      return "STRING COMMENT 'DECIMAL(" + std::to_string(c.precision) + "," + std::to_string(c.scale) +
             "): Connect Decimal bytes, base64'";
    case Kind::MicroTs: return "BIGINT COMMENT 'DATETIME(6): microseconds since 1970-01-01'";
    case Kind::ZonedTs: return "STRING COMMENT 'TIMESTAMP: ISO-8601 UTC text'";
    case Kind::Date: return "INT COMMENT 'DATE: days since 1970-01-01'";
  }
  return "";
}

void wire_value(const Col& c, const Val& v, std::string& out) {
  if (v.null) {
    out += "null";
    return;
  }
  switch (c.kind) {
    case Kind::Int64:
    case Kind::Int32:
    case Kind::MicroTs:
    case Kind::Date: out += std::to_string(v.i); return;
    case Kind::Str: put_string(v.s, out); return;
    case Kind::Dec:
      out.push_back('"');
      decode::base64_encode(twos_complement(v.i), out);
      out.push_back('"');
      return;
    case Kind::ZonedTs: out += "\"" + fmt_seconds(v.i, "%FT%TZ") + "\""; return;
  }
}

void typed_value(const Col& c, const Val& v, std::string& out) {
  if (v.null) {
    out += "null";
    return;
  }
  switch (c.kind) {
    case Kind::Int64:
    case Kind::Int32: out += std::to_string(v.i); return;
    case Kind::Str: put_string(v.s, out); return;
    case Kind::Dec: out += "\"" + fmt_decimal(v.i, c.scale) + "\""; return;
    case Kind::MicroTs: out += "\"" + fmt_micros(v.i) + "\""; return;
    case Kind::ZonedTs: out += "\"" + fmt_seconds(v.i, "%F %T") + "\""; return;
    case Kind::Date: out += "\"" + fmt_days(v.i) + "\""; return;
  }
}

int table_index(std::string_view table, const std::string& db) {
  if (table.size() > db.size() && table.substr(0, db.size()) == db && table[db.size()] == '.') table.remove_prefix(db.size() + 1);
  for (size_t i = 0; i < defs().size(); ++i)
    if (table == defs()[i].name) return static_cast<int>(i);
  throw std::invalid_argument("shop workload: unknown table " + std::string(table));
}

}  // namespace cdc2doris::workload::shop
