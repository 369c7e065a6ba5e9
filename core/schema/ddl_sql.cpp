#include "core/schema/ddl_sql.hpp"

#include <algorithm>

#include "core/schema/types.hpp"

namespace cdc2doris::schema {
namespace {

std::string literal(std::string_view v) {
  std::string out = "\"";
  for (char c : v) {
    if (c == '"' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  return out + "\"";
}

std::string column_sql(const Column& c) {
  std::string out = quote_ident(c.name) + " " + c.type + (c.nullable ? " NULL" : " NOT NULL");
  if (c.default_sql) out += " DEFAULT " + *c.default_sql;
  return out;
}

std::string qualified(const std::string& db, const std::string& table) { return quote_ident(db) + "." + quote_ident(table); }

}  // namespace

const char* to_string(OpKind k) {
  switch (k) {
    case OpKind::AddColumn: return "add";
    case OpKind::DropColumn: return "drop";
    case OpKind::RenameColumn: return "rename";
    case OpKind::ModifyColumn: return "modify";
  }
  return "unknown";
}

const char* to_string(Policy p) {
  switch (p) {
    case Policy::Off: return "off";
    case Policy::Add: return "add";
    case Policy::Full: return "full";
  }
  return "unknown";
}

std::vector<Column> columns_from_schema(const decode::SchemaNode& row, const std::vector<std::string>& keys,
                                        const std::string& skip_prefix) {
  std::vector<Column> out;
  for (const auto& f : row.fields) {
    if (!skip_prefix.empty() && f.field.starts_with(skip_prefix)) continue;
    Column c;
    c.name = f.field;
    c.key = std::find(keys.begin(), keys.end(), f.field) != keys.end();
    c.type = doris_type(f, c.key);
    c.nullable = !c.key && f.optional;
    c.default_sql = default_literal(f);
    if (f.meta == nullptr || f.meta->parameter("__debezium.source.column.type") == nullptr) {
      const std::string n = normalize_type(c.type);
      c.loose = n == "STRING" || n == "VARCHAR(65533)" || n.starts_with("DATETIME");
    }
    // NOT NULL without a default cannot be added to a table with rows, and a
    // delete's partial row leaves non-key columns out: only keys are NOT NULL.
    if (!c.key) c.nullable = true;
    out.push_back(std::move(c));
  }
  return out;
}

TableSpec table_from_columns(const std::string& db, const std::string& table, std::vector<Column> columns,
                             const std::vector<std::string>& keys, const CreateOptions& opt) {
  TableSpec spec;
  spec.db = db;
  spec.table = table;
  spec.model = opt.model;
  spec.buckets = opt.buckets;
  if (keys.empty()) {
    if (opt.model == KeyModel::Unique)
      throw SchemaError("table " + db + "." + table +
                        ": no key columns (the Kafka key has no fields and routing.tables.<target>.key_columns is not "
                        "set); a UNIQUE KEY table needs them");
  }
  for (const auto& k : keys) {
    auto it = std::find_if(columns.begin(), columns.end(), [&](const Column& c) { return c.name == k; });
    if (it == columns.end())
      throw SchemaError("table " + db + "." + table + ": key column '" + k + "' is not a field of the record");
    Column c = *it;
    c.key = true;
    c.nullable = false;
    spec.columns.push_back(std::move(c));
  }
  for (auto& c : columns)
    if (std::find(keys.begin(), keys.end(), c.name) == keys.end()) {
      c.key = false;
      spec.columns.push_back(std::move(c));
    }
  for (const auto& e : opt.extra_columns) {
    auto same = [&](const Column& c) { return c.name == e.name; };
    if (std::none_of(spec.columns.begin(), spec.columns.end(), same)) spec.columns.push_back(e);
  }
  if (!opt.sequence_col.empty()) {
    if (opt.model != KeyModel::Unique)
      throw SchemaError("table " + db + "." + table + ": a sequence column needs a UNIQUE KEY table");
    auto same = [&](const Column& c) { return c.name == opt.sequence_col; };
    if (std::none_of(spec.columns.begin(), spec.columns.end(), same))
      spec.columns.push_back({opt.sequence_col, "BIGINT", true, std::nullopt, false, false});
  }
  spec.keys = keys;
  if (spec.keys.empty() && !spec.columns.empty()) spec.keys.push_back(spec.columns.front().name);
  if (opt.model == KeyModel::Unique) spec.properties["enable_unique_key_merge_on_write"] = "true";
  spec.properties["light_schema_change"] = "true";
  spec.properties["replication_num"] = "3";
  if (opt.flexible_partial_updates && opt.model == KeyModel::Unique)
    spec.properties["enable_unique_key_skip_bitmap_column"] = "true";
  if (!opt.sequence_col.empty()) spec.properties["function_column.sequence_col"] = opt.sequence_col;
  for (const auto& [k, v] : opt.properties) spec.properties[k] = v;
  // replication_allocation replaces replication_num.
  if (spec.properties.count("replication_allocation") && !opt.properties.count("replication_num"))
    spec.properties.erase("replication_num");
  return spec;
}

std::string create_table_sql(const TableSpec& spec) {
  std::string out = "CREATE TABLE IF NOT EXISTS " + qualified(spec.db, spec.table) + " (\n";
  for (size_t i = 0; i < spec.columns.size(); ++i)
    out += "  " + column_sql(spec.columns[i]) + (i + 1 < spec.columns.size() ? ",\n" : "\n");
  std::string keys;
  for (size_t i = 0; i < spec.keys.size(); ++i) keys += (i ? ", " : "") + quote_ident(spec.keys[i]);
  out += ")\n";
  out += spec.model == KeyModel::Unique ? "UNIQUE KEY(" : "DUPLICATE KEY(";
  out += keys + ")\n";
  out += "DISTRIBUTED BY HASH(" + keys + ") BUCKETS " +
         (spec.buckets > 0 ? std::to_string(spec.buckets) : std::string("AUTO")) + "\n";
  out += "PROPERTIES (\n";
  size_t i = 0;
  for (const auto& [k, v] : spec.properties)
    out += "  " + literal(k) + " = " + literal(v) + (++i < spec.properties.size() ? ",\n" : "\n");
  out += ")";
  return out;
}

std::string create_database_sql(const std::string& db, const std::map<std::string, std::string>& properties) {
  std::string out = "CREATE DATABASE IF NOT EXISTS " + quote_ident(db);
  if (properties.empty()) return out;
  out += " PROPERTIES (";
  size_t i = 0;
  for (const auto& [k, v] : properties) out += literal(k) + " = " + literal(v) + (++i < properties.size() ? ", " : "");
  return out + ")";
}

std::string alter_sql(const std::string& db, const std::string& table, const DdlOp& op) {
  const std::string head = "ALTER TABLE " + qualified(db, table) + " ";
  switch (op.kind) {
    case OpKind::AddColumn: return head + "ADD COLUMN " + column_sql(op.column);
    case OpKind::DropColumn: return head + "DROP COLUMN " + quote_ident(op.column.name);
    case OpKind::RenameColumn: return head + "RENAME COLUMN " + quote_ident(op.column.name) + " " + quote_ident(op.new_name);
    case OpKind::ModifyColumn: return head + "MODIFY COLUMN " + column_sql(op.column);
  }
  return head;
}

Diff diff(const std::vector<TableColumn>& table, const std::vector<Column>& source, Policy policy,
          const std::set<std::string>& ignore, const std::map<std::string, std::string>& renames) {
  Diff d;
  auto in_table = [&](const std::string& n) -> const TableColumn* {
    for (const auto& c : table)
      if (c.name == n) return &c;
    return nullptr;
  };
  auto in_source = [&](const std::string& n) {
    return std::any_of(source.begin(), source.end(), [&](const Column& c) { return c.name == n; });
  };
  std::vector<const Column*> added;
  for (const auto& s : source)
    if (!in_table(s.name)) added.push_back(&s);
  std::vector<const TableColumn*> gone;  // candidates to drop (full)
  for (const auto& t : table)
    if (!t.key && !ignore.count(t.name) && !in_source(t.name)) gone.push_back(&t);

  std::set<std::string> renamed_to;
  if (policy == Policy::Full) {
    // Renames the source announced.
    for (const auto& [from, to] : renames) {
      auto g = std::find_if(gone.begin(), gone.end(), [&](const TableColumn* t) { return t->name == from; });
      auto a = std::find_if(added.begin(), added.end(), [&](const Column* c) { return c->name == to; });
      if (g == gone.end() || a == added.end()) continue;
      d.ops.push_back({OpKind::RenameColumn, Column{from, (*g)->type, true, std::nullopt, false, false}, to});
      renamed_to.insert(to);
      gone.erase(g);
      added.erase(a);
    }
    // The shape of a RENAME: one out, one in, same type, same position.
    if (gone.size() == 1 && added.size() == 1 && normalize_type(gone[0]->type) == normalize_type(added[0]->type)) {
      size_t tpos = 0, spos = 0;
      for (size_t i = 0; i < table.size(); ++i)
        if (table[i].name == gone[0]->name) tpos = i;
      for (size_t i = 0; i < source.size(); ++i)
        if (source[i].name == added[0]->name) spos = i;
      if (tpos == spos) {
        d.ops.push_back({OpKind::RenameColumn, Column{gone[0]->name, gone[0]->type, true, std::nullopt, false, false},
                         added[0]->name});
        gone.clear();
        added.clear();
      }
    }
  }
  for (const Column* a : added) {
    if (policy == Policy::Off) {
      d.missing.push_back(a->name);
      continue;
    }
    Column c = *a;
    c.key = false;
    c.nullable = true;  // rows already in the table have no value for it
    d.ops.push_back({OpKind::AddColumn, c, {}});
  }
  if (policy == Policy::Full)
    for (const TableColumn* g : gone)
      d.ops.push_back({OpKind::DropColumn, Column{g->name, g->type, true, std::nullopt, false, false}, {}});
  for (const auto& s : source) {
    const TableColumn* t = in_table(s.name);
    if (!t || ignore.count(t->name)) continue;
    if (s.loose || fits(s.type, t->type)) continue;
    const std::string change = s.name + ": " + normalize_type(t->type) + " -> " + normalize_type(s.type);
    // Widening loses nothing and a narrower column would stop the daemon at
    // the first wide value, so `add` applies it too (issue 33); drops and
    // renames stay opt-in under `full`.
    if (policy != Policy::Off && !t->key && is_widening(t->type, s.type)) {
      // Doris refuses a MODIFY that changes nullability or the default
      // (Column.checkSchemaChangeAllowed): both are repeated as they are.
      Column c{t->name, s.type, t->nullable, t->default_sql, false, false};
      d.ops.push_back({OpKind::ModifyColumn, c, {}});
    } else {
      d.not_applied.push_back(change);
    }
  }
  return d;
}

}  // namespace cdc2doris::schema
