// Relations for the query port: stored rows rendered as Doris' MySQL text
// protocol shows them, information_schema views, SHOW TRANSACTION rows and
// SHOW CREATE TABLE text.
#include "tools/doris_emulator/query_rel.hpp"
#include "tools/doris_emulator/sql_lex.hpp"

#include <absl/time/time.h>
#include <boost/json.hpp>

#include <charconv>

namespace cdc2doris::emu::query {
namespace {

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Array elements as Doris prints them: "[1, 2]", strings and dates quoted,
// DECIMAL/LARGEINT (stored quoted) bare.
std::string display_array(const boost::json::value& v, const ColType& elem) {
  if (v.is_null()) return "null";
  if (elem.kind == Kind::Array && v.is_array()) {
    std::string o = "[";
    bool first = true;
    for (auto& x : v.as_array()) {
      if (!first) o += ", ";
      first = false;
      o += display_array(x, *elem.elem);
    }
    return o + "]";
  }
  if (v.is_string() && (elem.kind == Kind::Decimal || elem.kind == Kind::LargeInt)) return std::string(v.as_string());
  if (v.is_bool()) return v.as_bool() ? "1" : "0";
  if (v.is_double()) {
    // Shortest round-trip text of the element's own width, as Doris prints
    // FLOAT/DOUBLE array elements ([0.33, 0.67]), not JSON's exponent form.
    char buf[64];
    double d = v.as_double();
    auto r = elem.kind == Kind::Float ? std::to_chars(buf, buf + sizeof buf, static_cast<float>(d))
                                      : std::to_chars(buf, buf + sizeof buf, d);
    return std::string(buf, r.ptr);
  }
  return boost::json::serialize(v);
}

// A stored row token (canonical JSON, values.cpp) as text.
std::optional<std::string> display(std::string_view tok, const ColType& t) {
  if (tok == "null") return std::nullopt;
  if (tok == "true") return std::string("1");
  if (tok == "false") return std::string("0");
  if (t.kind == Kind::Json) return std::string(tok);
  if (t.kind == Kind::Array) {
    auto v = boost::json::parse(tok);
    if (!v.is_array()) return std::string(tok);
    std::string o = "[";
    bool first = true;
    for (auto& x : v.as_array()) {
      if (!first) o += ", ";
      first = false;
      o += display_array(x, *t.elem);
    }
    return o + "]";
  }
  if (!tok.empty() && tok.front() == '"') return std::string(boost::json::parse(tok).as_string());
  return std::string(tok);
}

std::string data_type(const ColType& t) {
  switch (t.kind) {
    case Kind::String: return "text";
    case Kind::Decimal: return "decimal";
    case Kind::Char: return "char";
    case Kind::Varchar: return "varchar";
    case Kind::DateTime: return "datetime";
    case Kind::Array: return "array";
    default: return lower(t.sql());
  }
}

std::optional<std::string> num(int64_t v) { return std::to_string(v); }

std::string time_text(int64_t ms, const absl::TimeZone& tz) {
  if (ms <= 0) return "NULL";  // Doris' TimeUtils.longToTimeString for unset times
  return absl::FormatTime("%Y-%m-%d %H:%M:%S", absl::FromUnixMillis(ms), tz);
}

}  // namespace

ColType varchar_type() {
  ColType t;
  t.kind = Kind::Varchar;
  t.len = 65533;
  return t;
}
ColType bigint_type() {
  ColType t;
  t.kind = Kind::BigInt;
  return t;
}

mysql::Type mysql_type(const ColType& t) {
  switch (t.kind) {
    case Kind::Boolean:
    case Kind::TinyInt: return mysql::Type::Tiny;
    case Kind::SmallInt: return mysql::Type::Short;
    case Kind::Int: return mysql::Type::Long;
    case Kind::BigInt: return mysql::Type::LongLong;
    case Kind::Float: return mysql::Type::Float;
    case Kind::Double: return mysql::Type::Double;
    case Kind::Decimal: return mysql::Type::NewDecimal;
    case Kind::Date: return mysql::Type::Date;
    case Kind::DateTime: return mysql::Type::DateTime;
    case Kind::Json: return mysql::Type::Json;
    default: return mysql::Type::VarString;  // LARGEINT, strings, ARRAY: Doris sends them as text
  }
}

namespace {

// Stored key of a hidden sequence column back to its text: the integer types'
// memcomparable form (values.cpp put_i64); other types are not shown.
std::optional<std::string> hidden_seq_text(const std::string& key, const ColType& t) {
  if (key.size() != 9 || key[0] != '\x01') return std::nullopt;
  if (t.kind != Kind::TinyInt && t.kind != Kind::SmallInt && t.kind != Kind::Int && t.kind != Kind::BigInt)
    sqllex::fail("Unsupported statement type: __DORIS_SEQUENCE_COL__ of type " + t.sql() +
                 " (not emulated by doris-emulator's query port)");
  uint64_t u = 0;
  for (size_t i = 1; i < 9; ++i) u = (u << 8) | static_cast<unsigned char>(key[i]);
  return std::to_string(static_cast<int64_t>(u ^ (1ULL << 63)));
}

// A UNIQUE table's visible rows in key order plus Doris' hidden columns
// __DORIS_DELETE_SIGN__ (0 on every visible row) and, with a sequence column,
// __DORIS_SEQUENCE_COL__ (the mapped column's value, or the hidden one's).
Relation unique_relation(const Table& t, Relation r) {
  r.cols.push_back({"__DORIS_DELETE_SIGN__", *parse_type("TINYINT", nullptr), true});
  const bool seq = t.seq_col >= 0 || t.hidden_seq.has_value();
  if (seq)
    r.cols.push_back({"__DORIS_SEQUENCE_COL__", t.seq_col >= 0 ? t.cols[static_cast<size_t>(t.seq_col)].type : *t.hidden_seq,
                      true});
  std::vector<const std::pair<const std::string, StoredRow>*> v;
  for (auto& kv : t.unique_rows)
    if (!kv.second.deleted) v.push_back(&kv);
  std::sort(v.begin(), v.end(), [](auto* a, auto* b) { return a->first < b->first; });
  for (auto* kv : v) {
    auto parts = split_row_line(kv->second.line);
    std::vector<std::optional<std::string>> row;
    row.reserve(r.cols.size());
    for (size_t i = 0; i < t.cols.size(); ++i)
      row.push_back(i < parts.size() ? display(parts[i].second, t.cols[i].type) : std::nullopt);
    row.push_back("0");
    if (seq) row.push_back(t.seq_col >= 0 ? row[static_cast<size_t>(t.seq_col)] : hidden_seq_text(kv->second.seq, *t.hidden_seq));
    r.rows.push_back(std::move(row));
  }
  return r;
}

}  // namespace

Relation table_relation(const Engine& e, const std::string& db, const std::string& table) {
  auto dit = e.databases().find(db);
  if (db.empty()) sqllex::fail("No database selected");
  if (dit == e.databases().end()) sqllex::fail("Unknown database '" + db + "'");
  auto tit = dit->second->tables.find(table);
  if (tit == dit->second->tables.end())
    sqllex::fail("Table [" + table + "] does not exist in database [" + db + "].");
  const Table& t = *tit->second;
  Relation r;
  r.schema = db;
  r.table = t.name;
  for (auto& c : t.cols) r.cols.push_back({c.name, c.type});
  if (t.model == Model::Unique) return unique_relation(t, std::move(r));
  std::string lines = e.rows_jsonl(db, table).value_or("");
  size_t p = 0;
  while (p < lines.size()) {
    size_t nl = lines.find('\n', p);
    std::string_view line(lines.data() + p, nl - p);
    p = nl + 1;
    auto parts = split_row_line(line);
    std::vector<std::optional<std::string>> row;
    row.reserve(t.cols.size());
    for (size_t i = 0; i < t.cols.size(); ++i)
      row.push_back(i < parts.size() ? display(parts[i].second, t.cols[i].type) : std::nullopt);
    r.rows.push_back(std::move(row));
  }
  return r;
}

std::optional<Relation> information_schema(const Engine& e, const std::string& view) {
  const ColType vc = varchar_type(), bi = bigint_type();
  Relation r;
  r.schema = "information_schema";
  std::string v = lower(view);
  r.table = v;
  if (v == "schemata") {
    r.cols = {{"CATALOG_NAME", vc}, {"SCHEMA_NAME", vc}, {"DEFAULT_CHARACTER_SET_NAME", vc},
              {"DEFAULT_COLLATION_NAME", vc}, {"SQL_PATH", vc}};
    r.rows.push_back({"internal", "information_schema", "utf8", "utf8_general_ci", std::nullopt});
    for (auto& [n, d] : e.databases()) r.rows.push_back({"internal", n, "utf8", "utf8_general_ci", std::nullopt});
    return r;
  }
  if (v == "tables") {
    r.cols = {{"TABLE_CATALOG", vc}, {"TABLE_SCHEMA", vc}, {"TABLE_NAME", vc},  {"TABLE_TYPE", vc},
              {"ENGINE", vc},        {"TABLE_ROWS", bi},   {"CREATE_TIME", vc}, {"UPDATE_TIME", vc},
              {"TABLE_COMMENT", vc}};
    for (auto& [dn, d] : e.databases())
      for (auto& [tn, t] : d->tables)
        r.rows.push_back({"internal", dn, tn, "BASE TABLE", "Doris", num(t->visible_rows()), std::nullopt,
                          std::nullopt, ""});
    return r;
  }
  if (v == "columns") {
    r.cols = {{"TABLE_CATALOG", vc},     {"TABLE_SCHEMA", vc},      {"TABLE_NAME", vc},
              {"COLUMN_NAME", vc},       {"ORDINAL_POSITION", bi},  {"COLUMN_DEFAULT", vc},
              {"IS_NULLABLE", vc},       {"DATA_TYPE", vc},         {"CHARACTER_MAXIMUM_LENGTH", bi},
              {"NUMERIC_PRECISION", bi}, {"NUMERIC_SCALE", bi},     {"DATETIME_PRECISION", bi},
              {"COLUMN_TYPE", vc},       {"COLUMN_KEY", vc},        {"COLUMN_COMMENT", vc}};
    for (auto& [dn, d] : e.databases())
      for (auto& [tn, t] : d->tables) {
        int64_t pos = 0;
        for (auto& c : t->cols) {
          std::optional<std::string> def;
          if (c.def && *c.def != "null") def = display(*c.def, c.type);
          std::optional<std::string> len, prec, scale, dtp;
          if (c.type.kind == Kind::Char || c.type.kind == Kind::Varchar) len = num(c.type.len);
          if (c.type.kind == Kind::Decimal) {
            prec = num(c.type.precision);
            scale = num(c.type.scale);
          }
          if (c.type.kind == Kind::DateTime) dtp = num(c.type.frac);
          r.rows.push_back({"internal", dn, tn, c.name, num(++pos), def, c.nullable ? "YES" : "NO",
                            data_type(c.type), len, prec, scale, dtp, lower(c.type.sql()),
                            c.key ? (t->model == Model::Unique ? "UNI" : "DUP") : "", c.comment});
        }
      }
    return r;
  }
  return std::nullopt;
}

Relation transactions_relation(const Engine& e, const std::string& db, const std::string& zone) {
  const ColType vc = varchar_type(), bi = bigint_type();
  Relation r;
  r.cols = {{"TransactionId", bi}, {"Label", vc},       {"Coordinator", vc}, {"TransactionStatus", vc},
            {"LoadJobSourceType", vc}, {"PrepareTime", vc}, {"PreCommitTime", vc}, {"CommitTime", vc},
            {"PublishTime", vc},   {"FinishTime", vc},  {"Reason", vc},      {"ErrorReplicasCount", bi},
            {"ListenerId", bi},    {"TimeoutMs", bi},   {"ErrMsg", vc}};
  absl::TimeZone tz;
  if (!absl::LoadTimeZone(zone, &tz)) tz = absl::FixedTimeZone(8 * 3600);
  for (auto& [id, t] : e.transactions()) {
    if (t.db != db) continue;
    const bool done = t.state == TxnState::Committed || t.state == TxnState::Visible;
    const int64_t commit = done ? (t.finish_ms > 0 ? t.finish_ms : t.precommit_ms) : 0;
    const int64_t publish = t.state == TxnState::Visible ? commit : 0;
    r.rows.push_back({num(id), t.label, "BE: 127.0.0.1", to_string(t.state), "BACKEND_STREAMING",
                      time_text(t.begin_ms, tz), time_text(t.precommit_ms, tz), time_text(commit, tz),
                      time_text(publish, tz), time_text(t.finish_ms, tz), t.abort_reason, num(0), num(-1),
                      num(t.timeout_s * 1000), ""});
  }
  return r;
}

std::string create_table_text(const Table& t) {
  std::string o = "CREATE TABLE `" + t.name + "` (\n";
  for (size_t i = 0; i < t.cols.size(); ++i) {
    const Column& c = t.cols[i];
    o += "  `" + c.name + "` " + c.type.sql() + (c.nullable ? " NULL" : " NOT NULL");
    if (c.def) {
      auto d = display(*c.def, c.type);
      o += d ? " DEFAULT \"" + *d + "\"" : " DEFAULT NULL";
    }
    if (!c.comment.empty()) o += " COMMENT '" + c.comment + "'";
    o += i + 1 < t.cols.size() ? ",\n" : "\n";
  }
  std::string keys;
  for (auto& c : t.cols)
    if (c.key) keys += (keys.empty() ? "`" : ", `") + c.name + "`";
  o += ") ENGINE=OLAP\n";
  o += (t.model == Model::Unique ? "UNIQUE KEY(" : "DUPLICATE KEY(") + keys + ")\n";
  std::string first_key = keys.substr(0, keys.find(','));
  o += "DISTRIBUTED BY HASH(" + first_key + ") BUCKETS 1\nPROPERTIES (\n\"replication_allocation\" = \"tag.location.default: 1\"";
  for (auto& [k, v] : t.props) o += ",\n\"" + k + "\" = \"" + v + "\"";
  // Every UNIQUE table is merge-on-write here (docs/doris-emulator.md).
  bool mow_listed = false;
  for (auto& [k, v] : t.props) mow_listed = mow_listed || k == "enable_unique_key_merge_on_write";
  if (t.model == Model::Unique && !mow_listed) o += ",\n\"enable_unique_key_merge_on_write\" = \"true\"";
  o += "\n);";
  return o;
}

}  // namespace cdc2doris::emu::query
