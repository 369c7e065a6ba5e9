// Output rows (full, partial, deletes from the key) and the Kafka key.
#include "core/decode/detail/decoder_impl.hpp"
#include "core/common/ascii_case.hpp"

#include <cctype>

namespace cdc2doris::decode {

Row& Decoder::Impl::new_row(Change& out) {
  if (!pool.empty()) {
    out.rows.push_back(std::move(pool.back()));
    pool.pop_back();
  } else {
    out.rows.emplace_back();
  }
  Row& r = out.rows.back();
  r.json.clear();
  r.partial_columns.clear();
  r.soft_delete = false;
  return r;
}

const ExtraColumns& Decoder::Impl::extras_for(const Change& c) {
  if (table_opts != nullptr && table_opts->extra_columns) return *table_opts->extra_columns;
  if (!opt.extra_columns_per_table.empty()) {
    scratch2.assign(c.db);
    scratch2.push_back('.');
    scratch2.append(c.table);
    auto it = opt.extra_columns_per_table.find(scratch2);
    if (it != opt.extra_columns_per_table.end()) return it->second;
  }
  return opt.extra_columns;
}

void Decoder::Impl::append_extras(const Change& c, const ExtraColumns& ex, Row& r, bool list_names) {
  if (!ex.op.empty()) {
    r.json.push_back(',');
    append_json_string(ex.op, r.json);
    r.json.append(":\"");
    r.json.push_back(c.op);
    r.json.push_back('"');
    if (list_names) r.partial_columns.push_back(ex.op);
  }
  if (!ex.source_ts.empty()) {
    r.json.push_back(',');
    append_json_string(ex.source_ts, r.json);
    r.json.push_back(':');
    if (c.position.ts_ms) {
      r.json += std::to_string(*c.position.ts_ms);
    } else {
      r.json += "null";
    }
    if (list_names) r.partial_columns.push_back(ex.source_ts);
  }
  if (!ex.sequence.empty()) {
    r.json.push_back(',');
    append_json_string(ex.sequence, r.json);
    r.json.push_back(':');
    auto seq = c.position.sequence();
    r.json += seq ? std::to_string(*seq) : std::string("null");
    if (list_names) r.partial_columns.push_back(ex.sequence);
  }
}

namespace {

// Connectors whose before-image is always the whole row: Debezium's MySQL
// and MariaDB connectors require binlog_row_image=FULL, SQL Server's change
// tables hold every column. PostgreSQL's depends on REPLICA IDENTITY, and
// under DEFAULT the non-key columns are type defaults that look like values
// (docs/decoding.md): loading them would overwrite the stored row.
bool full_before_image(const Change& c) {
  const std::string& n = c.position.connector;
  return n == "mysql" || n == "mariadb" || n == "sqlserver";
}

}  // namespace

void Decoder::Impl::append_soft_columns(const Change& c, const DeleteOptions& d, bool deleted, Row& r,
                                        bool list_names) {
  r.json.push_back(',');
  append_json_string(d.soft_column, r.json);
  r.json.append(deleted ? ":true" : ":false");
  if (list_names) r.partial_columns.push_back(d.soft_column);
  if (d.deleted_at_column.empty()) return;
  // A key-only soft delete without a source time (a tombstone) leaves the
  // stored deleted-at as it is rather than inventing one.
  if (deleted && !c.position.ts_ms && list_names) return;
  r.json.push_back(',');
  append_json_string(d.deleted_at_column, r.json);
  if (!deleted || !c.position.ts_ms) {
    r.json.append(":null");
  } else {
    // An instant, like a ZonedTimestamp: the wall clock of decoding.time_zone.
    int64_t ms = *c.position.ts_ms;
    if (zone != nullptr) ms += int64_t{zone->At(absl::FromUnixMillis(ms)).offset} * 1000;
    r.json.append(":\"");
    format_timestamp(ms, 1000, r.json);
    r.json.push_back('"');
  }
  if (list_names) r.partial_columns.push_back(d.deleted_at_column);
}

// ------------------------------------------------------ column transforms

namespace {

// A metadata value as text (numbers as JSON numbers), or nullopt for null.
// `buf` holds the text when it is made here.
std::optional<std::string_view> meta_text(Meta m, const Change& c, const KafkaRecord* rec, std::string& buf,
                                          bool& number) {
  number = false;
  auto num = [&](int64_t v) -> std::optional<std::string_view> {
    number = true;
    buf = std::to_string(v);
    return std::string_view(buf);
  };
  auto str = [&](const std::string& v) -> std::optional<std::string_view> {
    if (v.empty()) return std::nullopt;
    return std::string_view(v);
  };
  switch (m) {
    case Meta::Op: buf.assign(1, c.op); return std::string_view(buf);
    case Meta::SourceTs: return c.position.ts_ms ? num(*c.position.ts_ms) : std::nullopt;
    case Meta::SourceDb: return str(c.db);
    case Meta::SourceSchema: return str(c.schema);
    case Meta::SourceTable: return str(c.table);
    case Meta::Connector: return str(c.position.connector);
    case Meta::Snapshot: return str(c.position.snapshot);
    case Meta::Topic:
      if (rec == nullptr) return std::nullopt;
      buf.assign(rec->topic);
      return std::string_view(buf);
    case Meta::Partition: return rec != nullptr ? num(rec->partition) : std::nullopt;
    case Meta::Offset: return rec != nullptr ? num(rec->offset) : std::nullopt;
    case Meta::Sequence: {
      const auto seq = c.position.sequence();
      return seq ? num(*seq) : std::nullopt;
    }
  }
  return std::nullopt;
}

}  // namespace

const ColumnPlan& Decoder::Impl::plan_for(const Change& c, const ColumnTransforms& tf, const RowBuild& b) {
  for (const auto& p : plans) {
    if (p.transforms != &tf || p.source.size() != b.cols.size()) continue;
    bool same = true;
    for (size_t i = 0; same && i < b.cols.size(); ++i) same = p.source[i] == b.name(b.cols[i]);
    if (same) return p;
  }
  ColumnPlan p;
  p.transforms = &tf;
  for (const auto& col : b.cols) {
    const std::string_view name = b.name(col);
    p.source.emplace_back(name);
    auto target = tf.target_name(name);
    std::string key;
    if (target) {
      for (size_t j = 0; j < p.target.size(); ++j)
        if (!p.target[j].empty() && ascii_iequals(p.target[j], *target)) {
          path.clear();
          fail(DecodeErrorCode::Unsupported,
               "source columns that load into distinct Doris columns (Doris compares names case-insensitively; "
               "routing.tables.*.rename / column_case)",
               "'" + p.source[j] + "' and '" + std::string(name) + "' both become '" + *target + "'");
        }
      append_json_string(*target, key);
      key.push_back(':');
    } else if (std::find(c.key_columns.begin(), c.key_columns.end(), name) != c.key_columns.end()) {
      path.clear();
      fail(DecodeErrorCode::Unsupported, "a loaded key column (routing.tables.*.exclude names a key column)",
           std::string(name));
    }
    p.target.push_back(target.value_or(std::string()));
    p.key.push_back(std::move(key));
  }
  if (tf.filter != nullptr)
    for (const auto& col : tf.filter->columns()) {
      auto it = std::find(p.source.begin(), p.source.end(), col);
      p.filter_cols.push_back(it == p.source.end() ? -1 : static_cast<int>(it - p.source.begin()));
    }
  if (plans.size() >= 64) plans.clear();  // bounded: tables and their shapes are few
  plans.push_back(std::move(p));
  return plans.back();
}

RowFilter::Verdict Decoder::Impl::filter_row(const Change& c, const ColumnTransforms& tf, const ColumnPlan& plan,
                                             const RowBuild& b) {
  struct Inputs final : RowFilter::Inputs {
    Decoder::Impl& d;
    const Change& c;
    const ColumnPlan& plan;
    const RowBuild& b;
    mutable std::string meta_buf;
    Inputs(Decoder::Impl& d, const Change& c, const ColumnPlan& plan, const RowBuild& b)
        : d(d), c(c), plan(plan), b(b) {}
    FilterValue column(size_t slot) const override {
      using K = FilterValue::Kind;
      const int at = plan.filter_cols[slot];
      if (at < 0) return {K::Missing, {}};
      const Col& col = b.cols[static_cast<size_t>(at)];
      if (col.toast) return {K::Unavailable, {}};
      const std::string_view v = b.value(col);
      switch (v.empty() ? 'n' : v.front()) {
        case 'n': return {K::Null, {}};
        case 't': return {K::Bool, "true"};
        case 'f': return {K::Bool, "false"};
        case '{':
        case '[': return {K::Other, v};
        case '"': {
          const std::string_view inner = v.substr(1, v.size() - 2);
          if (inner.find('\\') == std::string_view::npos) return {K::String, inner};
          std::string& buf = d.filter_text[slot];
          if (!json_unescape(inner, buf)) return {K::Other, v};
          return {K::String, buf};
        }
        default: return {K::Number, v};
      }
    }
    FilterValue meta(Meta m) const override {
      bool number = false;
      const auto t = meta_text(m, c, d.record, meta_buf, number);
      if (!t) return {FilterValue::Kind::Null, {}};
      return {number ? FilterValue::Kind::Number : FilterValue::Kind::String, *t};
    }
  };
  const RowFilter& f = *tf.filter;
  if (filter_text.size() < f.columns().size()) filter_text.resize(f.columns().size());
  // A column the row lacks is a mistake whether or not this row reaches it.
  RowFilter::Result res;
  for (size_t i = 0; i < plan.filter_cols.size(); ++i)
    if (plan.filter_cols[i] < 0) res = {RowFilter::Verdict::Missing, static_cast<int>(i)};
  if (res.verdict != RowFilter::Verdict::Missing) res = f.evaluate(Inputs(*this, c, plan, b));
  if (res.verdict == RowFilter::Verdict::Missing || res.verdict == RowFilter::Verdict::Unavailable) {
    const std::string& col = f.columns()[static_cast<size_t>(res.slot)];
    path.clear();
    if (res.verdict == RowFilter::Verdict::Missing)
      fail(DecodeErrorCode::Unsupported,
           "a row with every column the table's filter names (routing.tables.*.filter: " + f.text() + ")",
           "no column '" + col + "' in the row of " + c.db + "." + c.table);
    fail(DecodeErrorCode::Unsupported,
         "the value of '" + col + "', which the table's filter needs (routing.tables.*.filter: " + f.text() +
             "); the source left it out as unchanged (TOAST): PostgreSQL sends it under REPLICA IDENTITY FULL",
         "the unavailable-value placeholder");
  }
  return res.verdict;
}

void Decoder::Impl::write_transformed(const ColumnPlan& plan, const RowBuild& b, bool partial, Row& r) {
  r.json.reserve(b.body.size() + 64);
  r.json.push_back('{');
  bool first = true;
  for (size_t i = 0; i < b.cols.size(); ++i) {
    const Col& col = b.cols[i];
    if (plan.target[i].empty() || (partial && col.toast)) continue;
    if (!first) r.json.push_back(',');
    first = false;
    r.json.append(plan.key[i]);
    r.json.append(b.value(col));
    if (partial) r.partial_columns.push_back(plan.target[i]);
  }
}

void Decoder::Impl::append_computed(const Change& c, const std::vector<ComputedColumn>& cols, Row& r,
                                    bool list_names) {
  for (const auto& cc : cols) {
    r.json.push_back(',');
    append_json_string(cc.name, r.json);
    r.json.push_back(':');
    bool number = false;
    const auto t = meta_text(cc.source, c, record, scratch, number);
    if (!t) r.json.append("null");
    else if (number) r.json.append(*t);
    else append_json_string(*t, r.json);
    if (list_names) r.partial_columns.push_back(cc.name);
  }
}

// ----------------------------------------------------------- output rows

// partial: write only the non-TOAST columns and list them.
// A full row takes b's buffer over (b is cleared): emit each image once.
void Decoder::Impl::emit_row(Change& c, RowBuild& b, bool is_delete, bool partial) {
  const DeleteOptions& del = deletes_for();
  const ColumnTransforms& tf = transforms_for();
  const ColumnPlan* plan = tf.reshapes() || tf.filter != nullptr ? &plan_for(c, tf, b) : nullptr;
  // Deletes pass: deleting a key Doris does not hold is harmless. A soft
  // delete would write the row, though, so its whole before-image is judged.
  const bool judged = !is_delete || (del.mode == DeleteMode::Soft && !partial && full_before_image(c));
  if (tf.filter != nullptr && judged && filter_row(c, tf, *plan, b) != RowFilter::Verdict::Match) {
    ++c.rows_filtered;
    ++stats.rows_filtered;
    // An update whose new image left the filter removes the key from Doris
    // (it may hold the old image): Doris keeps filter(source). Creates and
    // snapshot reads are dropped.
    if (is_delete || c.op != 'u') return;
    if (!c.key_columns.empty()) {
      for (auto& col : b.cols) {
        const std::string_view n = b.name(col);
        col.toast = std::find(c.key_columns.begin(), c.key_columns.end(), n) == c.key_columns.end();
      }
      partial = true;
    }
    is_delete = true;
  }
  bool soft_delete = false;
  if (is_delete && del.mode == DeleteMode::Ignore) {
    ++c.deletes_ignored;
    ++stats.deletes_ignored;
    return;
  }
  if (is_delete && del.mode == DeleteMode::Soft) {
    // The row stays, flagged. Without a trustworthy whole before-image only
    // the key is written (a partial row): Doris keeps every other stored
    // value instead of taking NULLs or type defaults.
    if ((partial || !full_before_image(c)) && !c.key_columns.empty()) {
      for (auto& col : b.cols) {
        const std::string_view n = b.name(col);
        col.toast = std::find(c.key_columns.begin(), c.key_columns.end(), n) == c.key_columns.end();
      }
      partial = true;
    }
    is_delete = false;
    soft_delete = true;
  }
  if (del.mode == DeleteMode::Soft && b.find(del.soft_column) != nullptr) {
    path.clear();
    fail(DecodeErrorCode::Unsupported,
         "no source column named like the soft-delete flag (routing soft_delete_column)", del.soft_column);
  }
  Row& r = new_row(c);
  r.soft_delete = soft_delete;
  const ExtraColumns& ex = extras_for(c);
  if (c.row_schema == nullptr && b.unknown) {
    // A column the type hint does not name asks for schema evolution, unless it is not loaded.
    for (size_t i = 0; i < b.cols.size() && !c.unknown_columns; ++i)
      c.unknown_columns = b.cols[i].unknown && (plan == nullptr || !plan->target[i].empty());
  }
  if (plan != nullptr && tf.reshapes()) {
    write_transformed(*plan, b, partial, r);
  } else if (!partial) {
    r.json.swap(b.body);
    b.clear();
  } else {
    r.json.reserve(b.body.size() + 64);
    r.json.push_back('{');
    bool first = true;
    for (const auto& col : b.cols) {
      if (col.toast) continue;
      if (!first) r.json.push_back(',');
      first = false;
      r.json.append(b.body, col.name_off - 1, col.val_off + col.val_len - (col.name_off - 1));
      r.partial_columns.emplace_back(b.name(col));
    }
  }
  const bool empty = r.json.size() == 1;
  const bool soft_table = del.mode == DeleteMode::Soft;
  if (ex.any() || soft_table || !tf.computed.empty()) {
    if (ex.any()) append_extras(c, ex, r, partial);
    if (!tf.computed.empty()) append_computed(c, tf.computed, r, partial);
    if (soft_table) append_soft_columns(c, del, soft_delete, r, partial);
    if (empty) r.json.erase(1, 1);  // the appenders write a leading comma
  }
  if (r.json.size() > 1) r.json.push_back(',');
  r.json += "\"__DORIS_DELETE_SIGN__\":";
  r.json.push_back(is_delete ? '1' : '0');
  r.json.push_back('}');
  if (partial) r.partial_columns.emplace_back(kDeleteSign);
  ++stats.rows;
  if (is_delete) ++stats.deletes;
  if (soft_delete) ++stats.soft_deletes;
  if (partial) ++stats.partial_rows;
}

// Kafka key -> key column names (+ converted values in key_b).
std::optional<Failure> Decoder::Impl::parse_key(const KafkaRecord& rec) {
  key_names.clear();
  key_b.clear();
  if (!rec.key || rec.key->empty()) return std::nullopt;
  // A key unwrapped by its known schema text that fails is read again
  // through unwrap() (see known_wrapper()): the verdict is the full parse's.
  for (const bool allow_known : {opt.recognise_repeated_schemas, false}) {
    bool known = false;
    try {
      read_key(rec, allow_known, known);
      return std::nullopt;
    } catch (const Failure& f) {
      key_b.clear();
      key_names.clear();
      if (!known) return f;
    } catch (const simdjson::simdjson_error& e) {
      key_b.clear();
      key_names.clear();
      if (!known) return Failure{DecodeErrorCode::InvalidJson, "key", "a JSON object key", e.what()};
    }
  }
  return std::nullopt;  // not reached: the second pass never takes the known path
}

void Decoder::Impl::read_key(const KafkaRecord& rec, bool allow_known, bool& known) {
  path.clear();
  path_root = "key";
  Frame fr;
  size_t offset = 0;
  std::shared_ptr<const SchemaNode> schema;
  if (allow_known) schema = known_wrapper(key_schemas, rec.topic, *rec.key, keybuf, fr, offset);
  known = schema != nullptr;
  if (!known) {
    load_padded(keybuf, *rec.key);
    fr = unwrap(*rec.key, keybuf, true);
    if (fr.wrapper && !fr.schema_null && fr.schema.present()) {
      schema = cached(key_schemas, rec.topic, fr.schema.view(), [](std::string_view t) { return compile_schema(t); });
    }
  }
  if (fr.wrapper && trim_token(fr.payload.view()) == "null") return;
  convert_row(fr.payload, keybuf, schema ? schema.get() : nullptr, key_b, fr.wrapper ? "key.payload" : "key");
  for (const auto& c : key_b.cols) key_names.emplace_back(key_b.name(c));
}

void Decoder::Impl::identity_from_topic(std::string_view topic, Change& c) {
  // <prefix>.<db>.<table>, <prefix>.<schema>.<table> (PostgreSQL, Oracle),
  // <prefix>.<db>.<schema>.<table> (SQL Server).
  std::array<std::string_view, 4> parts;  // the first three and the last
  size_t n = 0, start = 0;
  while (true) {  // find() is memchr: a topic name has a few dots among many bytes
    const size_t dot = topic.find('.', start);
    const size_t end = dot == std::string_view::npos ? topic.size() : dot;
    parts[n < 3 ? n : 3] = topic.substr(start, end - start);
    ++n;
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  const std::string_view last = n <= 3 ? parts[n - 1] : parts[3];
  if (c.table.empty()) c.table.assign(last);
  if (c.db.empty() && n >= 3) c.db.assign(parts[1]);
  if (c.schema.empty() && n >= 4) c.schema.assign(parts[2]);
}

bool Decoder::Impl::resolve_key_columns(Change& c) {
  c.key_columns.clear();
  if (table_opts != nullptr && !table_opts->key_columns.empty()) {
    c.key_columns = table_opts->key_columns;
    return false;
  }
  if (!opt.key_columns.empty()) {
    scratch2.assign(c.db);
    scratch2.push_back('.');
    scratch2.append(c.table);
    auto it = opt.key_columns.find(scratch2);
    if (it != opt.key_columns.end()) {
      c.key_columns = it->second;
      return false;
    }
  }
  for (const auto& n : key_names) c.key_columns.push_back(n);
  return true;
}

// Before-key != after-key? Only decidable when both images carry every key column.
bool Decoder::Impl::key_changed(const Change& c) const {
  if (c.key_columns.empty() || !before_b.present) return false;
  for (const auto& k : c.key_columns) {
    const Col* b = before_b.find(k);
    const Col* a = after_b.find(k);
    if (b == nullptr || a == nullptr) return false;
    if (before_b.value(*b) != after_b.value(*a)) return true;
  }
  return false;
}

void Decoder::Impl::delete_from_key(Change& c, const std::optional<Failure>& key_failure) {
  if (key_b.cols.empty()) {
    if (key_failure) throw *key_failure;
    fail(DecodeErrorCode::MissingKey, "a Kafka key holding the primary key (the delete has no before-image)",
         "key is null");
  }
  // Only the key is known: a partial-column delete, so NOT NULL columns
  // without the value are not an issue (docs/decoding.md).
  RowBuild& b = key_b;
  for (auto& col : b.cols) col.toast = false;
  emit_row(c, b, true, true);
}

void Decoder::Impl::remember_identity(std::string_view topic, const Change& c) {
  // Most records repeat the previous one's topic and table: no lookup then.
  if (last_identity_ != nullptr && topic == last_identity_topic_ && c.table == last_identity_->table &&
      c.db == last_identity_->db && c.schema == last_identity_->schema)
    return;
  auto it = identity_by_topic_.find(topic);
  if (it == identity_by_topic_.end()) {
    if (identity_by_topic_.size() >= 4096) identity_by_topic_.clear();  // bounded, like the schema caches
    it = identity_by_topic_.emplace(std::string(topic), TopicIdentity{c.db, c.schema, c.table, false}).first;
  } else if (it->second.table != c.table || it->second.db != c.db || it->second.schema != c.schema) {
    it->second.several = true;
  }
  last_identity_ = it->second.several ? nullptr : &it->second;
  last_identity_topic_.assign(topic);
}

void Decoder::Impl::identify_tombstone(const KafkaRecord& rec, Change& c, bool flattened) {
  // Debezium writes a tombstone after each delete so that compaction can
  // drop the key; once it has, the tombstone is all a reader from the start
  // sees of the delete. Its table is that of the topic's changes (their
  // source block may name the database differently from the topic:
  // PostgreSQL's topic holds the schema), else the topic's name.
  if (!flattened && follows_delete(rec)) {  // the delete right before it did the work
    c.kind = Kind::Tombstone;
    ++stats.tombstones;
    return;
  }
  if (auto it = identity_by_topic_.find(rec.topic); it != identity_by_topic_.end() && !flattened) {
    if (it->second.several) {
      c.kind = Kind::Tombstone;  // which of the topic's tables? deleting in the wrong one would lose a row
      ++stats.tombstones;
      return;
    }
    c.db = it->second.db;
    c.schema = it->second.schema;
    c.table = it->second.table;
  }
  identity_from_topic(rec.topic, c);
  if (!flattened && key_b.cols.empty()) {  // no key: nothing to delete
    c.kind = Kind::Tombstone;
    ++stats.tombstones;
    return;
  }
  c.op = 'd';
  id.pending = Pending::Tombstone;  // convert_record() deletes the key
}

}  // namespace cdc2doris::decode
