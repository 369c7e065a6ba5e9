// The record: the {schema, payload} wrapper, the payload scan, the source
// block; identify_record() tying them together and convert_record() writing
// the rows with the target's context.
#include "core/decode/detail/decoder_impl.hpp"

namespace cdc2doris::decode {

CompiledValue Decoder::Impl::compile_value(std::string_view text) {
  CompiledValue cv;
  cv.root = compile_schema(text);
  if (cv.root.type != ConnectType::Struct) throw std::runtime_error("schema: expected a struct value schema");
  const bool envelope_name = cv.root.name.size() >= 9 && cv.root.name.compare(cv.root.name.size() - 9, 9, ".Envelope") == 0;
  const SchemaNode* op = cv.root.find("op");
  cv.before = cv.root.find("before");
  cv.after = cv.root.find("after");
  const bool special = cv.root.name.find("SchemaChangeValue") != std::string::npos ||
                       cv.root.name.find("TransactionMetadataValue") != std::string::npos ||
                       cv.root.name.find("connector.common.Heartbeat") != std::string::npos;
  cv.flat = !envelope_name && op == nullptr && !special;
  return cv;
}

// Finds {"schema","payload"} (or decides there is no wrapper).
Decoder::Impl::Frame Decoder::Impl::unwrap(std::string_view value, const std::string& owner, bool allow_wrapper) {
  Frame fr;
  path.clear();
  const char* begin = owner.data();
  const char* end = owner.data() + value.size();
  // Peek at the first key textually: a schemaless record then needs no
  // extra simdjson pass just to learn it has no wrapper.
  const char* p = begin;
  while (p < end && is_ws(*p)) ++p;
  bool candidate = false;
  if (p < end && *p == '{') {
    ++p;
    while (p < end && is_ws(*p)) ++p;
    std::string_view rest(p, static_cast<size_t>(end - p));
    candidate = rest.starts_with("\"schema\"") || rest.starts_with("\"payload\"");
  }
  // simdjson 3.0.1 On-Demand cannot report content after the root value;
  // the last byte must at least close the object (catches truncation and
  // trailing junk; docs/decoding.md notes the limit).
  const char* q = end;
  while (q > begin && is_ws(q[-1])) --q;
  if (q == begin || q[-1] != '}') {
    std::string detail = "truncated or trailing content: ";
    if (q == begin) {
      detail += "nothing but whitespace";
    } else {
      const auto last = static_cast<unsigned char>(q[-1]);
      detail += "it ends at byte " + std::to_string(q - begin - 1) + " of " + std::to_string(value.size()) + " with ";
      detail += last >= 0x20 && last < 0x7f ? "'" + std::string(1, static_cast<char>(last)) + "'" : "byte " + std::to_string(last);
    }
    fail(DecodeErrorCode::InvalidJson, "a JSON object ending in '}'", std::move(detail));
  }
  if (!allow_wrapper || !candidate) {
    fr.payload = Span{begin, end};
    return fr;
  }
  sj::document doc = iterate(begin, value.size(), owner);
  sj::object top = doc.get_object();
  Span* open = nullptr;
  bool first = true;
  for (auto f : top) {
    sj::raw_json_string rk = f.key();
    std::string_view key = f.unescaped_key();
    if (open != nullptr) {
      open->end = end_before_key(open->begin, rk.raw());
      open = nullptr;
    }
    if (first) {
      first = false;
      fr.wrapper = allow_wrapper && (key == "schema" || key == "payload");
      if (!fr.wrapper) break;
    }
    sj::value v = f.value();
    Span* target = key == "schema" ? &fr.schema : key == "payload" ? &fr.payload : nullptr;
    if (target != nullptr) {
      target->begin = trim_token(v.raw_json_token()).data();
      open = target;
      if (key == "schema") {
        fr.schema_null = type_of(v) == sj::json_type::null;
      }
    }
  }
  if (!fr.wrapper) {
    fr.payload = Span{begin, end};
    return fr;
  }
  if (open != nullptr) open->end = end_before_close(open->begin, end);
  expect_end(doc, owner);
  if (!fr.payload.present()) fail(DecodeErrorCode::MissingField, "\"payload\" in the {schema, payload} envelope");
  return fr;
}

void Decoder::Impl::expect_end(sj::document& doc, const std::string& owner) {
  const char* at = leftover(doc);
  if (at == nullptr) return;
  path.clear();
  fail(DecodeErrorCode::InvalidJson, "nothing after the JSON object's closing '}'",
       "more content at byte " + std::to_string(at - owner.data()));
}

std::optional<int64_t> Decoder::Impl::opt_int(sj::value& v) {
  int64_t x;
  std::string_view raw = trim_token(v.raw_json_token());
  if (parse_int64(raw, x)) return x;
  return std::nullopt;  // e.g. an lsn that lost precision upstream: position only
}

void Decoder::Impl::assign_text(sj::value& v, std::string& dst) {
  const std::string_view raw = trim_token(v.raw_json_token());
  if (!raw.empty() && raw.front() == '"') {
    // Without an escape the text is the raw token: no unescaping copy.
    if (raw.size() >= 2 && raw.back() == '"' && std::memchr(raw.data() + 1, '\\', raw.size() - 2) == nullptr) {
      dst.assign(raw.data() + 1, raw.size() - 2);
    } else {
      dst.assign(string_value(v));
    }
  } else if (raw == "null") {
    dst.clear();
  } else {
    dst.assign(raw);
  }
}

void Decoder::Impl::parse_source(sj::value& v, Change& c) {
  if (type_of(v) != sj::json_type::object) {
    if (type_of(v) == sj::json_type::null) return;
    fail(DecodeErrorCode::TypeMismatch, "an object", type_name(type_of(v)));
  }
  sj::object obj = v.get_object();
  SourcePosition& p = c.position;
  PathLevel level(path);
  for (auto res : obj) {
    sj::field& f = take_field(res, level);
    sj::value& fv = f.value();
    const std::string_view key = key_of(f, fv).text;
    // Half of a source block is not needed (version, name, server_id,
    // thread, query, ...): rule fields out by length before comparing.
    std::string* text = nullptr;
    std::optional<int64_t>* num = nullptr;
    switch (key.size()) {
      case 2:
        if (is(key, "db")) text = &c.db;
        break;
      case 3:
        if (is(key, "pos")) num = &p.pos;
        else if (is(key, "row")) num = &p.row;
        else if (is(key, "lsn")) num = &p.lsn;
        else if (is(key, "scn")) text = &p.scn;
        break;
      case 4:
        if (is(key, "file")) text = &p.file;
        else if (is(key, "gtid")) text = &p.gtid;
        else if (is(key, "txId")) num = &p.tx_id;
        break;
      case 5:
        if (is(key, "table")) text = &c.table;
        else if (is(key, "ts_ms")) num = &p.ts_ms;
        break;
      case 6:
        if (is(key, "schema")) text = &c.schema;
        break;
      case 8:
        if (is(key, "snapshot")) text = &p.snapshot;
        break;
      case 9:
        if (is(key, "connector")) text = &p.connector;
        break;
      case 10:
        if (is(key, "collection")) text = &c.table;
        else if (is(key, "commit_lsn")) text = &p.commit_lsn;
        else if (is(key, "change_lsn")) text = &p.change_lsn;
        else if (is(key, "commit_scn")) text = &p.commit_scn;
        break;
      case 15:
        if (is(key, "event_serial_no")) num = &p.event_serial_no;
        break;
      default:
        break;
    }
    if (text == nullptr && num == nullptr) continue;
    level.enter(key);
    if (text != nullptr) {
      assign_text(fv, *text);
    } else {
      *num = opt_int(fv);
    }
  }
  if (p.snapshot == "false") p.snapshot.clear();
  level.leave();
}

Decoder::Impl::PayloadInfo Decoder::Impl::scan_payload(Span payload, const std::string& owner, Change& c, bool flattened, std::string_view root,
                                                       const EagerImages* eager) {
  PayloadInfo pi;
  path.clear();
  path_root = root;
  payload_doc = iterate(payload.begin, static_cast<size_t>(payload.end - payload.begin), owner);
  payload_live = true;
  sj::object obj;
  if (auto err = payload_doc.get_object().get(obj); err != simdjson::SUCCESS) {
    if (err == simdjson::INCORRECT_TYPE) fail(DecodeErrorCode::NotAnEnvelope, "a JSON object");
    throw simdjson::simdjson_error(err);
  }
  Span* open = nullptr;
  const FlattenedFields& ff = opt.flattened;
  PathLevel level(path);
  for (auto res : obj) {
    sj::field& f = take_field(res, level);
    if (open != nullptr) {
      open->end = end_before_key(open->begin, f.key().raw());
      open = nullptr;
    }
    sj::value& v = f.value();
    const std::string_view key = key_of(f, v).text;
    level.enter(key);
    if (flattened) {
      if (key == ff.deleted) {
        auto t = type_of(v);
        if (t == sj::json_type::string) pi.deleted = string_value(v) == "true";
        else if (t == sj::json_type::boolean) pi.deleted = trim_token(v.raw_json_token()) == "true";
      } else if (key == ff.op) {
        if (type_of(v) == sj::json_type::string) {
          std::string_view s = string_value(v);
          if (s.size() == 1) pi.op = s[0];
        }
      } else if (key == ff.table) {
        assign_text(v, c.table);
      } else if (key == ff.db) {
        assign_text(v, c.db);
      } else if (key == ff.schema) {
        assign_text(v, c.schema);
      } else if (key == ff.source_ts) {
        c.position.ts_ms = opt_int(v);
      } else if (key == ff.lsn) {
        c.position.lsn = opt_int(v);
      }
      continue;
    }
    if (!is(key, "ts_ms") && !is(key, "ts_us") && !is(key, "ts_ns")) pi.has_ts_only = false;
    if (is(key, "op")) {
      pi.has_op = true;
      auto t = type_of(v);
      if (t != sj::json_type::string) fail(DecodeErrorCode::BadOp, "op as one of \"c\",\"u\",\"d\",\"r\",\"t\",\"m\"", type_name(t));
      std::string_view s = string_value(v);
      if (s.size() != 1 || std::string_view("cudrtm").find(s[0]) == std::string_view::npos)
        fail(DecodeErrorCode::BadOp, "op as one of \"c\",\"u\",\"d\",\"r\",\"t\",\"m\"", "\"" + std::string(s.substr(0, 16)) + "\"");
      pi.op = s[0];
    } else if (is(key, "before") || is(key, "after")) {
      Span& s = is(key, "before") ? pi.before : pi.after;
      (is(key, "before") ? pi.has_before : pi.has_after) = true;
      auto t = type_of(v);
      (is(key, "before") ? pi.before_type : pi.after_type) = t;
      if (t == sj::json_type::object) {
        s.begin = trim_token(v.raw_json_token()).data();
        open = &s;
        if (eager != nullptr) {
          sj::object o = v.get_object();
          if (&s == &pi.after) {
            convert_object(o, eager->after, after_b, {}, nullptr);
            pi.after_done = true;
          } else if (eager->key_columns != nullptr && !eager->key_columns->empty()) {
            convert_object(o, eager->before, before_b, {}, eager->key_columns);
            pi.before_keys_done = true;
          }
        }
      }
    } else if (is(key, "source")) {
      pi.has_source = true;
      parse_source(v, c);
    } else if (is(key, "ddl")) {
      pi.has_ddl = true;
      if (type_of(v) == sj::json_type::string) c.ddl.assign(string_value(v));
    } else if (is(key, "tableChanges") || is(key, "databaseName")) {
      pi.has_ddl = true;
      if (is(key, "databaseName") && type_of(v) == sj::json_type::string && c.db.empty()) c.db.assign(string_value(v));
    } else if (is(key, "status")) {
      pi.has_status = true;
    } else if (is(key, "updateDescription")) {
      pi.has_update_description = true;
    }
  }
  level.leave();
  if (open != nullptr) open->end = end_before_close(open->begin, payload.end);
  expect_end(payload_doc, owner);
  path.clear();
  return pi;
}

bool Decoder::Impl::is_key_column_path(std::string_view path_text, std::string_view image_root, const Change& c) {
  if (path_text.size() <= image_root.size() + 1 || path_text.substr(0, image_root.size()) != image_root) return true;
  std::string_view column = path_text.substr(image_root.size() + 1);
  column = column.substr(0, std::min(column.find('.'), column.find('[')));
  return std::find(c.key_columns.begin(), c.key_columns.end(), column) != c.key_columns.end();
}

void Decoder::Impl::identify_record(const KafkaRecord& rec, Change& c) {
  payload_live = false;
  buf_offset = 0;
  known_wrapper_used = false;
  table_opts = nullptr;
  id.pending = Pending::None;
  id.schema.reset();
  id.predicted = false;
  id.keys_eager = false;
  c.kind = Kind::Change;
  c.db.clear();
  c.schema.clear();
  c.table.clear();
  c.op = 0;
  c.ddl.clear();
  c.key_columns.clear();
  c.primary_key_changed = false;
  c.deletes_ignored = 0;
  c.rows_filtered = 0;
  record = &rec;
  c.row_schema = nullptr;
  c.unknown_columns = false;
  c.position.clear();
  for (auto& r : c.rows) pool.push_back(std::move(r));
  c.rows.clear();
  before_b.clear();
  after_b.clear();

  const bool flattened = opt.envelope == Envelope::Flattened;

  if (rec.topic.rfind("__debezium-heartbeat", 0) == 0) {
    c.kind = Kind::Heartbeat;
    ++stats.heartbeats;
    return;
  }
  id.key_failure = parse_key(rec);

  if (!rec.value) {
    identify_tombstone(rec, c, flattened);
    return;
  }
  if (rec.value->size() > opt.max_record_bytes) {
    path_root = "value";
    path.clear();
    fail(DecodeErrorCode::TooLarge, "a record of at most " + std::to_string(opt.max_record_bytes) + " bytes",
         std::to_string(rec.value->size()) + " bytes");
  }
  path_root = "value";  // parse_key() left "key" there
  path.clear();
  Frame& fr = id.fr;
  fr = Frame{};
  std::shared_ptr<const CompiledValue>& schema = id.schema;
  if (known_wrapper_ok && opt.recognise_repeated_schemas && opt.envelope != Envelope::Plain && opt.use_schema)
    schema = known_wrapper(value_schemas, rec.topic, *rec.value, buf, fr, buf_offset);
  known_wrapper_used = schema != nullptr;
  if (!schema) {
    load_padded(buf, *rec.value);
    fr = unwrap(*rec.value, buf, opt.envelope != Envelope::Plain);
    if (opt.envelope == Envelope::Schema && !fr.wrapper)
      fail(DecodeErrorCode::NotAnEnvelope, "a {\"schema\":…,\"payload\":…} record (envelope: schema)");
    if (fr.wrapper && !fr.schema_null && fr.schema.present() && opt.use_schema) {
      path_root = "value.schema";
      schema = cached(value_schemas, rec.topic, fr.schema.view(), compile_value);
    }
  }
  if (fr.wrapper && trim_token(fr.payload.view()) == "null") {
    identify_tombstone(rec, c, flattened);
    return;
  }
  const std::string_view root = fr.wrapper ? "value.payload" : "value";
  id.root = root;
  const bool as_flat = flattened && (!schema || schema->flat);
  if (schema) c.row_schema = as_flat ? &schema->root : schema->after != nullptr ? schema->after : schema->before;
  // The column types of a schemaless record depend on its target table,
  // which follows the images in the record (the source block) and which the
  // caller routes after this: predict them from the topic's previous record
  // (none, as long as no context gave any) and convert again in
  // convert_change() if the prediction was wrong.
  id.hint_slot = nullptr;
  if (schema == nullptr && typed_contexts_) {
    if (auto it = hint_by_topic_.find(rec.topic); it != hint_by_topic_.end()) id.hint_slot = &it->second;
  }
  id.predicted = schema == nullptr && (!typed_contexts_ || id.hint_slot != nullptr);
  id.predicted_hint = id.hint_slot != nullptr ? *id.hint_slot : nullptr;
  EagerImages eager;
  const bool convert_eagerly = !as_flat && (schema != nullptr || id.predicted);
  if (convert_eagerly) {
    eager.before = schema ? schema->before : id.predicted_hint;
    eager.after = schema ? schema->after : id.predicted_hint;
    // The key columns too are the target's (TableOptions::key_columns):
    // predicted from the previous record converted.
    id.keys_eager = opt.key_columns.empty() && keys_from_kafka_key_;
    if (id.keys_eager) eager.key_columns = &key_names;
  }
  // A decoding error may come from a prediction that does not fit this
  // record's table: the verdict must come from its own context, so scan
  // again without it (anything else, e.g. bad_alloc, is not the record's fault).
  const bool guessed = convert_eagerly && (id.predicted || id.keys_eager);
  auto scan_unpredicted = [&] {
    id.predicted = id.keys_eager = false;
    before_b.clear();
    after_b.clear();
    return scan_payload(fr.payload, buf, c, as_flat, root, nullptr);
  };
  PayloadInfo& pi = id.pi;
  try {
    pi = scan_payload(fr.payload, buf, c, as_flat, root, convert_eagerly ? &eager : nullptr);
  } catch (const Failure&) {
    if (!guessed) throw;
    pi = scan_unpredicted();
  } catch (const simdjson::simdjson_error&) {
    if (!guessed) throw;
    pi = scan_unpredicted();
  }

  if (as_flat) {
    identity_from_topic(rec.topic, c);
    id.is_delete = (pi.deleted && *pi.deleted) || pi.op == 'd';
    c.op = pi.op != 0 ? pi.op : (id.is_delete ? 'd' : 'u');
    id.pending = Pending::Flat;
    return;
  }

  if (!pi.has_op) {
    identity_from_topic(rec.topic, c);
    if (pi.has_ddl) {
      c.kind = Kind::SchemaChange;
      ++stats.schema_changes;
      return;
    }
    if (pi.has_status && !pi.has_before && !pi.has_after) {
      c.kind = Kind::TransactionMetadata;
      ++stats.transaction_records;
      return;
    }
    if (pi.has_ts_only && !pi.has_before && !pi.has_after) {
      c.kind = Kind::Heartbeat;
      ++stats.heartbeats;
      return;
    }
    if (!pi.has_before && !pi.has_after && !pi.has_source)
      fail(DecodeErrorCode::NotAnEnvelope,
           "a Debezium change event (before/after/source/op); for ExtractNewRecordState output set envelope: flattened");
    path_root = root;
    path.clear();
    fail(DecodeErrorCode::MissingField, "\"op\" in the change event");
  }
  c.op = pi.op;
  if (c.position.connector == "mongodb" || pi.has_update_description || pi.after_type == sj::json_type::string ||
      pi.before_type == sj::json_type::string) {
    path_root = root;
    path.clear();
    fail(DecodeErrorCode::Unsupported, "a relational Debezium change event",
         "MongoDB change events are not supported (before/after are Extended-JSON strings)");
  }
  identity_from_topic(rec.topic, c);
  remember_identity(rec.topic, c);
  if (c.op == 't') {
    c.kind = Kind::Truncate;
    ++stats.truncates;
    id.pending = Pending::Keys;
    return;
  }
  if (c.op == 'm') {
    c.kind = Kind::Message;
    ++stats.messages;
    id.pending = Pending::Keys;
    return;
  }
  id.pending = Pending::Change;
}

void Decoder::Impl::convert_record(const TableContext& ctx, Change& c) {
  const Pending pending = id.pending;
  id.pending = Pending::None;  // once
  if (pending == Pending::None) return;
  table_opts = ctx.options;
  const bool from_key = resolve_key_columns(c);
  switch (pending) {
    case Pending::None:
    case Pending::Keys: return;
    case Pending::Tombstone:
      delete_from_key(c, id.key_failure);
      ++stats.changes;
      return;
    case Pending::Flat: {
      const SchemaNode* row_schema = id.schema ? &id.schema->root : ctx.column_types;
      convert_image({}, row_schema, after_b, id.root, opt.flattened.metadata_prefix);
      emit_row(c, after_b, id.is_delete, after_b.toast && !id.is_delete);
      ++stats.changes;
      return;
    }
    case Pending::Change:
      keys_from_kafka_key_ = from_key;
      // The before-image's key columns converted while scanning were the
      // Kafka key's fields: other key columns convert again below.
      if (id.keys_eager && !from_key) id.pi.before_keys_done = false;
      convert_change(ctx, c);
      return;
  }
}

void Decoder::Impl::convert_change(const TableContext& ctx, Change& c) {
  const std::shared_ptr<const CompiledValue>& schema = id.schema;
  PayloadInfo& pi = id.pi;
  const Frame& fr = id.fr;
  const std::string_view root = id.root;
  const SchemaNode* hint = schema ? nullptr : ctx.column_types;
  if (!schema) {
    if (id.predicted && hint != id.predicted_hint) pi.after_done = pi.before_keys_done = false;
    typed_contexts_ = typed_contexts_ || hint != nullptr;
    if (id.hint_slot != nullptr) {
      *id.hint_slot = hint;
    } else if (typed_contexts_) {
      if (hint_by_topic_.size() >= 4096) hint_by_topic_.clear();  // bounded, like the schema caches
      hint_by_topic_.emplace(std::string(record->topic), hint);
    }
  }
  const SchemaNode* before_schema = schema ? schema->before : hint;
  const SchemaNode* after_schema = schema ? schema->after : hint;
  const std::string_view before_root = fr.wrapper ? "value.payload.before" : "value.before";
  const std::string_view after_root = fr.wrapper ? "value.payload.after" : "value.after";
  if (c.op == 'd') {
    if (pi.before.present()) {
      bool partial = false;
      try {
        convert_image("before", before_schema, before_b, before_root);
      } catch (const Failure& f) {
        // A delete needs only the key. Under PostgreSQL REPLICA IDENTITY
        // DEFAULT, Debezium 3.x fills the non-key NOT NULL columns of the
        // before-image with type defaults ("" for a jsonb column too), which
        // may not convert: such a value must not fail the delete. The row is
        // then deleted by its key columns alone (a partial row).
        if (f.code != DecodeErrorCode::TypeMismatch || c.key_columns.empty() || is_key_column_path(f.path, before_root, c))
          throw;
        convert_image("before", before_schema, before_b, before_root, {}, &c.key_columns);
        partial = true;
      }
      // A before-image without the key columns (a partial image) cannot
      // identify the row; the Kafka key can.
      bool has_keys = true;
      for (const auto& k : c.key_columns) has_keys = has_keys && before_b.find(k) != nullptr;
      if (has_keys || key_b.cols.empty()) {
        emit_row(c, before_b, true, partial);
        ++stats.changes;
        return;
      }
    } else if (pi.before_type != sj::json_type::null) {
      path_root = before_root;
      fail(DecodeErrorCode::TypeMismatch, "an object or null", type_name(pi.before_type));
    }
    delete_from_key(c, id.key_failure);
    ++stats.changes;
    return;
  }
  // c, r, u
  if (!pi.after.present()) {
    path_root = std::string(root) + ".after";
    path.clear();
    if (pi.has_after && pi.after_type != sj::json_type::null)
      fail(DecodeErrorCode::TypeMismatch, "the after-image object", type_name(pi.after_type));
    fail(DecodeErrorCode::MissingField, std::string("the after-image (op ") + c.op + " requires it)",
         pi.has_after ? "null" : "absent");
  }
  if (!pi.after_done) convert_image("after", after_schema, after_b, after_root);
  if (c.op == 'u' && pi.before.present() && !c.key_columns.empty()) {
    // Key columns first: most updates keep their key, and converting the
    // whole before-image (timestamps, decimals, JSON) would be wasted.
    if (!pi.before_keys_done) convert_image("before", before_schema, before_b, before_root, {}, &c.key_columns);
    if (key_changed(c)) {
      c.primary_key_changed = true;
      ++stats.primary_key_changes;
      convert_image("before", before_schema, before_b, before_root);
      emit_row(c, before_b, true, false);
    }
  }
  if (after_b.toast && (c.op != 'u' || c.primary_key_changed)) unavailable_for_new_key(c, after_root);
  emit_row(c, after_b, false, after_b.toast);
  ++stats.changes;
}

// A partial row keeps the stored values of the columns it leaves out; a key
// that has no stored row yet would get NULL in them. PostgreSQL sends the
// TOAST placeholder in a create only after a key change under REPLICA
// IDENTITY DEFAULT (delete of the old key, create of the new one): the value
// is nowhere to be had, so the record is a bad record, never a silent NULL.
void Decoder::Impl::unavailable_for_new_key(const Change& c, std::string_view after_root) {
  for (const auto& col : after_b.cols) {
    if (!col.toast) continue;
    path.clear();
    path_root = std::string(after_root) + "." + std::string(after_b.name(col));
    fail(DecodeErrorCode::Unsupported,
         std::string("an available value: the row (op ") + c.op +
             ") is for a new key, which has no stored value to keep, so Doris would store NULL; PostgreSQL sends "
             "the TOAST placeholder for an unchanged large value after a key change under REPLICA IDENTITY "
             "DEFAULT (ALTER TABLE ... REPLICA IDENTITY FULL sends the value)",
         std::string(after_b.value(col).substr(0, 60)));
  }
}

}  // namespace cdc2doris::decode
