// The SQL subset a CDC loader and its tests need (issue 3 §1), executed
// against the emulator catalog. Errors are thrown as std::runtime_error with
// Doris' UserException text ("errCode = 2, detailMessage = ...").
#include "tools/doris_emulator/engine.hpp"
#include "tools/doris_emulator/engine_internal.hpp"
#include "tools/doris_emulator/query_rel.hpp"
#include "tools/doris_emulator/sql_lex.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <stdexcept>

namespace cdc2doris::emu {
namespace {

using namespace sqllex;

std::string literal_token(const Tok& k, const ColType& type) {
  // Default values are stored as the canonical JSON token of the column type.
  InValue v;
  v.tag = k.t == Tok::Str ? InValue::Str : InValue::Num;
  v.text = k.s;
  std::string out, why;
  if (!convert(type, v, &out, nullptr, &why)) fail("Invalid default value for '" + k.s + "': " + why);
  return out;
}

Column parse_coldef(Parser& ps) {
  Column c;
  c.name = ps.ident();
  // fe FeNameFormat.checkColumnName: __DORIS_* names belong to hidden columns
  // (delete sign, sequence, version, skip bitmap).
  if (upper(c.name).rfind("__DORIS_", 0) == 0)
    fail("Disable to create table column with name start with __DORIS_: " + c.name);
  std::string type = ps.ident();
  // "(p,s)" and "<element type>" (ARRAY<DECIMAL(10,2)>), nested.
  if (ps.punct('(') || ps.punct('<')) {
    int depth = 0;
    do {
      if (ps.peek().t == Tok::End) fail("Syntax error in type of column " + c.name);
      if (ps.punct('(') || ps.punct('<')) ++depth;
      else if (ps.punct(')') || ps.punct('>')) --depth;
      type += ps.peek().s;
      ++ps.p;
    } while (depth > 0);
  }
  std::string err;
  auto ct = parse_type(type, &err);
  if (!ct) fail(err);
  c.type = *ct;
  for (;;) {
    if (ps.accept("NOT")) { ps.expect("NULL"); c.nullable = false; }
    else if (ps.accept("NULL")) c.nullable = true;
    else if (ps.accept("DEFAULT")) {
      if (ps.accept("NULL")) c.def = "null";
      else if (ps.kw("CURRENT_TIMESTAMP") || ps.kw("CURRENT_DATE")) {
        // fe ColumnDef.DefaultValue: CURRENT_TIMESTAMP (DATETIME) and
        // CURRENT_DATE (DATE) are evaluated when a row is loaded.
        std::string fn = upper(ps.peek().s);
        ++ps.p;
        if (ps.punct('(')) ps.skip_parens();
        c.def = "\"" + fn + "\"";
        c.def_now = true;
      } else {
        c.def = literal_token(ps.peek(), c.type);
        ++ps.p;
      }
    } else if (ps.accept("COMMENT")) {
      c.comment = ps.peek().s;
      ++ps.p;
    } else if (ps.accept("AUTO_INCREMENT")) {
      if (ps.punct('(')) ps.skip_parens();
    } else if (ps.accept("KEY")) c.key = true;
    else if (ps.kw("REPLACE") || ps.kw("SUM") || ps.kw("MAX") || ps.kw("MIN") || ps.kw("REPLACE_IF_NOT_NULL")) ++ps.p;
    else break;
  }
  return c;
}

void reorder_keys(Table& t, const std::vector<std::string>& keys) {
  for (auto& c : t.cols) c.key = false;
  for (size_t i = 0; i < keys.size(); ++i) {
    int idx = t.col_index(keys[i]);
    if (idx < 0) fail("Key column[" + keys[i] + "] doesn't exist.");
    // Doris requires key columns to be the leading columns, in order.
    if (idx != static_cast<int>(i)) fail("Key columns should be a ordered prefix of the schema. KeyColumns[" +
                                         std::to_string(i) + "] (starts from zero) is " + keys[i] +
                                         ", but corresponding column is " + t.cols[i].name + " in the previous columns declaration.");
    t.cols[i].key = true;
  }
}

// Rewrites one stored JSON line from old_cols to t.cols (matched by column id,
// or by name when old_cols is empty). only_present: a partial-update row, whose
// missing columns must stay missing (they come from the stored row later).
std::string migrate_line(const std::string& line, const std::vector<Column>& old_cols, const Table& t,
                         bool only_present = false) {
  boost::system::error_code ec;
  auto v = boost::json::parse(line, ec);
  if (ec || !v.is_object()) return line;
  auto& obj = v.as_object();
  std::string out = "{";
  for (size_t i = 0; i < t.cols.size(); ++i) {
    const Column& c = t.cols[i];
    const boost::json::value* val = nullptr;
    if (old_cols.empty()) val = obj.if_contains(c.name);
    else
      for (auto& oc : old_cols)
        if (oc.id == c.id) val = obj.if_contains(oc.name);
    if (!val && only_present) continue;
    if (out.size() > 1) out += ',';
    append_json_string(&out, c.name);
    out += ':';
    if (!val) {
      out += c.def ? *c.def : "null";
      continue;
    }
    if (val->is_null()) { out += "null"; continue; }
    std::string raw = val->is_string() ? std::string(val->as_string()) : boost::json::serialize(*val);
    InValue in;
    in.tag = val->is_string() ? InValue::Str : val->is_bool() ? InValue::Bool : (val->is_object() || val->is_array()) ? InValue::Raw : InValue::Num;
    in.b = val->is_bool() && val->as_bool();
    in.text = raw;
    std::string tok, why;
    out += convert(c.type, in, &tok, nullptr, &why) ? tok : std::string("null");
  }
  return out + "}";
}

// Which MODIFY COLUMN type changes Doris accepts: fe ColumnType.schemaChangeMatrix
// (integers to wider integers, floats and strings; FLOAT to DOUBLE; strings
// to numbers, DATE and JSON; DECIMAL to DECIMAL and strings; DATE <->
// DATETIME) and Column.checkSchemaChangeAllowed (no shorter strings, no
// narrower string for a number, nullability and default unchanged).
void check_modify(const Column& from, const Column& to) {
  const ColType& a = from.type;
  const ColType& b = to.type;
  auto is_int = [](Kind k) {
    return k == Kind::TinyInt || k == Kind::SmallInt || k == Kind::Int || k == Kind::BigInt || k == Kind::LargeInt;
  };
  auto rank = [](Kind k) {
    switch (k) {
      case Kind::TinyInt: return 1;
      case Kind::SmallInt: return 2;
      case Kind::Int: return 3;
      case Kind::BigInt: return 4;
      case Kind::LargeInt: return 5;
      default: return 0;
    }
  };
  auto is_str = [](Kind k) { return k == Kind::Varchar || k == Kind::String; };
  bool allowed = a.kind == b.kind;
  if (is_int(a.kind) && is_int(b.kind)) allowed = rank(b.kind) >= rank(a.kind);
  if (is_int(a.kind) && (b.kind == Kind::Float || b.kind == Kind::Double || is_str(b.kind))) allowed = true;
  if (a.kind == Kind::Int && b.kind == Kind::Date) allowed = true;
  if (a.kind == Kind::Float && (b.kind == Kind::Double || is_str(b.kind))) allowed = true;
  if (a.kind == Kind::Double && is_str(b.kind)) allowed = true;
  if (a.kind == Kind::Varchar &&
      (is_int(b.kind) || b.kind == Kind::Float || b.kind == Kind::Double || b.kind == Kind::Date || is_str(b.kind) ||
       b.kind == Kind::Json))
    allowed = true;
  if (a.kind == Kind::Char && (is_int(b.kind) || b.kind == Kind::Float || b.kind == Kind::Double ||
                               b.kind == Kind::Date || b.kind == Kind::Varchar || b.kind == Kind::String))
    allowed = true;
  if (a.kind == Kind::String && b.kind == Kind::Json) allowed = true;
  if (a.kind == Kind::Json && is_str(b.kind)) allowed = true;
  if (a.kind == Kind::Decimal && (b.kind == Kind::Decimal || is_str(b.kind))) allowed = true;
  if ((a.kind == Kind::Date || a.kind == Kind::DateTime) && (b.kind == Kind::Date || b.kind == Kind::DateTime))
    allowed = true;
  if (!allowed) fail("Can not change " + a.schema_name() + " to " + b.schema_name());
  if ((is_int(a.kind) || a.kind == Kind::Float || a.kind == Kind::Double) && b.kind == Kind::Varchar) {
    // getColumnStringRepSize: the longest text of a value of the type.
    const int need = a.kind == Kind::TinyInt ? 4 : a.kind == Kind::SmallInt ? 6 : a.kind == Kind::Int ? 11
                     : a.kind == Kind::BigInt ? 20 : a.kind == Kind::LargeInt ? 40 : 24;
    auto low = [](std::string v) {
      for (auto& ch : v) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      return v;
    };
    if (b.len < need) fail("Can not change from wider type " + low(a.sql()) + " to narrower type " + low(b.sql()));
  }
  if (from.nullable && !to.nullable) fail("Can not change from nullable to non-nullable");
  if (from.def != to.def) fail("Can not change default value");
  if ((a.kind == Kind::Varchar || a.kind == Kind::Char) && (b.kind == Kind::Varchar || b.kind == Kind::Char) &&
      a.len > b.len)
    fail("Cannot shorten string length");
}

boost::json::object exec_status() {
  return boost::json::object{{"type", "exec_status"}, {"status", boost::json::object{}}, {"time", 0}};
}

}  // namespace

void Engine::migrate_rows(Table& t, const std::vector<Column>& old_cols, std::vector<StagedRow>& rows) {
  for (auto& r : rows)
    if (!r.line.empty()) r.line = migrate_line(r.line, old_cols, t, r.partial);
}

void Engine::execute_sql(const std::string& db, const std::string& stmt) {
  std::string ignored;
  exec_sql_inner(db, stmt, &ignored, false);
}

std::string Engine::query(const std::string& db, const std::string& stmt, bool streaming) {
  std::string result;
  // fe StatementSubmitter runs the statement on a JDBC connection to the
  // URL's database (jdbc:mariadb://127.0.0.1:{query_port}/{db}): an unknown
  // one fails the connect, whatever the statement, CREATE DATABASE included.
  if (!db.empty() && find_db(db) == nullptr && !detail::iequals(db, "information_schema"))
    return boost::json::serialize(boost::json::object{
        {"msg", "Error"},
        {"code", 1},
        {"data", "Failed to execute sql: java.sql.SQLSyntaxErrorException: (conn=1) Unknown database '" + db + "'"},
        {"count", 0}});
  try {
    exec_sql_inner(db, stmt, &result, false);
  } catch (const std::exception& e) {
    return boost::json::serialize(boost::json::object{
        {"msg", "Error"}, {"code", 1}, {"data", std::string("Failed to execute sql: ") + e.what()}, {"count", 0}});
  }
  boost::json::value data = boost::json::parse(result);
  if (streaming) return boost::json::serialize(boost::json::object{{"data", data}, {"msg", "success"}, {"code", 0}});
  return boost::json::serialize(boost::json::object{{"msg", "success"}, {"code", 0}, {"data", data}, {"count", 0}});
}

void Engine::exec_sql_inner(const std::string& cur_db, const std::string& stmt, std::string* result, bool replaying) {
  if (!replaying) {
    *result = boost::json::serialize(exec_status());
    if (exec_account_sql(stmt, result)) return;
    check_ddl_priv(cur_db, stmt);
  }
  Parser ps{tokenize(stmt)};
  auto log_ddl = [&]() {
    if (replaying) return;
    std::string r = "D";
    auto put_s = [&](const std::string& s) {
      uint32_t n = static_cast<uint32_t>(s.size());
      for (int i = 0; i < 4; ++i) r.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
      r += s;
    };
    put_s(cur_db);
    put_s(stmt);
    wal_write(r, true);
  };
  auto need_db = [&](const std::string& name) -> Database& {
    if (name.empty()) fail("No database selected");
    auto* d = find_db(name);
    if (!d) fail("Unknown database '" + name + "'");
    return *d;
  };
  auto need_table = [&](const std::pair<std::string, std::string>& q) -> Table& {
    Database& d = need_db(q.first);
    auto it = d.tables.find(q.second);
    if (it == d.tables.end()) fail("Unknown table '" + q.second + "'");
    return *it->second;
  };
  auto result_set = [&](const std::vector<std::pair<std::string, std::string>>& meta,
                        const boost::json::array& rows) {
    boost::json::array m;
    for (auto& [n, t] : meta) m.push_back(boost::json::object{{"name", n}, {"type", t}});
    *result = boost::json::serialize(
        boost::json::object{{"type", "result_set"}, {"meta", m}, {"data", rows}, {"time", 0}});
  };
  *result = boost::json::serialize(exec_status());
  // ( "k" = "v", ... ) after PROPERTIES, for CREATE DATABASE and CREATE TABLE.
  auto properties = [&](std::vector<std::pair<std::string, std::string>>& into) {
    ps.expect_p('(');
    while (!ps.accept_p(')')) {
      if (ps.peek().t != Tok::Str) fail("Syntax error in PROPERTIES near '" + ps.peek().s + "'");
      std::string k = ps.peek().s;
      ++ps.p;
      ps.expect_p('=');
      into.emplace_back(std::move(k), ps.peek().s);
      ++ps.p;
      ps.accept_p(',');
    }
  };

  if (ps.accept("CREATE")) {
    if (ps.accept("DATABASE") || ps.accept("SCHEMA")) {
      bool ine = false;
      if (ps.accept("IF")) { ps.expect("NOT"); ps.expect("EXISTS"); ine = true; }
      std::string name = ps.ident();
      if (find_db(name)) {
        if (ine) return;
        fail("Can't create database '" + name + "'; database exists");
      }
      auto d = std::make_unique<Database>();
      d->id = next_db_id_++;
      d->name = name;
      if (ps.accept("PROPERTIES")) properties(d->props);
      dbs_[name] = std::move(d);
      log_ddl();
      return;
    }
    if (ps.accept("EXTERNAL")) fail("Unsupported statement type");
    ps.expect("TABLE");
    bool ine = false;
    if (ps.accept("IF")) { ps.expect("NOT"); ps.expect("EXISTS"); ine = true; }
    auto q = ps.qname(cur_db);
    Database& d = need_db(q.first);
    if (d.tables.count(q.second)) {
      if (ine) return;
      fail("Table '" + q.second + "' already exists");
    }
    auto t = std::make_unique<Table>();
    t->db = q.first;
    t->name = q.second;
    ps.expect_p('(');
    while (true) {
      if (ps.kw("INDEX")) {
        while (!ps.punct(',') && !ps.punct(')')) {
          if (ps.punct('(')) ps.skip_parens();
          else ++ps.p;
        }
      } else {
        Column c = parse_coldef(ps);
        if (t->col_index(c.name) >= 0) fail("Duplicate column name '" + c.name + "'");
        c.id = t->next_col_id++;
        t->cols.push_back(std::move(c));
      }
      // Doris' grammar (nereids DorisParser.g4 columnDefs/indexDefs) accepts a
      // trailing comma before the closing parenthesis.
      if (ps.accept_p(',') && !ps.punct(')')) continue;
      ps.expect_p(')');
      break;
    }
    std::vector<std::string> keys;
    bool have_model = false;
    while (!ps.at_end()) {
      if (ps.kw("UNIQUE") || ps.kw("DUPLICATE") || ps.kw("AGGREGATE")) {
        std::string m = upper(ps.ident());
        ps.expect("KEY");
        if (m == "AGGREGATE") fail("the emulator supports only UNIQUE KEY and DUPLICATE KEY tables");
        t->model = m == "UNIQUE" ? Model::Unique : Model::Duplicate;
        have_model = true;
        ps.expect_p('(');
        while (true) {
          keys.push_back(ps.ident());
          if (ps.accept_p(',')) continue;
          ps.expect_p(')');
          break;
        }
      } else if (ps.accept("PROPERTIES")) {
        properties(t->props);
      } else if (ps.punct('(')) {
        ps.skip_parens();
      } else {
        ++ps.p;
      }
    }
    if (!have_model) {
      // Doris picks leading columns as the DUPLICATE key; one is enough here.
      t->model = Model::Duplicate;
      if (!t->cols.empty()) keys.push_back(t->cols[0].name);
    }
    reorder_keys(*t, keys);
    for (auto& [k, v] : t->props) {
      if (k == "function_column.sequence_col") {
        if (t->model != Model::Unique) fail("Sequence column only support UNIQUE_KEYS");
        t->seq_col = t->col_index(v);
        if (t->seq_col < 0) fail("The sequence column '" + v + "' does not exist");
      } else if (k == "function_column.sequence_type") {
        if (t->model != Model::Unique) fail("Sequence column only support UNIQUE_KEYS");
        std::string err;
        auto ct = parse_type(v, &err);
        if (!ct) fail(err);
        t->hidden_seq = *ct;
      }
    }
    t->id = next_table_id_++;
    d.tables[q.second] = std::move(t);
    log_ddl();
    return;
  }
  if (ps.accept("DROP")) {
    if (ps.accept("DATABASE") || ps.accept("SCHEMA")) {
      bool ie = false;
      if (ps.accept("IF")) { ps.expect("EXISTS"); ie = true; }
      std::string name = ps.ident();
      if (!find_db(name)) {
        if (ie) return;
        fail("Can't drop database '" + name + "'; database doesn't exist");
      }
      dbs_.erase(name);
      log_ddl();
      return;
    }
    ps.expect("TABLE");
    bool ie = false;
    if (ps.accept("IF")) { ps.expect("EXISTS"); ie = true; }
    auto q = ps.qname(cur_db);
    Database& d = need_db(q.first);
    if (!d.tables.count(q.second)) {
      if (ie) return;
      fail("Unknown table '" + q.second + "'");
    }
    d.tables.erase(q.second);
    log_ddl();
    return;
  }
  if (ps.accept("TRUNCATE")) {
    ps.accept("TABLE");
    Table& t = need_table(ps.qname(cur_db));
    t.unique_rows.clear();
    t.dup_rows.clear();
    t.count_only_rows = 0;
    log_ddl();
    return;
  }
  if (ps.accept("ALTER")) {
    ps.expect("TABLE");
    Table& t = need_table(ps.qname(cur_db));
    // A heavy schema change (a type change) still running: OlapTable.checkNormalStateForAlter.
    if (!replaying && !applying_job_ &&
        (take_fault("schema_change_running", t.db, t.name, -1) || running_alter_job(t)))
      fail("Table[" + t.name + "]'s state(SCHEMA_CHANGE) is not NORMAL. Do not allow doing ALTER ops");
    std::vector<Column> old = t.cols;
    const int old_seq_col = t.seq_col;
    // Whether Doris runs this clause as a heavy job (alter_job.cpp).
    const bool light = light_schema_change(t);
    bool heavy = false;
    if (ps.accept("ADD")) {
      ps.accept("COLUMN");
      std::vector<Column> add;
      bool paren = ps.accept_p('(');
      do {
        add.push_back(parse_coldef(ps));
      } while (paren && ps.accept_p(','));
      if (paren) ps.expect_p(')');
      for (auto& c : add) {
        if (t.col_index(c.name) >= 0) fail("Can not add column which already exists in base table: " + c.name);
        if (!c.nullable && !c.def) fail("Can not add column which is not nullable and has no default value: " + c.name);
        c.id = t.next_col_id++;
        size_t pos = t.cols.size();
        if (!paren && ps.accept("AFTER")) {
          int a = t.col_index(ps.ident());
          if (a < 0) fail("Column does not exists: " + ps.t[ps.p - 1].s);
          pos = static_cast<size_t>(a) + 1;
        } else if (!paren && ps.accept("FIRST")) {
          pos = 0;
        } else if (c.key) {
          size_t k = 0;
          while (k < t.cols.size() && t.cols[k].key) ++k;
          pos = k;
        }
        if (c.key && t.model == Model::Unique) fail("the emulator does not support adding key columns to UNIQUE tables");
        heavy = heavy || !light || c.key;
        t.cols.insert(t.cols.begin() + static_cast<long>(pos), c);
      }
    } else if (ps.accept("DROP")) {
      ps.accept("COLUMN");
      std::string n = ps.ident();
      int i = t.col_index(n);
      if (i < 0) fail("Column does not exists: " + n);
      if (t.cols[static_cast<size_t>(i)].key) {
        if (t.model == Model::Unique) fail("Can not drop key column in Unique data model table");
        fail("Can not drop key column when table has value column with REPLACE aggregation method");
      }
      if (i == t.seq_col) fail("Can not drop sequence mapping column[" + n + "] in Unique data model table[" + t.name + "]");
      heavy = !light;
      t.cols.erase(t.cols.begin() + i);
      if (t.seq_col > i) --t.seq_col;
    } else if (ps.accept("RENAME")) {
      ps.expect("COLUMN");
      std::string from = ps.ident(), to = ps.ident();
      int i = t.col_index(from);
      if (i < 0) fail("Column[" + from + "] does not exists");
      if (t.col_index(to) >= 0) fail("Column name[" + to + "] is already used");
      t.cols[static_cast<size_t>(i)].name = to;
    } else if (ps.accept("MODIFY")) {
      ps.expect("COLUMN");
      Column c = parse_coldef(ps);
      int i = t.col_index(c.name);
      if (i < 0) fail("Column[" + c.name + "] does not exists");
      Column& cur = t.cols[static_cast<size_t>(i)];
      if (cur.key && cur.type.sql() != c.type.sql())
        fail("the emulator does not support changing the type of key column " + c.name);
      // MODIFY restates the column: unless the key is named again, Doris
      // reads it as a value column of a key column (the emulator keeps it).
      if (!cur.key) check_modify(cur, c);
      const bool changed = cur.type.sql() != c.type.sql() || cur.nullable != c.nullable || cur.def != c.def;
      const bool varchar_longer = cur.type.kind == Kind::Varchar && c.type.kind == Kind::Varchar;
      heavy = changed && !(light && varchar_longer);
      c.id = cur.id;
      c.key = cur.key;
      cur = c;
    } else if (ps.accept("ENABLE")) {
      // fe SchemaChangeHandler (ENABLE FEATURE): adds the skip-bitmap hidden column.
      ps.expect("FEATURE");
      std::string f = upper(ps.peek().s);
      ++ps.p;
      if (f != "UPDATE_FLEXIBLE_COLUMNS") fail("Unsupported ALTER TABLE clause: ENABLE FEATURE " + f);
      auto prop = [&](const char* k) -> const std::string* {
        for (auto& [pk, pv] : t.props)
          if (pk == k) return &pv;
        return nullptr;
      };
      auto is = [&](const char* k, const char* v) { auto* p = prop(k); return p && upper(*p) == upper(v); };
      if (t.model != Model::Unique || is("enable_unique_key_merge_on_write", "false"))
        fail("Update flexible columns feature is only supported on merge-on-write unique tables.");
      if (is("enable_unique_key_skip_bitmap_column", "true"))
        fail("table " + t.name + " has enabled update flexible columns feature already.");
      if (is("light_schema_change", "false"))  // the emulator's words; Doris names light_schema_change
        fail("Update flexible columns feature needs light_schema_change: table " + t.name +
             "'s property light_schema_change is false");
      std::erase_if(t.props, [](auto& kv) { return kv.first == "enable_unique_key_skip_bitmap_column"; });
      t.props.emplace_back("enable_unique_key_skip_bitmap_column", "true");
    } else if (ps.accept("SET")) {
      ps.expect_p('(');
      std::string k = ps.peek().s;
      if (k == "enable_unique_key_skip_bitmap_column")
        fail("You can not modify property 'enable_unique_key_skip_bitmap_column'.");
      fail("Unsupported ALTER TABLE clause: SET (\"" + k + "\" ...)");
    } else {
      fail("Unsupported ALTER TABLE clause near '" + ps.peek().s + "'");
    }
    if (heavy && !replaying && !applying_job_) {
      // Checked and accepted; the table keeps its shape until the job ends.
      t.cols = std::move(old);
      t.seq_col = old_seq_col;
      start_alter_job(t, cur_db, stmt);
      return;
    }
    ++t.schema_version;
    std::vector<StagedRow> scratch;
    for (auto& [k, r] : t.unique_rows)
      if (!r.line.empty()) r.line = migrate_line(r.line, old, t);  // tombstones keep values too
    for (auto& l : t.dup_rows) l = migrate_line(l, old, t);
    for (auto& [id, tx] : txns_)
      if (tx.table_id == t.id && !tx.rows.empty() &&
          (tx.state == TxnState::Precommitted || tx.state == TxnState::Committed)) {
        migrate_rows(t, old, tx.rows);
        tx.schema_version = t.schema_version;
      }
    log_ddl();
    return;
  }
  if (ps.accept("SHOW")) {
    if (ps.accept("DATABASES") || ps.accept("SCHEMAS")) {
      boost::json::array rows;
      for (auto& [n, d] : dbs_) rows.push_back(boost::json::array{n});
      result_set({{"Database", "CHAR"}}, rows);
      return;
    }
    if (ps.accept("CREATE")) {
      if (ps.accept("DATABASE")) {
        // fe ShowCreateDbStmt: columns "Database", "Create Database"; the
        // PROPERTIES clause only when the database has properties.
        Database& d = need_db(ps.ident());
        std::string text = "CREATE DATABASE `" + d.name + "`";
        if (!d.props.empty()) {
          text += "\nPROPERTIES (";
          for (size_t i = 0; i < d.props.size(); ++i)
            text += std::string(i ? "," : "") + "\n\"" + d.props[i].first + "\" = \"" + d.props[i].second + "\"";
          text += "\n)";
        }
        result_set({{"Database", "CHAR"}, {"Create Database", "CHAR"}}, boost::json::array{boost::json::array{d.name, text}});
        return;
      }
      // Doris' columns "Table", "Create Table" (the query port's text); the
      // daemon reads the PROPERTIES to tell whether flexible partial updates
      // are enabled.
      ps.expect("TABLE");
      Table& t = need_table(ps.qname(cur_db));
      result_set({{"Table", "CHAR"}, {"Create Table", "CHAR"}},
                 boost::json::array{boost::json::array{t.name, query::create_table_text(t)}});
      return;
    }
    if (ps.accept("ALTER")) {
      // SHOW ALTER TABLE COLUMN [FROM db] [WHERE TableName = 't' [AND State = 's']]
      //   [ORDER BY JobId|CreateTime|FinishTime [ASC|DESC]] [LIMIT n] (fe ShowAlterStmt).
      ps.expect("TABLE");
      ps.expect("COLUMN");
      std::string db = cur_db;
      if (ps.accept("FROM") || ps.accept("IN")) db = ps.ident();
      need_db(db);
      static const std::vector<std::string> names{"JobId", "TableName", "CreateTime", "FinishTime", "IndexName",
                                                  "IndexId", "OriginIndexId", "SchemaVersion", "TransactionId",
                                                  "State", "Msg", "Progress", "Timeout"};
      auto rows = show_alter_rows(db);
      if (ps.accept("WHERE")) {
        do {
          std::string col = ps.ident();
          ps.expect_p('=');
          std::string want = ps.peek().s;
          ++ps.p;
          int ci = -1;
          for (size_t i = 0; i < names.size(); ++i)
            if (upper(names[i]) == upper(col)) ci = static_cast<int>(i);
          if (ci != 1 && ci != 9) fail("The columns of TableName/CreateTime/FinishTime/State are supported.");
          std::erase_if(rows, [&](const auto& r) {
            return ci == 1 ? r[1] != want : upper(r[9]) != upper(want);
          });
        } while (ps.accept("AND"));
      }
      if (ps.accept("ORDER")) {
        ps.expect("BY");
        ps.ident();  // every supported column grows with JobId
        if (ps.accept("DESC")) std::reverse(rows.begin(), rows.end());
        else ps.accept("ASC");
      }
      if (ps.accept("LIMIT")) {
        const auto n = static_cast<size_t>(std::stoll(ps.peek().s));
        ++ps.p;
        if (rows.size() > n) rows.resize(n);
      }
      std::vector<std::pair<std::string, std::string>> meta;
      for (const auto& n : names) meta.emplace_back(n, "CHAR");
      boost::json::array data;
      for (const auto& r : rows) {
        boost::json::array a;
        for (const auto& c : r) a.push_back(boost::json::string(c));
        data.push_back(std::move(a));
      }
      result_set(meta, data);
      return;
    }
    if (ps.accept("FULL")) {}
    if (ps.accept("TABLES")) {
      std::string db = cur_db;
      if (ps.accept("FROM") || ps.accept("IN")) db = ps.ident();
      Database& d = need_db(db);
      std::string like;
      bool has_like = false;
      if (ps.accept("LIKE")) { like = ps.peek().s; has_like = true; }
      boost::json::array rows;
      for (auto& [n, t] : d.tables) {
        if (has_like) {
          // '%' wildcards only, which is what existence checks use.
          std::string pat = like;
          bool ok;
          if (pat.find('%') == std::string::npos) ok = n == pat;
          else {
            std::string core = pat;
            core.erase(std::remove(core.begin(), core.end(), '%'), core.end());
            ok = n.find(core) != std::string::npos;
          }
          if (!ok) continue;
        }
        rows.push_back(boost::json::array{n});
      }
      result_set({{"Tables_in_" + db, "CHAR"}}, rows);
      return;
    }
    fail("Unsupported statement type");
  }
  if (ps.accept("DESC") || ps.accept("DESCRIBE")) {
    Table& t = need_table(ps.qname(cur_db));
    boost::json::array rows;
    for (auto& c : t.cols) {
      boost::json::value def = nullptr;
      if (c.def && *c.def != "null") {
        boost::system::error_code ec;
        auto v = boost::json::parse(*c.def, ec);
        def = v.is_string() ? v : boost::json::value(*c.def);
      }
      rows.push_back(boost::json::array{c.name, c.type.sql(), c.nullable ? "YES" : "NO", c.key ? "true" : "false", def,
                                        (!c.key && t.model == Model::Unique) ? "REPLACE" : ""});
    }
    result_set({{"Field", "CHAR"}, {"Type", "CHAR"}, {"Null", "CHAR"}, {"Key", "CHAR"}, {"Default", "CHAR"}, {"Extra", "CHAR"}},
               rows);
    return;
  }
  if (ps.kw("SELECT"))
    fail("the emulator does not execute queries; read rows with GET /_emulator/tables/{db}/{table}/rows");
  fail("Unsupported statement type");
}

std::string Engine::schema_json(const std::string& db, const std::string& table) const {
  const Database* d = find_db(db);
  if (!d)
    return boost::json::serialize(boost::json::object{
        {"msg", "Error"}, {"code", 1}, {"data", "errCode = 7, detailMessage = Unknown database '" + db + "'"}, {"count", 0}});
  auto it = d->tables.find(table);
  if (it == d->tables.end())
    return boost::json::serialize(boost::json::object{
        {"msg", "Error"}, {"code", 1}, {"data", "errCode = 7, detailMessage = Unknown table '" + table + "'"}, {"count", 0}});
  const Table& t = *it->second;
  boost::json::array props;
  for (auto& c : t.cols) {
    boost::json::object p{{"name", c.name}, {"type", c.type.schema_name()}};
    if (c.type.kind == Kind::Decimal) {
      p["precision"] = std::to_string(c.type.precision);
      p["scale"] = std::to_string(c.type.scale);
    }
    p["comment"] = c.comment;
    p["aggregation_type"] = (!c.key && t.model == Model::Unique) ? "REPLACE" : "";
    props.push_back(p);
  }
  return boost::json::serialize(boost::json::object{
      {"msg", "success"},
      {"code", 0},
      {"data", boost::json::object{{"properties", props},
                                   {"keysType", t.model == Model::Unique ? "UNIQUE_KEYS" : "DUP_KEYS"},
                                   {"status", 200}}},
      {"count", 0}});
}

}  // namespace cdc2doris::emu
