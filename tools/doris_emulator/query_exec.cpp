#include "tools/doris_emulator/query_exec.hpp"

#include "tools/doris_emulator/datetime.hpp"
#include "tools/doris_emulator/query_rel.hpp"
#include "tools/doris_emulator/sql_lex.hpp"

#include <boost/json.hpp>

#include <algorithm>

namespace cdc2doris::emu {
namespace {

using namespace sqllex;
using query::Relation;

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool iequal(const std::string& a, const std::string& b) { return lower(a) == lower(b); }

// Session variables a Doris FE answers with (SessionVariable/GlobalVariable
// defaults); MySQL drivers read these while connecting.
const std::map<std::string, std::string>& default_vars() {
  static const std::map<std::string, std::string> v{
      {"auto_increment_increment", "1"},
      {"autocommit", "1"},
      {"character_set_client", "utf8mb4"},
      {"character_set_connection", "utf8mb4"},
      {"character_set_database", "utf8mb4"},
      {"character_set_results", "utf8mb4"},
      {"character_set_server", "utf8mb4"},
      {"collation_connection", "utf8mb4_0900_bin"},
      {"collation_database", "utf8mb4_0900_bin"},
      {"collation_server", "utf8mb4_0900_bin"},
      {"have_query_cache", "YES"},
      {"init_connect", ""},
      {"interactive_timeout", "3600"},
      {"language", "/palo/share/english/"},
      {"license", "Apache License, Version 2.0"},
      {"lower_case_table_names", "0"},
      {"max_allowed_packet", "16777216"},
      {"net_buffer_length", "16384"},
      {"net_read_timeout", "600"},
      {"net_write_timeout", "600"},
      {"performance_schema", "0"},
      {"query_cache_size", "1048576"},
      {"query_cache_type", "0"},
      {"sql_auto_is_null", "0"},
      {"sql_mode", "ONLY_FULL_GROUP_BY"},
      {"sql_select_limit", "9223372036854775807"},
      {"system_time_zone", "UTC"},
      {"time_zone", "Asia/Shanghai"},
      {"transaction_isolation", "REPEATABLE-READ"},
      {"transaction_read_only", "0"},
      {"tx_isolation", "REPEATABLE-READ"},
      {"tx_read_only", "0"},
      {"version", "5.7.99"},
      {"version_comment", "Doris version doris-emulator (cdc2doris tests)"},
      {"wait_timeout", "28800"},
  };
  return v;
}

bool like(std::string_view s, std::string_view p, bool ci) {
  // '%' and '_' wildcards, '\' escapes; iterative with one backtrack point.
  size_t si = 0, pi = 0, star_p = std::string_view::npos, star_s = 0;
  auto eq = [ci](char a, char b) {
    return ci ? std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b)) : a == b;
  };
  while (si < s.size()) {
    if (pi < p.size() && p[pi] == '%') {
      star_p = pi++;
      star_s = si;
    } else if (pi < p.size() && (p[pi] == '_' || (p[pi] == '\\' && pi + 1 < p.size() ? eq(p[pi + 1], s[si]) : eq(p[pi], s[si])))) {
      pi += (p[pi] == '\\' && pi + 1 < p.size()) ? 2 : 1;
      ++si;
    } else if (star_p != std::string_view::npos) {
      pi = star_p + 1;
      si = ++star_s;
    } else {
      return false;
    }
  }
  while (pi < p.size() && p[pi] == '%') ++pi;
  return pi == p.size();
}

[[noreturn]] void unsupported(const std::string& what) {
  fail("Unsupported statement type: " + what + " (not emulated by doris-emulator's query port)");
}

// Memcomparable key of a value under a column type: typed comparison
// (numbers numerically, DECIMAL exactly, dates in time order). nullopt: the
// value does not convert (Doris compares NULL then: no match).
std::optional<std::string> key_of(const ColType& t, std::string_view text) {
  if (t.kind == Kind::Json || t.kind == Kind::Array) return std::string(text);
  InValue v{InValue::Str, text, false};
  std::string out, key, why;
  if (!convert(t, v, &out, &key, &why)) return std::nullopt;
  return key;
}

struct Literal {
  bool null = false;
  std::string text;
};

Literal literal(Parser& ps) {
  const Tok& k = ps.peek();
  if (k.t == Tok::Str || k.t == Tok::Num) {
    ++ps.p;
    return {false, k.s};
  }
  if (ps.accept("NULL")) return {true, ""};
  if (ps.accept("TRUE")) return {false, "1"};
  if (ps.accept("FALSE")) return {false, "0"};
  unsupported("expression near '" + k.s + "'");
}

// [qualifier.]*name
std::string column_ref(Parser& ps) {
  std::string n = ps.ident();
  while (ps.accept_p('.')) n = ps.ident();
  return n;
}

int col_of(const Relation& r, const std::string& name) {
  for (size_t i = 0; i < r.cols.size(); ++i)
    if (iequal(r.cols[i].name, name)) return static_cast<int>(i);
  fail("Unknown column '" + name + "' in 'table list'");
}

struct Pred {
  int col = 0;
  enum Op { Eq, Ne, Lt, Le, Gt, Ge, In, NotIn, Like, NotLike, IsNull, NotNull } op = Eq;
  std::vector<Literal> vals;
  std::vector<std::optional<std::string>> keys;  // literal keys under the column type
};

std::vector<Pred> parse_where(Parser& ps, const Relation& r) {
  std::vector<Pred> preds;
  do {
    if (ps.punct('(')) unsupported("parenthesised conditions");
    Pred p;
    p.col = col_of(r, column_ref(ps));
    if (ps.accept("IS")) {
      bool neg = ps.accept("NOT");
      ps.expect("NULL");
      p.op = neg ? Pred::NotNull : Pred::IsNull;
    } else if (ps.accept("NOT")) {
      if (ps.accept("IN")) p.op = Pred::NotIn;
      else if (ps.accept("LIKE")) p.op = Pred::NotLike;
      else unsupported("NOT near '" + ps.peek().s + "'");
    } else if (ps.accept("IN")) {
      p.op = Pred::In;
    } else if (ps.accept("LIKE")) {
      p.op = Pred::Like;
    } else if (ps.accept_p('=')) {
      p.op = Pred::Eq;
    } else if (ps.accept_p('!')) {
      ps.expect_p('=');
      p.op = Pred::Ne;
    } else if (ps.accept_p('<')) {
      p.op = ps.accept_p('=') ? Pred::Le : ps.accept_p('>') ? Pred::Ne : Pred::Lt;
    } else if (ps.accept_p('>')) {
      p.op = ps.accept_p('=') ? Pred::Ge : Pred::Gt;
    } else {
      unsupported("condition operator near '" + ps.peek().s + "'");
    }
    if (p.op == Pred::In || p.op == Pred::NotIn) {
      ps.expect_p('(');
      do p.vals.push_back(literal(ps));
      while (ps.accept_p(','));
      ps.expect_p(')');
    } else if (p.op != Pred::IsNull && p.op != Pred::NotNull) {
      p.vals.push_back(literal(ps));
    }
    for (auto& v : p.vals)
      p.keys.push_back(v.null ? std::nullopt : key_of(r.cols[static_cast<size_t>(p.col)].type, v.text));
    preds.push_back(std::move(p));
    if (ps.kw("OR")) unsupported("OR");
  } while (ps.accept("AND"));
  return preds;
}

bool matches(const Pred& p, const Relation& r, const std::vector<std::optional<std::string>>& row) {
  const auto& v = row[static_cast<size_t>(p.col)];
  if (p.op == Pred::IsNull) return !v;
  if (p.op == Pred::NotNull) return v.has_value();
  if (!v) return false;
  if (p.op == Pred::Like || p.op == Pred::NotLike) {
    if (p.vals[0].null) return false;
    return like(*v, p.vals[0].text, false) == (p.op == Pred::Like);
  }
  auto k = key_of(r.cols[static_cast<size_t>(p.col)].type, *v);
  if (!k) return false;
  if (p.op == Pred::In || p.op == Pred::NotIn) {
    bool any_null = false;
    for (auto& lk : p.keys) {
      if (!lk) { any_null = true; continue; }
      if (*lk == *k) return p.op == Pred::In;
    }
    return p.op == Pred::NotIn && !any_null;
  }
  if (!p.keys[0]) return false;
  int c = k->compare(*p.keys[0]);
  switch (p.op) {
    case Pred::Eq: return c == 0;
    case Pred::Ne: return c != 0;
    case Pred::Lt: return c < 0;
    case Pred::Le: return c <= 0;
    case Pred::Gt: return c > 0;
    case Pred::Ge: return c >= 0;
    default: return false;
  }
}

void filter_rows(Relation* r, const std::vector<Pred>& preds) {
  std::vector<std::vector<std::optional<std::string>>> kept;
  for (auto& row : r->rows) {
    bool ok = true;
    for (auto& p : preds) ok = ok && matches(p, *r, row);
    if (ok) kept.push_back(std::move(row));
  }
  r->rows = std::move(kept);
}

QueryResult to_result(const Relation& r) {
  QueryResult q;
  q.has_rows = true;
  // BOOLEAN is a TINY of display length 1, as Doris describes it, so JDBC
  // (tinyInt1isBit) reads true/false as in Doris' regression .out files.
  for (auto& c : r.cols)
    q.cols.push_back({c.name, query::mysql_type(c.type), r.table, r.schema, c.type.kind == Kind::Boolean ? 1u : 0u});
  q.rows = r.rows;
  return q;
}

// Runs "[WHERE ...] [ORDER BY ...] [LIMIT ...]" then projects `items` over `r`.
struct SelectItem {
  bool star = false, count = false;
  std::string col, label;
};

QueryResult select_from(Relation r, Parser& ps, const std::vector<SelectItem>& items) {
  if (ps.accept("WHERE")) filter_rows(&r, parse_where(ps, r));
  if (ps.kw("GROUP") || ps.kw("HAVING") || ps.kw("JOIN") || ps.kw("UNION") || ps.punct(','))
    unsupported("'" + ps.peek().s + "'");
  std::vector<std::pair<int, bool>> order;  // column, descending
  if (ps.accept("ORDER")) {
    ps.expect("BY");
    do {
      int c;
      if (ps.peek().t == Tok::Num) {
        int pos = std::stoi(ps.peek().s);
        ++ps.p;
        if (pos < 1 || pos > static_cast<int>(items.size()) || items[static_cast<size_t>(pos - 1)].star ||
            items[static_cast<size_t>(pos - 1)].count)
          unsupported("ORDER BY position " + std::to_string(pos));
        c = col_of(r, items[static_cast<size_t>(pos - 1)].col);
      } else {
        c = col_of(r, column_ref(ps));
      }
      bool desc = ps.accept("DESC");
      if (!desc) ps.accept("ASC");
      order.emplace_back(c, desc);
    } while (ps.accept_p(','));
  }
  int64_t limit = -1, offset = 0;
  if (ps.accept("LIMIT")) {
    auto number = [&]() {
      if (ps.peek().t != Tok::Num) fail("Syntax error: LIMIT needs a number near '" + ps.peek().s + "'");
      int64_t v = std::stoll(ps.peek().s);
      ++ps.p;
      return v;
    };
    limit = number();
    if (ps.accept_p(',')) {
      offset = limit;
      limit = number();
    } else if (ps.accept("OFFSET")) {
      offset = number();
    }
  }
  if (!ps.at_end()) unsupported("'" + ps.peek().s + "'");
  if (!order.empty()) {
    std::vector<std::vector<std::optional<std::string>>> keys(r.rows.size());
    for (size_t i = 0; i < r.rows.size(); ++i)
      for (auto& [c, d] : order) {
        const auto& v = r.rows[i][static_cast<size_t>(c)];
        keys[i].push_back(v ? key_of(r.cols[static_cast<size_t>(c)].type, *v) : std::nullopt);
      }
    std::vector<size_t> idx(r.rows.size());
    for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
    std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) {
      for (size_t k = 0; k < order.size(); ++k) {
        const auto &x = keys[a][k], &y = keys[b][k];
        if (x == y) continue;
        bool lt = !x || (y && *x < *y);  // NULL first ascending, as Doris sorts
        return order[k].second ? !lt : lt;
      }
      return false;
    });
    std::vector<std::vector<std::optional<std::string>>> sorted;
    for (size_t i : idx) sorted.push_back(std::move(r.rows[i]));
    r.rows = std::move(sorted);
  }
  const bool counting = items.size() == 1 && items[0].count;
  for (auto& it : items)
    if (it.count && !counting) unsupported("COUNT(*) next to other columns (needs GROUP BY)");
  if (counting) {
    int64_t n = static_cast<int64_t>(r.rows.size());
    Relation c;
    c.cols = {{items[0].label, query::bigint_type()}};
    c.rows.push_back({std::to_string(n)});
    r = std::move(c);
  } else {
    Relation p;
    p.schema = r.schema;
    p.table = r.table;
    std::vector<int> src;
    for (auto& it : items) {
      if (it.star) {
        for (size_t i = 0; i < r.cols.size(); ++i) {
          if (r.cols[i].hidden) continue;
          p.cols.push_back(r.cols[i]);
          src.push_back(static_cast<int>(i));
        }
        continue;
      }
      int c = col_of(r, it.col);
      p.cols.push_back({it.label, r.cols[static_cast<size_t>(c)].type});
      src.push_back(c);
    }
    for (auto& row : r.rows) {
      std::vector<std::optional<std::string>> out;
      for (int c : src) out.push_back(row[static_cast<size_t>(c)]);
      p.rows.push_back(std::move(out));
    }
    r = std::move(p);
  }
  int64_t n = static_cast<int64_t>(r.rows.size());
  int64_t b = std::min(offset, n), e = limit < 0 ? n : std::min(n, b + limit);
  r.rows = std::vector<std::vector<std::optional<std::string>>>(r.rows.begin() + b, r.rows.begin() + e);
  return to_result(r);
}

// Converts the HTTP SQL endpoint's JSON result set (sql.cpp) to a result.
QueryResult from_http_json(const std::string& body) {
  auto v = boost::json::parse(body).as_object();
  if (v.at("code").as_int64() != 0) {
    std::string msg(v.at("data").as_string());
    const std::string prefix = "Failed to execute sql: ";
    if (msg.rfind(prefix, 0) == 0) msg = msg.substr(prefix.size());
    QueryResult q;
    q.error = true;
    q.code = msg.find("Unknown database") != std::string::npos ? 1049 : 1105;
    q.sqlstate = q.code == 1049 ? "42000" : "HY000";
    q.message = msg;
    return q;
  }
  auto& data = v.at("data").as_object();
  if (data.at("type").as_string() != "result_set") return QueryResult::ok();
  QueryResult q;
  q.has_rows = true;
  for (auto& m : data.at("meta").as_array())
    q.cols.push_back({std::string(m.as_object().at("name").as_string()), mysql::Type::VarString, "", ""});
  for (auto& row : data.at("data").as_array()) {
    std::vector<std::optional<std::string>> out;
    for (auto& x : row.as_array()) {
      if (x.is_null()) out.emplace_back();
      else if (x.is_string()) out.emplace_back(std::string(x.as_string()));
      else out.emplace_back(boost::json::serialize(x));
    }
    q.rows.push_back(std::move(out));
  }
  return q;
}

}  // namespace

QueryResult QueryResult::ok(uint64_t affected) {
  QueryResult q;
  q.affected = affected;
  return q;
}

QueryResult QueryResult::fail(const std::string& msg, uint16_t code, const std::string& sqlstate) {
  QueryResult q;
  q.error = true;
  q.code = code;
  q.sqlstate = sqlstate;
  q.message = "errCode = 2, detailMessage = " + msg;
  return q;
}

QuerySession::QuerySession(Engine& e, std::string user, std::string client_host, uint32_t conn_id)
    : e_(e), user_(std::move(user)), host_(std::move(client_host)), conn_id_(conn_id) {}

std::optional<std::string> QuerySession::variable(const std::string& name) const {
  std::string n = lower(name);
  if (auto it = vars_.find(n); it != vars_.end()) return it->second;
  if (auto it = default_vars().find(n); it != default_vars().end()) return it->second;
  return std::nullopt;
}

QueryResult QuerySession::use(const std::string& db) {
  if (!e_.databases().count(db)) return QueryResult::fail("Unknown database '" + db + "'", 1049, "42000");
  db_ = db;
  return QueryResult::ok();
}

QueryResult QuerySession::field_list(const std::string& table) {
  try {
    Relation r = query::table_relation(e_, db_, table);
    QueryResult q = to_result(r);
    q.rows.clear();
    return q;
  } catch (const std::exception& ex) {
    QueryResult q = QueryResult::fail("");
    q.message = ex.what();
    return q;
  }
}

QueryResult QuerySession::run(const std::string& sql) {
  try {
    Engine::ActingAs as(e_, user_, host_);
    return run_inner(sql);
  } catch (const std::exception& ex) {
    QueryResult q = QueryResult::fail("");
    q.message = ex.what();
    if (q.message.find("Unknown database") != std::string::npos) {
      q.code = 1049;
      q.sqlstate = "42000";
    }
    return q;
  }
}

QueryResult QuerySession::run_inner(const std::string& sql) {
  Parser ps{tokenize(sql)};
  if (ps.at_end()) return QueryResult::fail("Empty statement", 1065, "42000");
  if (ps.accept("SET")) {
    // SET [SESSION|GLOBAL|LOCAL] x = v, @@session.x = v, NAMES ..., CHARACTER SET ...
    do {
      bool global = ps.accept("GLOBAL");
      if (!global && !ps.accept("SESSION")) ps.accept("LOCAL");
      if (ps.accept("NAMES") || (ps.kw("CHARACTER") && ps.kw("SET", 1))) {
        if (ps.accept("CHARACTER")) ps.expect("SET");
        while (!ps.at_end() && !ps.punct(',')) ++ps.p;
        continue;
      }
      while (ps.accept_p('@')) {}
      std::string name = ps.ident();
      if (ps.accept_p('.')) {
        global = global || iequal(name, "global");
        name = ps.ident();
      }
      if (ps.accept_p(':')) {}
      ps.expect_p('=');
      std::string value;
      while (!ps.at_end() && !ps.punct(',')) value += ps.peek().s, ++ps.p;
      if (iequal(name, "time_zone")) {
        // fe TimeUtils.checkTimeZoneValidAndStandardize refuses unknown zones.
        if (!find_zone(value)) fail("Unknown or incorrect time zone: '" + value + "'");
        if (global) e_.set_global_time_zone(value);
      }
      vars_[lower(name)] = value;
    } while (ps.accept_p(','));
    return QueryResult::ok();
  }
  // UNSET [GLOBAL|SESSION] VARIABLE x | ALL: back to the default value.
  if (ps.accept("UNSET")) {
    bool global = ps.accept("GLOBAL");
    if (!global) ps.accept("SESSION");
    ps.expect("VARIABLE");
    std::string name = lower(ps.ident());
    if (name == "time_zone" || name == "all") {
      if (global) e_.set_global_time_zone("Asia/Shanghai");
      vars_.erase("time_zone");
    }
    if (name == "all") vars_.clear();
    else vars_.erase(name);
    return QueryResult::ok();
  }
  if (ps.accept("USE")) return use(ps.ident());
  if (ps.accept("COMMIT") || ps.accept("ROLLBACK")) return QueryResult::ok();
  // SYNC makes a follower FE catch up with the master's journal (fe SyncStmt);
  // the emulator has one FE, so it is a no-op as on a master.
  if (ps.accept("SYNC") && ps.at_end()) return QueryResult::ok();
  if (ps.kw("GRANT") || ps.kw("REVOKE") || ((ps.kw("CREATE") || ps.kw("DROP")) && ps.kw("USER", 1)) ||
      (ps.kw("SHOW") && (ps.kw("GRANTS", 1) || ps.kw("ALL", 1))))
    return from_http_json(e_.query(db_, sql, false));  // privileges.cpp
  if (ps.kw("CREATE") || ps.kw("DROP") || ps.kw("ALTER") || ps.kw("TRUNCATE")) {
    if (ps.kw("CREATE") && ps.kw("TABLE", 1) == false && ps.kw("DATABASE", 1) == false && ps.kw("SCHEMA", 1) == false)
      unsupported(ps.peek(1).s);
    e_.execute_sql(db_, sql);
    return QueryResult::ok();
  }
  if (ps.kw("DESC") || ps.kw("DESCRIBE")) return from_http_json(e_.query(db_, sql, false));
  if (ps.accept("SHOW")) {
    bool full = ps.accept("FULL");
    if (ps.kw("DATABASES") || ps.kw("SCHEMAS") || ps.kw("TABLES") || ps.kw("ALTER")) {
      QueryResult q = from_http_json(e_.query(db_, sql, false));
      if (full && !q.error) {
        q.cols.push_back({"Table_type", mysql::Type::VarString, "", ""});
        for (auto& row : q.rows) row.emplace_back("BASE TABLE");
      }
      return q;
    }
    if (!ps.accept("SESSION")) ps.accept("GLOBAL");
    if (ps.accept("VARIABLES")) {
      Relation r;
      r.cols = {{"Variable_name", query::varchar_type()}, {"Value", query::varchar_type()}};
      std::map<std::string, std::string> all = default_vars();
      for (auto& [k, v] : vars_) all[k] = v;
      for (auto& [k, v] : all) r.rows.push_back({k, v});
      std::vector<SelectItem> items{{true, false, "", ""}};
      if (ps.accept("LIKE")) {
        Literal pat = literal(ps);
        std::vector<std::vector<std::optional<std::string>>> kept;
        for (auto& row : r.rows)
          if (like(*row[0], pat.text, true)) kept.push_back(row);
        r.rows = std::move(kept);
      }
      return select_from(std::move(r), ps, items);
    }
    if (ps.accept("WARNINGS") || ps.accept("ERRORS")) {
      QueryResult q;
      q.has_rows = true;
      q.cols = {{"Level", mysql::Type::VarString, "", ""}, {"Code", mysql::Type::LongLong, "", ""},
                {"Message", mysql::Type::VarString, "", ""}};
      return q;
    }
    if (ps.accept("CREATE")) {
      ps.expect("TABLE");
      auto [db, name] = ps.qname(db_);
      const Table* t = nullptr;
      if (auto d = e_.databases().find(db); d != e_.databases().end())
        if (auto it = d->second->tables.find(name); it != d->second->tables.end()) t = it->second.get();
      if (!t) query::table_relation(e_, db, name);  // throws Doris' error
      QueryResult q;
      q.has_rows = true;
      q.cols = {{"Table", mysql::Type::VarString, "", ""}, {"Create Table", mysql::Type::VarString, "", ""}};
      q.rows.push_back({t->name, query::create_table_text(*t)});
      return q;
    }
    if (ps.accept("TRANSACTION")) {
      std::string db = db_;
      if (ps.accept("FROM") || ps.accept("IN")) db = ps.ident();
      if (db.empty()) fail("No database selected");
      if (!e_.databases().count(db)) fail("Unknown database '" + db + "'");
      if (!ps.accept("WHERE")) fail("should specify a transaction id or label");
      std::string key = lower(ps.ident());
      Relation r = query::transactions_relation(e_, db, variable("time_zone").value_or("Asia/Shanghai"));
      int col = key == "id" ? 0 : key == "label" ? 1 : key == "status" ? 3 : -1;
      if (col < 0) fail("Where clause should looks like one of them: id = 123 or label = 'label' or status = 'prepare'");
      bool is_like = ps.accept("LIKE");
      if (!is_like) ps.expect_p('=');
      Literal v = literal(ps);
      if (!ps.at_end()) unsupported("'" + ps.peek().s + "'");
      std::vector<std::vector<std::optional<std::string>>> kept;
      for (auto& row : r.rows) {
        const std::string& cell = *row[static_cast<size_t>(col)];
        bool ok = is_like ? like(cell, v.text, false) : col == 3 ? iequal(cell, v.text) : cell == v.text;
        if (ok) kept.push_back(row);
      }
      if (col == 0 && kept.empty()) fail("transaction with id " + v.text + " does not exist");
      r.rows = std::move(kept);
      return to_result(r);
    }
    unsupported("SHOW " + ps.peek().s);
  }
  if (!ps.accept("SELECT")) unsupported(ps.peek().s);
  // The select list; FROM decides whether it names columns or constants.
  size_t list_start = ps.p;
  int depth = 0;
  while (!ps.at_end() && !(depth == 0 && ps.kw("FROM"))) {
    if (ps.punct('(')) ++depth;
    if (ps.punct(')')) --depth;
    ++ps.p;
  }
  const bool has_from = ps.kw("FROM");
  ps.p = list_start;
  if (!has_from) {
    QueryResult q;
    q.has_rows = true;
    std::vector<std::optional<std::string>> row;
    do {
      size_t start = ps.p;
      std::optional<std::string> val;
      mysql::Type type = mysql::Type::VarString;
      if (ps.punct('@') && ps.punct('@', 1)) {
        ps.p += 2;
        std::string name = ps.ident();
        if (ps.accept_p('.')) name = ps.ident();
        val = variable(name);
        if (!val) fail("Unknown system variable '" + name + "'");
        bool numeric = !val->empty() && std::all_of(val->begin(), val->end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
        if (numeric) type = mysql::Type::LongLong;
      } else if (ps.peek().t == Tok::Ident && ps.punct('(', 1)) {
        std::string f = upper(ps.ident());
        ps.expect_p('(');
        ps.expect_p(')');
        if (f == "DATABASE" || f == "SCHEMA") {
          if (!db_.empty()) val = db_;
        } else if (f == "USER" || f == "CURRENT_USER" || f == "SESSION_USER") {
          val = "'" + user_ + "'@'" + host_ + "'";
        } else if (f == "VERSION") {
          val = variable("version");
        } else if (f == "CONNECTION_ID") {
          val = std::to_string(conn_id_);
          type = mysql::Type::LongLong;
        } else if (f == "LAST_INSERT_ID") {
          val = "0";
          type = mysql::Type::LongLong;
        } else {
          unsupported("function " + f + "()");
        }
      } else {
        Literal l = literal(ps);
        if (!l.null) val = l.text;
        if (ps.t[start].t == Tok::Num) type = mysql::Type::LongLong;
      }
      std::string label;
      for (size_t i = start; i < ps.p; ++i) label += ps.t[i].t == Tok::Str ? "'" + ps.t[i].s + "'" : ps.t[i].s;
      if (ps.accept("AS")) label = ps.ident();
      else if (ps.peek().t == Tok::Ident && !ps.kw("LIMIT")) label = ps.ident();
      else if (ps.peek().t == Tok::QIdent || ps.peek().t == Tok::Str) label = ps.peek().s, ++ps.p;
      q.cols.push_back({label, type, "", ""});
      row.push_back(val);
    } while (ps.accept_p(','));
    q.rows.push_back(std::move(row));
    if (ps.accept("LIMIT")) {
      if (ps.peek().t == Tok::Num && std::stoll(ps.peek().s) == 0) q.rows.clear();
      ++ps.p;
    }
    if (!ps.at_end()) unsupported("'" + ps.peek().s + "'");
    return q;
  }
  std::vector<SelectItem> items;
  do {
    SelectItem it;
    if (ps.accept_p('*')) {
      it.star = true;
    } else if (ps.kw("COUNT") && ps.punct('(', 1)) {
      ps.p += 2;
      // count(*), count(1) and count() (Doris accepts the empty form as count(*)).
      if (!ps.punct(')') && !ps.accept_p('*') && !(ps.peek().t == Tok::Num && ps.peek().s == "1" && (++ps.p, true)))
        unsupported("COUNT of an expression");
      ps.expect_p(')');
      it.count = true;
      it.label = "count(*)";
    } else if (ps.kw("DISTINCT") || ps.punct('(', 1)) {
      unsupported("'" + ps.peek().s + "'");
    } else {
      it.col = column_ref(ps);
      it.label = it.col;
      if (ps.punct('.') && ps.punct('*', 1)) unsupported("qualified *");
    }
    if (!it.star) {
      if (ps.accept("AS")) it.label = ps.ident();
      else if ((ps.peek().t == Tok::Ident && !ps.kw("FROM")) || ps.peek().t == Tok::QIdent) it.label = ps.ident();
    }
    items.push_back(std::move(it));
  } while (ps.accept_p(','));
  ps.expect("FROM");
  auto [db, table] = ps.qname(db_);
  if (ps.accept_p('.')) unsupported("catalog-qualified table names");
  if (ps.accept("AS")) ps.ident();
  else if (ps.peek().t == Tok::Ident && !ps.kw("WHERE") && !ps.kw("ORDER") && !ps.kw("LIMIT") && !ps.kw("GROUP") &&
           !ps.kw("JOIN") && !ps.kw("UNION"))
    ps.ident();
  Relation r;
  if (iequal(db, "information_schema")) {
    auto v = query::information_schema(e_, table);
    if (!v) unsupported("information_schema." + table);
    r = std::move(*v);
  } else {
    r = query::table_relation(e_, db, table);
  }
  return select_from(std::move(r), ps, items);
}

}  // namespace cdc2doris::emu
