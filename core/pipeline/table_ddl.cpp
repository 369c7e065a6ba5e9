// Table creation and schema evolution, ordered with the epochs
// (docs/schema-evolution.md): rows of the old shape are committed before a
// DDL runs, the DDL is recorded before its first statement, and rows of the
// new shape load only after Doris shows the new shape.
#include "core/pipeline/pipeline_impl.hpp"
#include "core/common/ascii_case.hpp"

#include <boost/json.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <thread>
#include <variant>

#include "core/common/crash_point.hpp"
#include "core/schema/types.hpp"

namespace cdc2doris::pipeline {

namespace {

const char* step_kind(uint8_t kind) {
  if (kind == kCreateTable) return "create";
  if (kind == kTruncateTable) return "truncate";
  if (kind <= 3) return schema::to_string(static_cast<schema::OpKind>(kind));
  return "unknown";
}


// Doris refuses further DDL while a schema-change job runs on the table
// (fe SchemaChangeHandler: "Table[t]'s state is not NORMAL. Do not allow
// doing ALTER ops"); such an answer is waited out, not a refusal.
bool schema_change_running(const std::string& message) {
  const std::string m = ascii_lower(message);
  return m.find("is not normal") != std::string::npos || m.find("do not allow doing alter ops") != std::string::npos;
}

// The newest schema-change job of a table, as SHOW ALTER TABLE COLUMN shows
// it (fe SchemaChangeJobV2.getInfo: JobId, TableName, CreateTime,
// FinishTime, IndexName, IndexId, OriginIndexId, SchemaVersion,
// TransactionId, State, Msg, Progress, Timeout).
struct AlterJobView {
  bool found = false;
  std::string id, state, msg, progress;
};

doris::DorisResult<AlterJobView> newest_alter_job(doris::DorisClient& doris, const Target& t) {
  std::string name;
  for (char c : t.table) {
    if (c == '\'' || c == '\\') name.push_back('\\');
    name.push_back(c);
  }
  auto res = doris.sql(t.db, "SHOW ALTER TABLE COLUMN FROM " + schema::quote_ident(t.db) + " WHERE TableName = '" +
                                 name + "'");
  if (!res) return res.error();
  const auto& sql = *res;
  auto col = [&](std::string_view n) {
    for (size_t i = 0; i < sql.columns.size(); ++i)
      if (ascii_lower(sql.columns[i]) == n) return static_cast<int>(i);
    return -1;
  };
  const int id = col("jobid"), st = col("state"), ms = col("msg"), pr = col("progress");
  AlterJobView newest;
  int64_t newest_id = -1;
  for (const auto& row : sql.rows) {
    auto cell = [&](int i) { return i >= 0 && static_cast<size_t>(i) < row.size() && row[i] ? *row[i] : std::string(); };
    int64_t job = -1;
    try {
      job = std::stoll(cell(id));
    } catch (const std::exception&) {
      continue;
    }
    if (job <= newest_id) continue;
    newest_id = job;
    newest = {true, cell(id), cell(st), cell(ms), cell(pr)};
  }
  return newest;
}

}  // namespace

state::DdlStep to_step(const std::string& db, const std::string& table, const schema::DdlOp& op) {
  state::DdlStep s;
  s.kind = static_cast<uint8_t>(op.kind);
  s.column = op.column.name;
  s.arg = op.kind == schema::OpKind::RenameColumn ? op.new_name : op.column.type;
  s.statement = schema::alter_sql(db, table, op);
  return s;
}

bool step_done(const state::DdlStep& step, const TableShape& shape) {
  if (step.kind == kCreateTable) return shape.exists;
  if (step.kind == kTruncateTable) return false;  // DESC cannot tell; the record's state does
  if (!shape.exists) return false;
  switch (static_cast<schema::OpKind>(step.kind)) {
    case schema::OpKind::AddColumn: return shape.find(step.column) != nullptr;
    case schema::OpKind::DropColumn: return shape.find(step.column) == nullptr;
    case schema::OpKind::RenameColumn: return shape.find(step.column) == nullptr && shape.find(step.arg) != nullptr;
    case schema::OpKind::ModifyColumn: {
      const auto* c = shape.find(step.column);
      return c != nullptr && schema::normalize_type(c->type) == schema::normalize_type(step.arg);
    }
  }
  return false;
}

void note_renames(std::map<std::string, std::string>& renamed, const state::DdlRecord& rec) {
  if (rec.state != state::DdlState::Done) return;
  for (const auto& step : rec.steps) {
    if (step.kind != static_cast<uint8_t>(schema::OpKind::RenameColumn)) continue;
    for (auto& [old_name, now] : renamed)
      if (now == step.column) now = step.arg;
    renamed.erase(step.arg);  // renamed back: the name is the table's own again
    renamed[step.column] = step.arg;
  }
  std::erase_if(renamed, [](const auto& kv) { return kv.first == kv.second; });
}

ColumnRenames old_shape_renames(const TableDdl& td, const std::vector<schema::Column>& source) {
  ColumnRenames out;
  if (td.renamed.empty()) return out;
  auto in_source = [&](const std::string& n) {
    return std::any_of(source.begin(), source.end(), [&](const schema::Column& c) { return c.name == n; });
  };
  for (const auto& c : source) {
    auto it = td.renamed.find(c.name);
    if (it == td.renamed.end() || td.shape.find(c.name) != nullptr || td.shape.find(it->second) == nullptr ||
        in_source(it->second))
      continue;
    out.emplace_back(c.name, it->second);
  }
  return out;
}

std::vector<schema::Column> Pipeline::Impl::loaded_columns(const decode::SchemaNode& row,
                                                            const std::vector<std::string>& keys,
                                                            const TableDdl& td) const {
  const std::string prefix =
      decoder_.options().envelope == decode::Envelope::Flattened ? decoder_.options().flattened.metadata_prefix : "";
  auto cols = schema::columns_from_schema(row, keys, prefix);
  const decode::ColumnTransforms& tf = transforms_of(td);
  if (!tf.reshapes()) return cols;
  std::vector<schema::Column> out;
  for (auto& c : cols) {
    auto name = tf.target_name(c.name);
    if (!name) continue;
    c.name = std::move(*name);
    out.push_back(std::move(c));
  }
  return out;
}

TableDdl& Pipeline::Impl::table_ddl(const Target& t) {
  TableDdl& td = ddl_.tables[t];
  if (!td.loaded) {
    td.settings = deps_.router.settings(t);
    td.loaded = true;
  }
  return td;
}

// DESC, because `_schema` carries no CHAR/VARCHAR length, no nullability and
// no default (fe TableSchemaAction), all of which a MODIFY must repeat.
std::optional<doris::DorisError> Pipeline::Impl::read_shape(const Target& t, TableDdl& td) {
  const std::string stmt = "DESC " + schema::quote_ident(t.db) + "." + schema::quote_ident(t.table);
  auto res = deps_.doris.sql(t.db, stmt);
  if (!res) {
    auto* err = &res.error();
    if (err->kind() == doris::ErrorKind::UnknownTable) {
      TableShape none;
      // Doris runs the statement on a connection to the URL's database
      // (fe StatementSubmitter: jdbc:mariadb://127.0.0.1:{query_port}/{db}),
      // which fails with "Unknown database" before DESC looks at the table.
      none.database_missing = ascii_lower(err->message()).find("unknown database") != std::string::npos;
      td.set_shape(std::move(none));
      return std::nullopt;
    }
    // The client named only the database; the error that stops or rewinds
    // must say which table and statement, with Doris' answer as classified.
    ErrorContext ctx = err->context();
    ctx.table = t.name();
    doris::DorisError named(err->kind(), err->disposition(),
                            "table " + t.name() + ": its columns cannot be read (statement: " + stmt +
                                "): " + err->message(),
                            std::move(ctx));
    named.error_url = err->error_url;
    return named;
  }
  const auto& sql = *res;
  auto col = [&](std::string_view name, size_t fallback) {
    for (size_t i = 0; i < sql.columns.size(); ++i)
      if (ascii_lower(sql.columns[i]) == name) return i;
    return fallback;
  };
  const size_t f = col("field", 0), ty = col("type", 1), nu = col("null", 2), k = col("key", 3), d = col("default", 4);
  TableShape shape;
  shape.exists = true;
  for (const auto& row : sql.rows) {
    auto cell = [&](size_t i) { return i < row.size() && row[i] ? *row[i] : std::string(); };
    schema::TableColumn c;
    c.name = cell(f);
    c.type = schema::normalize_type(cell(ty));
    c.nullable = ascii_lower(cell(nu)) == "yes" || ascii_lower(cell(nu)) == "true";
    c.key = ascii_lower(cell(k)) == "true" || ascii_lower(cell(k)) == "yes";
    // Some FE versions render "no default" as the text NULL rather than SQL NULL.
    if (d < row.size() && row[d] && ascii_lower(*row[d]) != "null") {
      std::string v = *row[d];
      std::string quoted = "'";
      for (char ch : v) {
        if (ch == '\'' || ch == '\\') quoted.push_back('\\');
        quoted.push_back(ch);
      }
      c.default_sql = quoted + "'";
    }
    if (!c.name.empty()) shape.columns.push_back(std::move(c));
  }
  td.set_shape(std::move(shape));
  return std::nullopt;
}

Pipeline::Impl::Prepared Pipeline::Impl::prepare_table(const Target& t, const kafka::Message& msg) {
  const decode::SchemaNode* row_schema = change_.row_schema;
  const uint64_t misses = decoder_.stats().schema_cache_misses;
  row_renames_ = nullptr;
  if (misses != ddl_.cache_misses) {
    // A schema was compiled since: a node address may have been reused.
    for (auto& [_, td] : ddl_.tables) {
      td.checked.clear();
      td.remap.clear();
    }
    ddl_.cache_misses = misses;
    ddl_.last_schema = nullptr;
  }
  if (row_schema != nullptr && row_schema == ddl_.last_schema && t == ddl_.last_target) {
    row_renames_ = ddl_.last_renames;
    return Prepared::Proceed;
  }

  TableDdl& td = table_ddl(t);
  auto taken = [&] {
    td.checked.insert(row_schema);
    auto r = td.remap.find(row_schema);
    row_renames_ = r == td.remap.end() ? nullptr : &r->second;
    ddl_.last_schema = row_schema;
    ddl_.last_target = t;
    ddl_.last_renames = row_renames_;
  };
  if (row_schema == nullptr && !change_.unknown_columns && !td.settings.auto_create) return Prepared::Proceed;
  if (row_schema != nullptr && td.checked.count(row_schema)) {
    taken();
    return Prepared::Proceed;
  }
  if (row_schema == nullptr && !change_.unknown_columns && td.shape.exists) return Prepared::Proceed;
  if (auto err = read_shape(t, td)) {
    // Its disposition decides, as for a load: a transient failure rewinds and
    // retries after a backoff; any other stops the daemon with the cause
    // (going on without the table's shape would only fail later, at the
    // load, with a misleading "unknown table").
    fail(*err, "schema lookup");
    return Prepared::Stop;
  }

  if (!td.shape.exists) {
    if (!td.settings.auto_create) return Prepared::Proceed;  // the load names the missing table
    if (td.create_refused) {
      deps_.metrics.add_bad_record("ddl_refused", to_string(cfg_.bad_record_policy));
      return Prepared::Skip;
    }
    std::vector<std::string> keys = change_.key_columns;
    if (!td.settings.key_columns.empty()) keys = td.settings.key_columns;
    std::vector<schema::Column> columns;
    const decode::ColumnTransforms& tf = transforms_of(td);
    if (row_schema != nullptr) {
      columns = loaded_columns(*row_schema, keys, td);
    } else {
      columns = td.settings.columns;
      if (columns.empty()) {
        state::DdlRecord rec;
        rec.db = t.db;
        rec.table = t.table;
        return refuse(rec, td, "",
                      "the table does not exist and its records carry no schema: set routing.tables." + t.name() +
                          ".columns for auto_create",
                      &msg);
      }
    }
    // The key columns by their Doris names (the decoder refuses rows that exclude one).
    for (auto& k : keys) k = tf.target_name(k).value_or(k);
    schema::CreateOptions opt = td.settings.create;
    if (td.settings.unique_key && !*td.settings.unique_key) opt.model = schema::KeyModel::Duplicate;
    if (opt.sequence_col.empty()) opt.sequence_col = td.settings.sequence_col;
    if (td.settings.extra_columns) {
      const auto& ex = *td.settings.extra_columns;
      if (!ex.op.empty()) opt.extra_columns.push_back({ex.op, "VARCHAR(1)", true, std::nullopt, false, false});
      if (!ex.source_ts.empty()) opt.extra_columns.push_back({ex.source_ts, "BIGINT", true, std::nullopt, false, false});
      if (!ex.sequence.empty() && ex.sequence != opt.sequence_col)
        opt.extra_columns.push_back({ex.sequence, "BIGINT", true, std::nullopt, false, false});
    }
    for (const auto& cc : tf.computed) opt.extra_columns.push_back({cc.name, decode::doris_type(cc.source), true, std::nullopt, false, false});
    if (const auto del = td.settings.deletes.value_or(decoder_.options().deletes); del.mode == decode::DeleteMode::Soft) {
      opt.extra_columns.push_back({del.soft_column, "BOOLEAN", true, std::nullopt, false, false});
      if (!del.deleted_at_column.empty())
        opt.extra_columns.push_back({del.deleted_at_column, "DATETIME(3)", true, std::nullopt, false, false});
    }
    if (td.shape.database_missing) {
      if (auto p = create_database(t, td, opt, msg)) return *p;
    }
    state::DdlStep step;
    step.kind = kCreateTable;
    try {
      step.statement = schema::create_table_sql(schema::table_from_columns(t.db, t.table, columns, keys, opt));
    } catch (const schema::SchemaError& e) {
      state::DdlRecord rec;
      rec.db = t.db;
      rec.table = t.table;
      return refuse(rec, td, "", e.what(), &msg);
    }
    const Prepared p = run_ddl(t, td, {std::move(step)}, &msg);
    if (p != Prepared::Proceed || row_schema == nullptr) return p;
    // A table created from this schema takes it.
    td.checked.insert(row_schema);
    return p;
  }

  if (row_schema == nullptr) return change_.unknown_columns ? schemaless_keys(t, td, msg) : Prepared::Proceed;

  // Columns that are not the source's: never dropped, renamed or changed.
  std::set<std::string> ignore{"__DORIS_DELETE_SIGN__", "__DORIS_SEQUENCE_COL__", "__DORIS_VERSION_COL__"};
  if (!td.settings.sequence_col.empty()) ignore.insert(td.settings.sequence_col);
  if (td.settings.extra_columns) {
    ignore.insert(td.settings.extra_columns->op);
    ignore.insert(td.settings.extra_columns->source_ts);
    ignore.insert(td.settings.extra_columns->sequence);
  }
  const auto& ex = decoder_.options().extra_columns;
  for (const auto* n : {&ex.op, &ex.source_ts, &ex.sequence})
    if (!n->empty()) ignore.insert(*n);
  // The soft-delete columns are the pipeline's, not the source's.
  if (const auto del = td.settings.deletes.value_or(decoder_.options().deletes); del.mode == decode::DeleteMode::Soft) {
    ignore.insert(del.soft_column);
    if (!del.deleted_at_column.empty()) ignore.insert(del.deleted_at_column);
  }
  // Computed columns are the pipeline's; excluded ones are never loaded, so
  // the table's own column of that name (if any) is left as it is.
  const decode::ColumnTransforms& tf = transforms_of(td);
  for (const auto& cc : tf.computed) ignore.insert(cc.name);
  for (const auto& ex : tf.exclude) {
    ignore.insert(ex);
    decode::ColumnTransforms named = tf;
    named.exclude.clear();
    ignore.insert(*named.target_name(ex));
  }
  auto source = loaded_columns(*row_schema, change_.key_columns, td);
  // A record of the shape before an applied rename (a partition lagging
  // behind the one whose record asked for it, a replay): its column goes by
  // the new name, rather than be ignored by Doris (the new column NULL) or
  // look like a rename back.
  const ColumnRenames renames = old_shape_renames(td, source);
  for (auto& c : source)
    for (const auto& [from, to] : renames)
      if (c.name == from) c.name = to;
  if (!renames.empty()) td.remap[row_schema] = renames;
  const schema::Diff diff = schema::diff(td.shape.columns, source, td.settings.schema_evolution, ignore);
  for (const auto& c : diff.missing)
    report_once(t, td, c,
                "source column '" + c + "' is not a column of the table and schema_evolution is off: its values are "
                "not loaded");
  for (const auto& c : diff.not_applied)
    report_once(t, td, c,
                "source column type changed (" + c + "), which schema_evolution '" +
                    schema::to_string(td.settings.schema_evolution) +
                    "' does not apply (only widenings Doris allows, under full): values Doris cannot convert fail "
                    "the load");
  if (diff.ops.empty()) {
    taken();
    return Prepared::Proceed;
  }
  std::vector<state::DdlStep> steps;
  for (const auto& op : diff.ops) steps.push_back(to_step(t.db, t.table, op));
  const Prepared p = run_ddl(t, td, std::move(steps), &msg);
  if (p == Prepared::Proceed) {
    // run_ddl renamed nothing of this record's shape (it named the table's
    // columns already), but a rename it applied changes the mapping.
    if (!renames.empty()) td.remap[row_schema] = renames;
    taken();
  }
  return p;
}

std::optional<Pipeline::Impl::Prepared> Pipeline::Impl::create_database(const Target& t, TableDdl& td,
                                                                        const schema::CreateOptions& opt,
                                                                        const kafka::Message& msg) {
  // Idempotent, so not recorded as a DDL step: a restart just runs it again.
  // Sent on information_schema: Doris runs a statement on a connection to
  // the URL's database, and the missing one cannot be it.
  const std::string stmt = schema::create_database_sql(t.db, opt.database_properties);
  log_->info("table {}: database {} does not exist; creating it: {}", t.name(), t.db, stmt);
  auto res = deps_.doris.sql("information_schema", stmt);
  if (!res) {
    auto* err = &res.error();
    deps_.metrics.add_doris_error(doris::to_string(err->kind()));
    const bool answered = std::string_view(err->what()).find("detailMessage") != std::string_view::npos;
    if (err->disposition() == Disposition::Retry && !answered) {
      fail(*err, "create database");
      return Prepared::Stop;
    }
    state::DdlRecord rec;
    rec.db = t.db;
    rec.table = t.table;
    return refuse(rec, td, stmt,
                  std::string(err->what()) + " (creating a database needs CREATE_PRIV on it: GRANT CREATE_PRIV ON " +
                      t.db + ".* TO the daemon's user, or create it beforehand)",
                  &msg);
  }
  deps_.metrics.add_ddl(t.name(), "create_database");
  td.shape.database_missing = false;
  return std::nullopt;
}

// Schemaless records typed by their table: the JSON keys the table lacks.
Pipeline::Impl::Prepared Pipeline::Impl::schemaless_keys(const Target& t, TableDdl& td, const kafka::Message& msg) {
  std::vector<std::string> unknown;
  for (const auto& row : change_.rows) {
    boost::system::error_code ec;
    auto v = boost::json::parse(row.json, ec);
    if (ec || !v.is_object()) continue;
    for (const auto& kv : v.as_object()) {
      const std::string key(kv.key());
      if (key.starts_with("__DORIS_") || td.shape.find(key) != nullptr) continue;
      if (std::find(unknown.begin(), unknown.end(), key) == unknown.end()) unknown.push_back(key);
    }
  }
  if (unknown.empty()) return Prepared::Proceed;
  if (td.settings.schema_evolution == schema::Policy::Off) {
    for (const auto& c : unknown)
      report_once(t, td, c,
                  "JSON key '" + c + "' is not a column of the table and schema_evolution is off: its values are not "
                  "loaded");
    return Prepared::Proceed;
  }
  if (td.settings.new_column_type.empty()) {
    state::DdlRecord rec;
    rec.db = t.db;
    rec.table = t.table;
    std::string names;
    for (const auto& c : unknown) names += (names.empty() ? "'" : ", '") + c + "'";
    return refuse(rec, td, "",
                  "schemaless record with JSON key(s) " + names +
                      " the table has no column for, and routing.tables." + t.name() +
                      ".new_column_type is not set (the type to add them as)",
                  &msg);
  }
  std::vector<state::DdlStep> steps;
  for (const auto& c : unknown)
    steps.push_back(to_step(t.db, t.table,
                            {schema::OpKind::AddColumn,
                             schema::Column{c, td.settings.new_column_type, true, std::nullopt, false, false},
                             {}}));
  return run_ddl(t, td, std::move(steps), &msg);
}

const ColumnRenames* Pipeline::Impl::replay_renames(const Target& t) {
  if (change_.row_schema == nullptr) return nullptr;
  auto it = ddl_.tables.find(t);
  if (it == ddl_.tables.end() || it->second.renamed.empty()) return nullptr;
  TableDdl& td = it->second;
  if (auto r = td.remap.find(change_.row_schema); r != td.remap.end()) return &r->second;
  if (td.checked.count(change_.row_schema)) return nullptr;
  auto renames = old_shape_renames(td, loaded_columns(*change_.row_schema, {}, td));
  if (renames.empty()) return nullptr;
  return &(td.remap[change_.row_schema] = std::move(renames));
}

void Pipeline::Impl::rename_row_columns(const ColumnRenames& renames) {
  for (auto& row : change_.rows) {
    for (auto& c : row.partial_columns)
      for (const auto& [from, to] : renames)
        if (c == from) c = to;
    boost::system::error_code ec;
    auto v = boost::json::parse(row.json, ec);
    if (ec || !v.is_object()) continue;  // the decoder writes objects
    auto& o = v.as_object();
    bool moved = false;
    for (const auto& [from, to] : renames)
      if (auto* val = o.if_contains(from)) {
        o[to] = std::move(*val);
        o.erase(from);
        moved = true;
      }
    if (moved) row.json = boost::json::serialize(v);
  }
}

void Pipeline::Impl::report_once(const Target& t, TableDdl& td, const std::string& column, const std::string& what) {
  if (!td.reported.insert(column).second) return;
  deps_.metrics.add_column_not_loaded(t.name());
  log_->warn("table {}: {}", t.name(), what);
}

Pipeline::Impl::Prepared Pipeline::Impl::run_ddl(const Target& t, TableDdl& td, std::vector<state::DdlStep> steps,
                                                 const kafka::Message* msg, const TruncateMark* truncate) {
  // 1. Rows of the old shape reach Doris first: the open epoch ends and the
  //    closing one commits (a DDL must never run while a load of the old
  //    column set is open or pre-committed for the table).
  const uint64_t generation = rewind_generation_;
  if (open_epoch_progressed()) end_open_epoch(truncate != nullptr ? "truncate" : "schema change");
  drive_closing(/*block=*/true);
  if (rewind_generation_ != generation || replay_) return Prepared::Stop;
  if (closing_) {  // stopping, and the shutdown deadline passed first
    abort_open_epoch_stopping();
    return Prepared::Stop;
  }
  // 2. The intent, before the first statement. A truncate changes no
  // column: the table's schema version stays.
  const uint64_t bump = truncate != nullptr ? 0 : 1;
  state::DdlRecord rec;
  rec.db = t.db;
  rec.table = t.table;
  rec.version = td.version + bump;
  rec.state = state::DdlState::Pending;
  rec.epoch = open_.epoch;
  rec.steps = std::move(steps);
  rec.created_unix_ms = unix_ms();
  // The newest truncate stays known across the table's later records.
  rec.truncate_seq = truncate != nullptr ? truncate->seq : td.truncate_seq;
  rec.truncate_at = truncate != nullptr ? truncate->at : td.truncate_at;
  for (const auto& old : deps_.store.ddl_records())
    if (old.db == t.db && old.table == t.table) rec.version = std::max(rec.version, old.version + bump);
  if (truncate != nullptr) CDC2DORIS_CRASH_POINT("before_truncate_record");
  try {
    deps_.store.put_ddl(rec);
  } catch (const state::StateError& e) {
    throw FatalStop{e.to_error()};
  }
  CDC2DORIS_CRASH_POINT(truncate != nullptr ? "after_truncate_record" : "after_ddl_record");
  // 3. The statements, 4. the new shape read back.
  return converge(rec, td, msg);
}

Pipeline::Impl::Prepared Pipeline::Impl::converge(state::DdlRecord& rec, TableDdl& td, const kafka::Message* msg) {
  const Target t{rec.db, rec.table};
  // A DESC that fails is no refusal of the change (the bad-record policy does
  // not apply): it stops the daemon with its cause, or, when transient,
  // rewinds and retries; at recovery it ends the start.
  auto lookup_failed = [&](const doris::DorisError& err) {
    if (msg == nullptr && err.disposition() != Disposition::Retry) throw FatalStop{err};
    fail(err, "schema lookup");
    return Prepared::Stop;
  };
  int attempt = 0;
  for (size_t i = 0; i < rec.steps.size();) {
    const state::DdlStep& step = rec.steps[i];
    if (auto err = read_shape(t, td)) {
      if (err->disposition() != Disposition::Retry) return lookup_failed(*err);
      if (stop_.load()) {
        abort_open_epoch_stopping();
        return Prepared::Stop;
      }
      log_->warn("table {}: reading its columns before a schema change failed, will retry: {}", t.name(), err->what());
      sleep_backoff(attempt++);
      continue;
    }
    const bool truncating = step.kind == kTruncateTable;
    if (truncating && !td.shape.exists) {
      // Nothing to empty (dropped meanwhile, or never created): as done.
      log_->warn("table {}: TRUNCATE (from {}) skipped: the table does not exist", t.name(), step.arg);
      ++i;
      continue;
    }
    // A restart, or an answer lost on the way: Doris may already show it.
    if (step_done(step, td.shape)) {
      ++i;
      continue;
    }
    if (truncating)
      log_->info("table {}: TRUNCATE from {} (epoch {}): {}", t.name(), step.arg, rec.epoch, step.statement);
    else
      log_->info("table {}: schema change (version {}, epoch {}): {}", t.name(), rec.version, rec.epoch,
                 step.statement);
    auto res = deps_.doris.sql(t.db, step.statement);
    CDC2DORIS_CRASH_POINT(truncating ? "after_truncate_statement" : "after_ddl_statement");
    if (!res) {
      auto* err = &res.error();
      deps_.metrics.add_doris_error(doris::to_string(err->kind()));
      if (truncating && err->kind() == doris::ErrorKind::UnknownTable) {
        log_->warn("table {}: TRUNCATE (from {}) skipped: the table does not exist", t.name(), step.arg);
        ++i;
        continue;
      }
      if (auto again = read_shape(t, td); !again && step_done(step, td.shape)) {
        deps_.metrics.add_ddl(t.name(), step_kind(step.kind));
        ++i;
        continue;
      }
      const bool running = schema_change_running(err->what());
      if (running && !stop_.load()) {
        // Another job holds the table: wait for it to end, then ask again;
        // never refused for that, however long the job takes.
        std::string cancelled;
        if (await_alter_job(t, step.statement, &cancelled) == Prepared::Stop) return Prepared::Stop;
        log_->warn("table {}: schema change not applied yet, will retry (a schema change job is running): {}",
                   t.name(), err->what());
        deps_.metrics.note_error("ddl", err->what());
        sleep_backoff(std::min(attempt++, 8));
        continue;
      }
      // An FE's own answer to the statement (UserException text) is final
      // unless it says a schema change is running; the client cannot know
      // that and calls an unknown failure transient.
      const bool answered = std::string_view(err->what()).find("detailMessage") != std::string_view::npos;
      const bool transient = running || (err->disposition() == Disposition::Retry && !answered);
      if (transient && !stop_.load() && attempt < 60) {
        log_->warn("table {}: schema change not applied yet, will retry ({}): {}", t.name(),
                   running ? "a schema change job is running" : "Doris unavailable", err->what());
        deps_.metrics.note_error("ddl", err->what());
        sleep_backoff(attempt++);
        continue;
      }
      if (transient && stop_.load()) {
        abort_open_epoch_stopping();
        return Prepared::Stop;
      }
      return refuse(rec, td, step.statement, err->what(), msg);
    }
    attempt = 0;
    if (truncating) {
      // Doris answers once the table's partitions were replaced (fe
      // InternalCatalog.truncateTable): no job to wait for.
      deps_.metrics.add_truncate(t.name(), "applied");
      ++i;
      continue;
    }
    deps_.metrics.add_ddl(t.name(), step_kind(step.kind));
    // A heavy change (a type MODIFY, a key column, a table without light
    // schema change) is answered at once and runs as a job: DESC shows the
    // old shape until it finishes, and rows of the new shape must not load
    // before then.
    if (auto again = read_shape(t, td); !again && !step_done(step, td.shape)) {
      std::string cancelled;
      if (await_alter_job(t, step.statement, &cancelled) == Prepared::Stop) return Prepared::Stop;
      if (!cancelled.empty())
        return refuse(rec, td, step.statement, "Doris cancelled the schema-change job: " + cancelled, msg);
    }
    ++i;
  }
  if (auto err = read_shape(t, td)) return lookup_failed(*err);
  if (!std::all_of(rec.steps.begin(), rec.steps.end(),
                   [&](const auto& s) { return s.kind == kTruncateTable || step_done(s, td.shape); }))
    return refuse(rec, td, rec.steps.empty() ? "" : rec.steps.back().statement,
                  "Doris answered success, but DESC does not show the change", msg);
  rec.state = state::DdlState::Done;
  try {
    deps_.store.put_ddl(rec);
  } catch (const state::StateError& e) {
    throw FatalStop{e.to_error()};
  }
  const bool only_truncate = is_truncate(rec);
  CDC2DORIS_CRASH_POINT(only_truncate ? "after_truncate_done" : "after_ddl_done");
  td.version = rec.version;
  deps_.metrics.set_schema_version(t.name(), td.version);
  note_truncate(t, td, rec);
  if (only_truncate) return Prepared::Proceed;
  if (std::any_of(rec.steps.begin(), rec.steps.end(), [](const state::DdlStep& s) {
        return s.kind == static_cast<uint8_t>(schema::OpKind::RenameColumn);
      })) {
    // The row schemas the table took before keep being taken (a drop or add
    // for them would undo this change), their renamed columns now mapped.
    note_renames(td.renamed, rec);
    td.remap.clear();
    for (const auto* s : td.checked)
      if (auto r = old_shape_renames(td, loaded_columns(*s, {}, td)); !r.empty()) td.remap[s] = r;
    ddl_.last_schema = nullptr;
  }
  // The new shape: schemaless typing and the load mode read the table again.
  routing_.forget_column_types(t);
  ++column_types_version_;
  table_info_cache_.erase(t);
  td.reported.clear();
  return Prepared::Proceed;
}

Pipeline::Impl::Prepared Pipeline::Impl::await_alter_job(const Target& t, const std::string& statement,
                                                         std::string* cancelled) {
  int attempt = 0;
  std::string last_state;
  auto last_log = Clock::now();
  for (;;) {
    auto res = newest_alter_job(deps_.doris, t);
    if (!res) {
      auto* err = &res.error();
      // No job to watch (an FE without SHOW ALTER, access denied): the
      // caller's DESC check decides.
      if (err->disposition() != Disposition::Retry) {
        log_->warn("table {}: cannot read its schema-change jobs (SHOW ALTER TABLE COLUMN): {}", t.name(), err->what());
        deps_.metrics.set_schema_change(t.name(), "");
        return Prepared::Proceed;
      }
      log_->warn("table {}: reading its schema-change jobs failed, will retry: {}", t.name(), err->what());
    } else {
      const auto& job = *res;
      if (!job.found || job.state == "FINISHED" || job.state == "CANCELLED") {
        if (job.state == "CANCELLED") *cancelled = job.msg.empty() ? "job " + job.id + " cancelled" : job.msg;
        if (!last_state.empty())
          log_->info("table {}: Doris' schema-change job {} is {}", t.name(), job.id, job.state);
        deps_.metrics.set_schema_change(t.name(), "");
        return Prepared::Proceed;
      }
      std::string what = "waiting for Doris' schema-change job " + job.id + " (" + job.state;
      if (!job.progress.empty() && job.progress != "N/A") what += ", " + job.progress;
      what += ") before loading rows of the new shape: " + statement;
      deps_.metrics.set_schema_change(t.name(), what);
      if (job.state != last_state || Clock::now() - last_log > std::chrono::seconds(30)) {
        log_->info("table {}: {}", t.name(), what);
        last_state = job.state;
        last_log = Clock::now();
      }
    }
    if (stop_.load()) {
      deps_.metrics.set_schema_change(t.name(), "");
      abort_open_epoch_stopping();
      return Prepared::Stop;
    }
    sleep_backoff(std::min(attempt++, 8));
  }
}

Pipeline::Impl::Prepared Pipeline::Impl::refuse(state::DdlRecord& rec, TableDdl& td, const std::string& statement,
                                                const std::string& why, const kafka::Message* msg) {
  const Target t{rec.db, rec.table};
  const bool truncating = is_truncate(rec);
  if (truncating) {
    // Not applied: the record keeps naming the truncate applied before.
    rec.truncate_seq = td.truncate_seq;
    rec.truncate_at = td.truncate_at;
  }
  std::string text = "table " + t.name() + (truncating ? ": TRUNCATE refused" : ": schema change refused");
  if (!statement.empty()) text += " (statement: " + statement + ")";
  text += ": " + why;
  if (!rec.steps.empty()) {
    rec.state = state::DdlState::Refused;
    rec.error = why;
    try {
      deps_.store.put_ddl(rec);
    } catch (const state::StateError& e) {
      throw FatalStop{e.to_error()};
    }
  }
  deps_.metrics.add_bad_record("ddl_refused", to_string(cfg_.bad_record_policy));
  deps_.metrics.set_table_error(t.name(), text);
  deps_.metrics.note_error("ddl", text);
  ErrorContext ctx;
  ctx.table = t.name();
  if (msg != nullptr) {
    ctx.topic = std::string(msg->topic);
    ctx.partition = msg->partition;
    ctx.offset = msg->offset;
  }
  if (msg == nullptr) {
    // Recovery: the record that asked for it is read again and decides by the policy.
    log_->error("recovery: {}", text);
    return Prepared::Proceed;
  }
  if (cfg_.bad_record_policy == BadRecordPolicy::Fail) {
    failure_ = Error(Disposition::Fatal,
                     text + " (bad-record policy fail; nothing from this record on is committed)", ctx);
    log_->error("{}", text);
    step(Who::Open, Event::LoadFailedFatal);
    return Prepared::Stop;  // not reached: the fatal event stops
  }
  // skip / dead_letter: the table keeps its shape; the record's rows load as
  // they are (Doris ignores JSON keys it has no column for).
  if (cfg_.bad_record_policy == BadRecordPolicy::DeadLetter) {
    if (auto e = deps_.dead_letters->produce(cfg_.dead_letter_topic, *msg, text)) {
      fail(*e, "dead-letter");
      return Prepared::Stop;
    }
    open_.dead_letters = true;
  }
  log_->error("{} (bad-record policy {}: the rows load without the change)", text, to_string(cfg_.bad_record_policy));
  if (change_.row_schema != nullptr) td.checked.insert(change_.row_schema);
  if (td.shape.exists) return Prepared::Proceed;
  td.create_refused = true;  // later records of the table are skipped without asking Doris again
  return Prepared::Skip;
}

void Pipeline::Impl::load_ddl_state() {
  for (const auto& rec : deps_.store.ddl_records()) {
    const Target t{rec.db, rec.table};
    TableDdl& td = table_ddl(t);
    const bool only_truncate = is_truncate(rec);
    const uint64_t applied =
        rec.state == state::DdlState::Done || only_truncate ? rec.version : rec.version - 1;
    td.version = applied;
    deps_.metrics.set_schema_version(t.name(), applied);
    note_renames(td.renamed, rec);
    // A pending record's truncate is not applied yet: resume_ddl() runs it
    // (and notes it) before anything is consumed.
    if (rec.state != state::DdlState::Pending) note_truncate(t, td, rec);
  }
}

void Pipeline::Impl::resume_ddl() {
  for (auto rec : deps_.store.ddl_records()) {
    const Target t{rec.db, rec.table};
    TableDdl& td = table_ddl(t);
    if (rec.state != state::DdlState::Pending) continue;
    if (is_truncate(rec))
      log_->info("recovery: table {} has a TRUNCATE (from {}) recorded but not confirmed; running it", t.name(),
                 rec.truncate_at);
    else
      log_->info("recovery: table {} has a schema change (version {}) recorded but not confirmed; converging",
                 t.name(), rec.version);
    converge(rec, td, nullptr);
  }
}

}  // namespace cdc2doris::pipeline
