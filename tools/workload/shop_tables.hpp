#pragma once
// The shop scenario's four tables: their columns, their Connect schema and
// Doris DDL types, and how a value of each column is written on the wire and
// expected in Doris. Formatting is our own (date library, no decoder code),
// so the tests compare the decoder against an independent rendering.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cdc2doris::workload::shop {

enum class Kind {
  Int64,    // BIGINT
  Int32,    // INT
  Str,      // VARCHAR / ENUM
  Dec,      // DECIMAL(p,s): Connect Decimal bytes
  MicroTs,  // DATETIME(6): io.debezium.time.MicroTimestamp (epoch micros)
  ZonedTs,  // TIMESTAMP: io.debezium.time.ZonedTimestamp (ISO-8601 UTC text); value = epoch seconds
  Date,     // DATE: io.debezium.time.Date (epoch days)
};

struct Col {
  const char* name;
  Kind kind;
  bool key = false;
  bool optional = true;
  int precision = 0, scale = 0;  // Dec
  const char* varchar = nullptr;  // Doris type for Str, e.g. "VARCHAR(255)"
  const char* enum_allowed = nullptr;
};

struct TableDef {
  const char* name;
  std::vector<Col> cols;
};

inline constexpr const char* kOrderStatuses[] = {"pending", "paid", "shipped", "delivered", "cancelled"};
enum Status { Pending = 0, Paid, Shipped, Delivered, Cancelled };

const std::vector<TableDef>& defs();

enum Table { Customers = 0, Products, Orders, Items };
// Column indexes.
enum { C_ID = 0, C_NAME, C_EMAIL, C_CREATED, C_POINTS, C_BIRTH };
enum { P_ID = 0, P_SKU, P_NAME, P_PRICE, P_STOCK, P_UPDATED };
enum { O_ID = 0, O_CUSTOMER, O_STATUS, O_TOTAL, O_PLACED, O_SHIPPED };
enum { I_ORDER = 0, I_LINE, I_PRODUCT, I_QTY, I_PRICE };

struct Val {
  bool null = false;
  int64_t i = 0;
  std::string s;
};
using Row = std::vector<Val>;
using Key = std::vector<int64_t>;

inline Val I(int64_t v) { return Val{false, v, {}}; }
inline Val S(std::string v) { return Val{false, 0, std::move(v)}; }
inline Val N() { return Val{true, 0, {}}; }

std::string fmt_micros(int64_t us);
std::string fmt_seconds(int64_t secs, const char* f);
std::string fmt_days(int64_t d);
std::string fmt_decimal(int64_t unscaled, int scale);

// The column's field in a Connect schema envelope.
std::string connect_field(const Col& c);
// Doris column type for a schema-envelope (typed) table.
std::string doris_typed(const Col& c);
// Doris column type for a plain (schemaless) table: the raw Connect value.
std::string doris_raw(const Col& c);
// The value as Debezium's JsonConverter writes it.
void wire_value(const Col& c, const Val& v, std::string& out);
// The value as a typed Doris column holds it.
void typed_value(const Col& c, const Val& v, std::string& out);

// Index into defs() of `table`, with or without the "db." prefix.
int table_index(std::string_view table, const std::string& db);

}  // namespace cdc2doris::workload::shop
