#pragma once
// Private to core/decode: the decoder's state and the helpers its parts share.
// Decoder::Impl's methods are defined by concern in decoder.cpp (construction,
// the API), envelope.cpp (wrapper, payload scan, source, the record),
// image_convert.cpp (values and row images) and rows.cpp (output rows, keys).
//
// Every file including this header must be compiled with the same -m flags
// (core/decode/CMakeLists.txt): simdjson picks its On-Demand implementation
// from the compile-time ISA, so a file built without them would see a
// different sj::parser and Impl would break the one-definition rule.
#include <absl/time/time.h>
#include <simdjson.h>
#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/decode/decoder.hpp"
#include "core/decode/wire_values.hpp"

namespace cdc2doris::decode {

namespace sj = simdjson::ondemand;

namespace detail {

inline constexpr std::string_view kDeleteSign = "__DORIS_DELETE_SIGN__";

struct Failure {
  DecodeErrorCode code;
  std::string path;
  std::string expected;
  std::string detail;
};

struct Span {
  const char* begin = nullptr;
  const char* end = nullptr;
  bool present() const { return begin != nullptr; }
  std::string_view view() const { return {begin, static_cast<size_t>(end - begin)}; }
};

inline bool is_ws(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

inline std::string_view trim_token(std::string_view t) {
  while (!t.empty() && is_ws(t.back())) t.remove_suffix(1);
  return t;
}

// Equality with a literal of known length: the compiler turns the memcmp into
// a couple of integer compares (these run for every field of every record).
template <size_t N>
bool is(std::string_view s, const char (&lit)[N]) {
  return s.size() == N - 1 && std::memcmp(s.data(), lit, N - 1) == 0;
}

// The value of the previous field ends before the ',' that precedes the next
// key (`next_key` points just after that key's opening quote).
inline const char* end_before_key(const char* value_begin, const char* next_key) {
  const char* p = next_key - 1;  // the quote
  while (p > value_begin && is_ws(p[-1])) --p;
  if (p > value_begin && p[-1] == ',') --p;
  while (p > value_begin && is_ws(p[-1])) --p;
  return p;
}

// The last field's value ends before the object's closing brace.
inline const char* end_before_close(const char* value_begin, const char* object_end) {
  const char* p = object_end;
  while (p > value_begin && is_ws(p[-1])) --p;
  if (p > value_begin && p[-1] == '}') --p;
  while (p > value_begin && is_ws(p[-1])) --p;
  return p;
}

// The field path of the value being decoded (for error messages). Levels are
// overwritten in place: this runs for every field of every record, where
// std::vector's resize/push_back calls showed up in profiles.
class PathStack {
 public:
  size_t size() const { return n_; }
  void clear() { n_ = 0; }
  void resize(size_t n) { n_ = n < n_ ? n : n_; }  // only ever shrinks
  void push_back(std::string_view s) {
    if (n_ < items_.size()) {
      items_[n_] = s;
    } else {
      items_.push_back(s);
    }
    ++n_;
  }
  const std::string_view* begin() const { return items_.data(); }
  const std::string_view* end() const { return items_.data() + n_; }

 private:
  std::vector<std::string_view> items_;
  size_t n_ = 0;
};

// Which lengths a small set of strings has: most values are ruled out as a
// TOAST placeholder by their length alone, without comparing them to the
// placeholder in each of its encodings.
class LengthSet {
 public:
  void add(size_t n) {
    if (n < kBits) bits_[n / 64] |= uint64_t{1} << (n % 64);
    else long_ = true;
  }
  bool contains(size_t n) const { return n < kBits ? (bits_[n / 64] >> (n % 64)) & 1 : long_; }

 private:
  static constexpr size_t kBits = 256;
  uint64_t bits_[kBits / 64] = {};
  bool long_ = false;
};

struct Col {
  uint32_t name_off, name_len, val_off, val_len;
  bool toast;
  bool unknown;  // the schema (a schemaless type hint) does not name it
};

// A row body under construction: `{"a":1,"b":"x"` plus where each column is.
// The opening brace is there from the start so a full row can take the
// buffer over (swap) instead of copying it.
struct RowBuild {
  std::string body = "{";
  std::vector<Col> cols;
  bool toast = false;
  bool present = false;
  bool unknown = false;  // a field the schema (a schemaless type hint) does not name
  void clear() {
    body.assign(1, '{');
    cols.clear();
    toast = false;
    present = false;
    unknown = false;
  }
  std::string_view name(const Col& c) const { return {body.data() + c.name_off, c.name_len}; }
  std::string_view value(const Col& c) const { return {body.data() + c.val_off, c.val_len}; }
  const Col* find(std::string_view n) const {
    for (const auto& c : cols) {
      if (name(c) == n) return &c;
    }
    return nullptr;
  }
};

// How the columns of a row with one sequence of source names are written
// under a table's ColumnTransforms: computed once per sequence (a table's
// rows repeat it), not per row.
struct ColumnPlan {
  const ColumnTransforms* transforms = nullptr;
  std::vector<std::string> source;  // the row's column names, in order
  std::vector<std::string> target;  // their Doris names; empty: excluded
  std::vector<std::string> key;     // `"target":`, ready to append
  std::vector<int> filter_cols;     // per RowFilter::columns() slot: its index in the row, -1: absent
};

struct CompiledValue {
  SchemaNode root;
  const SchemaNode* before = nullptr;
  const SchemaNode* after = nullptr;
  bool flat = false;  // not an Envelope: the row itself (flattened)
};

struct TransparentHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

template <typename T>
struct SchemaCache {
  struct Entry {
    std::string text;
    std::shared_ptr<const T> compiled;
  };
  std::unordered_map<std::string, Entry, TransparentHash, std::equal_to<>> last_by_topic;
  std::unordered_map<std::string, std::shared_ptr<const T>, TransparentHash, std::equal_to<>> by_text;
};
}  // namespace detail

using namespace detail;  // NOLINT: private header, included only by the decoder's own files


struct Decoder::Impl {
  DecoderOptions opt;
  absl::TimeZone tz;  // loaded once: conversions only look it up
  const absl::TimeZone* zone = nullptr;  // nullptr: UTC (no lookup at all)
  sj::parser parser;
  sj::document payload_doc;  // the record's payload, indexed once by scan_payload()
  bool payload_live = false;  // payload_doc is this record's (for error positions)
  // Where buf[0] sits in the record's value: 0, or the payload's offset when
  // a known schema let the record be unwrapped without parsing it.
  size_t buf_offset = 0;
  // known_wrapper() unwrapped this record's value; known_wrapper_ok is off
  // while a record is decoded again through unwrap().
  bool known_wrapper_used = false;
  bool known_wrapper_ok = true;
  sj::parser aux_parser;  // embedded JSON (io.debezium.data.Json) while the row doc is live
  std::string buf, keybuf, auxbuf, jsonbuf;
  std::string scratch, scratch2;
  DecodeStats stats;
  SchemaCache<CompiledValue> value_schemas;
  SchemaCache<SchemaNode> key_schemas;
  PathStack path;
  std::string path_root;
  std::vector<Row> pool;
  std::vector<std::string> toast_strings, toast_base64, toast_hex, toast_compact;
  LengthSet toast_string_lengths, toast_compact_lengths;

  // TableContext::options of the record being converted (nullptr: opt's own).
  const TableOptions* table_opts = nullptr;

  RowBuild before_b, after_b, key_b;
  std::vector<std::string> key_names;
  // Per topic, the column types (TableContext::column_types) of its last
  // schemaless record: the prediction for the next one, whose images the
  // payload scan converts before its context is known.
  std::unordered_map<std::string, const SchemaNode*, TransparentHash, std::equal_to<>> hint_by_topic_;
  // Whether a context has given column types yet: until then the prediction
  // is "none" for every topic, without looking the topic up.
  bool typed_contexts_ = false;
  // Whether the last record converted took its key columns from the Kafka
  // key (no per-table key_columns): the prediction that lets the payload scan
  // convert the before-image's key columns on the spot.
  bool keys_from_kafka_key_ = true;
  // The source identity of each topic's changes, for its tombstones, which
  // carry none (issue 31). `several`: the topic carries more than one table
  // (a Debezium topic router), so a tombstone's table is unknown.
  struct TopicIdentity {
    std::string db, schema, table;
    bool several = false;
  };
  std::unordered_map<std::string, TopicIdentity, TransparentHash, std::equal_to<>> identity_by_topic_;
  const TopicIdentity* last_identity_ = nullptr;  // the previous change's topic entry
  std::string last_identity_topic_;
  // Per partition, the last delete with a key: the tombstone Debezium
  // writes right after it (the next offset, same key) deletes nothing more,
  // and loading it would split the table's load (a key-only row is another
  // column set). By offset, so the verdict does not depend on how the
  // partitions' records interleave.
  struct LastDelete {
    int64_t offset = -1;
    std::string key;
  };
  std::map<std::pair<std::string, int32_t>, LastDelete> last_delete_;
  simdjson::dom::parser json_text_checker;  // check_json_text()'s validation pass

  explicit Impl(DecoderOptions o);

  void unavailable_for_new_key(const Change& c, std::string_view after_root);

  [[noreturn]] void fail(DecodeErrorCode code, std::string expected, std::string detail = {}) {
    throw Failure{code, current_path(), std::move(expected), std::move(detail)};
  }

  std::string current_path() const {
    std::string p = path_root;
    for (auto s : path) {
      if (!s.empty() && s[0] == '[') {
        p += s;
      } else {
        if (!p.empty()) p.push_back('.');
        p += s;
      }
    }
    return p;
  }

  // One nesting level of `path`. Deliberately not RAII: when a simdjson error
  // unwinds the stack, the path must still name the innermost field for the
  // error message, so a level is trimmed only when its loop moves on to the
  // next field or ends normally (each decoding phase starts from
  // path.clear()). Cheaper than asking std::uncaught_exceptions() per field.
  struct PathLevel {
    PathStack& path;
    size_t base;
    explicit PathLevel(PathStack& p) : path(p), base(p.size()) {}
    void enter(std::string_view s) {
      path.resize(base);
      path.push_back(s);
    }
    void leave() { path.resize(base); }
  };

  // A field's key as written in the input when it holds no escape or control
  // character (Debezium column names never do): no copy into simdjson's
  // string buffer, and it can be written out again verbatim. `raw` false: it
  // was unescaped and must go through append_json_string on output.
  struct Key {
    std::string_view text;
    bool raw = true;
  };
  Key key_of(sj::field& f, sj::value& v) {
    const char* b = f.key().raw();
    const char* limit = v.raw_json_token().data();
#if defined(__AVX2__)
    // 32 bytes at a time (this ran per field of every record, a byte at a
    // time it was a quarter of convert_object): every document handed to
    // simdjson has SIMDJSON_PADDING (64) readable bytes after its end, and a
    // block is only read from a position before the key's closing quote.
    const __m256i quote = _mm256_set1_epi8('"'), backslash = _mm256_set1_epi8('\\'),
                  ctrl = _mm256_set1_epi8(0x1f);
    for (const char* c = b; c < limit; c += 32) {
      const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(c));
      const auto q = static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(x, quote)));
      const auto bad = static_cast<uint32_t>(_mm256_movemask_epi8(
          _mm256_or_si256(_mm256_cmpeq_epi8(x, backslash), _mm256_cmpeq_epi8(_mm256_min_epu8(x, ctrl), x))));
      if (q != 0 || bad != 0) {
        // The first quote ends the key unless an escape or control byte comes first.
        if (q != 0 && (bad == 0 || __builtin_ctz(q) < __builtin_ctz(bad)))
          return Key{std::string_view(b, static_cast<size_t>(c + __builtin_ctz(q) - b)), true};
        break;
      }
    }
#else
    for (const char* c = b; c < limit; ++c) {  // keys are short: one inline pass beats memchr
      const auto ch = static_cast<unsigned char>(*c);
      if (ch == '"') return Key{std::string_view(b, static_cast<size_t>(c - b)), true};
      if (ch == '\\' || ch < 0x20) break;
    }
#endif
    std::string_view k;
    if (f.unescaped_key().get(k) != simdjson::SUCCESS) fail(DecodeErrorCode::InvalidJson, "an object key");
    return Key{k, false};
  }
  // The next field of an object. A framing error (a stray comma) is reported
  // at the object's path, not at the previous field's.
  // By reference: copying a field (three words written separately, then read
  // back as a vector) stalls on store forwarding, which measurably dominated
  // the per-field cost.
  static sj::field& take_field(simdjson::simdjson_result<sj::field>& r, PathLevel& level) {
    level.leave();
    if (r.error() != simdjson::SUCCESS) throw simdjson::simdjson_error(r.error());
    return r.value_unsafe();
  }
  static void append_key(const Key& k, std::string& out) {
    if (k.raw) {
      out.push_back('"');
      out.append(k.text);
      out.push_back('"');
    } else {
      append_json_string(k.text, out);
    }
  }

  // ---------------------------------------------------------------- parsing

  sj::document iterate(const char* begin, size_t len, const std::string& owner) {
    const size_t capacity = static_cast<size_t>(owner.data() + owner.capacity() - begin);
    return parser.iterate(simdjson::padded_string_view(begin, len, capacity));
  }

  static void load_padded(std::string& dst, std::string_view src) {
    dst.reserve(src.size() + simdjson::SIMDJSON_PADDING);
    dst.assign(src.data(), src.size());
  }

  bool is_toast_string(std::string_view raw_inner) const {
    if (!toast_string_lengths.contains(raw_inner.size())) return false;
    for (const auto& s : toast_strings) {
      if (raw_inner == s) return true;
    }
    for (const auto& s : toast_base64) {
      if (raw_inner == s) return true;
    }
    for (const auto& s : toast_hex) {
      if (raw_inner == s) return true;
    }
    return false;
  }
  bool is_toast_compact(std::string_view text) const {
    if (!toast_compact_lengths.contains(text.size())) return false;
    for (const auto& s : toast_compact) {
      if (text == s) return true;
    }
    return false;
  }

  // A validated string token, copied verbatim (already valid JSON text).
  std::string_view string_token(sj::value& v) { return string_token(v, trim_token(v.raw_json_token())); }
  // `raw`: v's trimmed raw token, when the caller has it already.
  std::string_view string_token(sj::value& v, std::string_view raw) {
    if (raw.size() < 2 || raw.front() != '"' || raw.back() != '"') fail(DecodeErrorCode::InvalidJson, "a string");
    if (std::memchr(raw.data() + 1, '\\', raw.size() - 2) != nullptr) {
      std::string_view unused;
      if (v.get_string().get(unused) != simdjson::SUCCESS) fail(DecodeErrorCode::InvalidJson, "a valid JSON string escape");
    }
    return raw;
  }

  std::string_view number_token(sj::value& v) { return number_token(trim_token(v.raw_json_token())); }
  std::string_view number_token(std::string_view raw) {
    if (!is_json_number(raw)) fail(DecodeErrorCode::InvalidJson, "a JSON number", std::string(raw.substr(0, 32)));
    return raw;
  }

  // Unescaped string content (points into the parser's string buffer).
  std::string_view string_value(sj::value& v) {
    std::string_view s;
    if (v.get_string().get(s) != simdjson::SUCCESS) fail(DecodeErrorCode::InvalidJson, "a valid JSON string");
    return s;
  }

  static const char* type_name(sj::json_type t) {
    switch (t) {
      case sj::json_type::array: return "an array";
      case sj::json_type::object: return "an object";
      case sj::json_type::number: return "a number";
      case sj::json_type::string: return "a string";
      case sj::json_type::boolean: return "a boolean";
      case sj::json_type::null: return "null";
    }
    return "?";
  }

  sj::json_type type_of(sj::value& v) {
    sj::json_type t;
    if (v.type().get(t) != simdjson::SUCCESS) fail(DecodeErrorCode::InvalidJson, "a JSON value");
    return t;
  }

  // ------------------------------------------------------- value conversion

  void emit_generic(sj::value v, std::string& out, size_t depth, bool& toast);
  void schemaless_variable_scale_decimal(std::string& out, size_t mark);

  void expect_type(sj::json_type actual, sj::json_type wanted, const char* what) {
    if (actual != wanted) fail(DecodeErrorCode::TypeMismatch, what, type_name(actual));
  }

  int64_t int_value(sj::value& v, const SchemaNode& node);
  void emit_bytes(std::string_view b64_raw_token, std::string& out, bool& toast);
  void emit_decimal_bytes(std::string_view inner, int32_t scale, std::string& out);
  void emit_struct_fields(sj::value& v, const SchemaNode& node, std::string& out, size_t depth);
  void emit_variable_scale_decimal(sj::value& v, std::string& out);
  void emit_geometry(sj::value& v, bool point, std::string& out);
  // Throws unless `text` is exactly one JSON value (io.debezium.data.Json).
  void check_json_text(std::string_view text, size_t depth);
  void emit_json_document(std::string& out, size_t depth);
  void emit_typed(sj::value v, const SchemaNode* node, std::string& out, size_t depth, bool& toast);
  // A schemaless value typed by its Doris target column (doris_types.hpp).
  void emit_doris_typed(sj::value& v, sj::json_type t, const SchemaNode& node, std::string& out, bool& toast);
  void convert_row(Span span, const std::string& owner, const SchemaNode* schema, RowBuild& b, std::string_view root);

  void convert_image(std::string_view field, const SchemaNode* schema, RowBuild& b, std::string_view root,
                     std::string_view skip_prefix = {}, const std::vector<std::string>* only = nullptr);

  void convert_object(sj::object& obj, const SchemaNode* schema, RowBuild& b, std::string_view skip_prefix,
                      const std::vector<std::string>* only);

  // ----------------------------------------------------------- output rows

  Row& new_row(Change& out);
  const ExtraColumns& extras_for(const Change& c);
  void append_extras(const Change& c, const ExtraColumns& ex, Row& r, bool list_names);
  void emit_row(Change& c, RowBuild& b, bool is_delete, bool partial);

  // ------------------------------------------------------ column transforms

  const KafkaRecord* record = nullptr;  // the record being decoded
  std::vector<ColumnPlan> plans;
  std::vector<std::string> filter_text;  // unescaped string values, per filter slot
  const ColumnTransforms& transforms_for() const {
    return table_opts != nullptr && table_opts->transforms ? *table_opts->transforms : opt.transforms;
  }
  const ColumnPlan& plan_for(const Change& c, const ColumnTransforms& tf, const RowBuild& b);
  // Whether the table's filter lets the row image in `b` load.
  RowFilter::Verdict filter_row(const Change& c, const ColumnTransforms& tf, const ColumnPlan& plan, const RowBuild& b);
  // The row's columns under their Doris names, excluded ones left out.
  void write_transformed(const ColumnPlan& plan, const RowBuild& b, bool partial, Row& r);
  void append_computed(const Change& c, const std::vector<ComputedColumn>& cols, Row& r, bool list_names);
  const DeleteOptions& deletes_for() const {
    return table_opts != nullptr && table_opts->deletes ? *table_opts->deletes : opt.deletes;
  }
  // Soft deletes: the flag (and deleted-at) every row of the table carries.
  void append_soft_columns(const Change& c, const DeleteOptions& d, bool deleted, Row& r, bool list_names);

  // ---------------------------------------------------------------- schema

  template <typename T, typename Compile>
  std::shared_ptr<const T> cached(SchemaCache<T>& cache, std::string_view topic, std::string_view text, Compile compile) {
    auto it = cache.last_by_topic.find(topic);
    if (it != cache.last_by_topic.end() && it->second.text == text) return it->second.compiled;
    std::shared_ptr<const T> compiled;
    if (auto hit = cache.by_text.find(text); hit != cache.by_text.end()) {
      compiled = hit->second;
    } else {
      ++stats.schema_cache_misses;
      try {
        compiled = std::make_shared<const T>(compile(text));
      } catch (const std::exception& e) {
        fail(DecodeErrorCode::SchemaInvalid, "a valid Kafka Connect schema", e.what());
      }
      // Bounded: schemas change rarely; a runaway producer must not grow memory.
      if (cache.by_text.size() > 4096) cache.by_text.clear();
      cache.by_text.emplace(std::string(text), compiled);
    }
    if (it == cache.last_by_topic.end()) {
      if (cache.last_by_topic.size() > 4096) cache.last_by_topic.clear();
      cache.last_by_topic.emplace(std::string(topic), typename SchemaCache<T>::Entry{std::string(text), compiled});
    } else {
      it->second.text.assign(text);
      it->second.compiled = compiled;
    }
    return compiled;
  }

  static CompiledValue compile_value(std::string_view text);

  // ------------------------------------------------------------- the record

  struct Frame {
    Span schema, payload;
    bool schema_null = true;
    bool wrapper = false;
  };

  Frame unwrap(std::string_view value, const std::string& owner, bool allow_wrapper);

  // A {schema, payload} record whose schema is byte for byte its topic's
  // last one (JsonConverter repeats the same text in every record; it is
  // ~80% of the bytes) is unwrapped by comparing that text instead of
  // parsing it: only the payload is copied and indexed. Returns the compiled
  // schema, or nullptr when the record does not start that way (unwrap()
  // then decides). Content between the payload and the closing brace (more
  // keys) is only found while the payload is read, as an error: a record
  // that fails after this is decoded again through unwrap() (Decoder::Impl::guarded),
  // so the verdict and the error positions are those of the full parse.
  template <typename T>
  std::shared_ptr<const T> known_wrapper(const SchemaCache<T>& cache, std::string_view topic, std::string_view value,
                                         std::string& owner, Frame& fr, size_t& offset) {
    static constexpr std::string_view kOpen = "{\"schema\":";
    static constexpr std::string_view kPayload = ",\"payload\":";
    if (!value.starts_with(kOpen)) return nullptr;
    auto it = cache.last_by_topic.find(topic);
    if (it == cache.last_by_topic.end()) return nullptr;
    const std::string& text = it->second.text;
    const size_t at = kOpen.size() + text.size() + kPayload.size();
    if (value.size() <= at || value.compare(kOpen.size(), text.size(), text) != 0 ||
        value.compare(kOpen.size() + text.size(), kPayload.size(), kPayload) != 0)
      return nullptr;
    const std::string_view rest = value.substr(at);
    load_padded(owner, rest);
    const char* begin = owner.data();
    const char* end = begin + rest.size();
    while (begin < end && is_ws(*begin)) ++begin;
    const char* close = end;
    while (close > begin && is_ws(close[-1])) --close;
    if (close == begin || close[-1] != '}') return nullptr;  // unwrap() names what is wrong
    fr = Frame{};
    fr.wrapper = true;
    fr.schema_null = false;
    fr.payload = Span{begin, end_before_close(begin, end)};
    offset = at;
    ++stats.schemas_recognised;
    return it->second.compiled;
  }

  // Where `doc` has content after its root value (nullptr: none). simdjson
  // On-Demand stops at the root's closing brace; whatever follows is only
  // seen by asking.
  static const char* leftover(sj::document& doc) {
    const char* at = nullptr;
    return doc.current_location().get(at) == simdjson::SUCCESS ? at : nullptr;
  }
  // A document's root object was read completely: more content after it is
  // an error.
  void expect_end(sj::document& doc, const std::string& owner);

  struct PayloadInfo {
    Span before, after;
    sj::json_type before_type = sj::json_type::null, after_type = sj::json_type::null;
    bool has_op = false, has_before = false, has_after = false, has_source = false;
    bool has_ddl = false, has_status = false, has_ts_only = true, has_update_description = false;
    char op = 0;
    // flattened metadata
    std::optional<bool> deleted;
    // Images already converted while scanning (see EagerImages).
    bool after_done = false, before_keys_done = false;
  };

  // When converting a row image needs nothing the rest of the record tells
  // (its schema is known up front, or there is none and no per-table hint;
  // the key columns come from the Kafka key), scan_payload() converts it on
  // the spot: the after-image whole, the before-image's key columns (enough
  // to see a primary-key change). Only deletes and key changes then go back
  // for the whole before-image.
  struct EagerImages {
    const SchemaNode* before = nullptr;
    const SchemaNode* after = nullptr;
    const std::vector<std::string>* key_columns = nullptr;  // nullptr: before-image later
  };

  std::optional<int64_t> opt_int(sj::value& v);
  void assign_text(sj::value& v, std::string& dst);
  void parse_source(sj::value& v, Change& c);

  PayloadInfo scan_payload(Span payload, const std::string& owner, Change& c, bool flattened, std::string_view root,
                           const EagerImages* eager);
  std::optional<Failure> parse_key(const KafkaRecord& rec);
  void read_key(const KafkaRecord& rec, bool allow_known, bool& known);
  void identity_from_topic(std::string_view topic, Change& c);
  // Sets c.key_columns; true when they are the Kafka key's fields.
  bool resolve_key_columns(Change& c);

  bool key_changed(const Change& c) const;

  void delete_from_key(Change& c, const std::optional<Failure>& key_failure);
  // A null value: a delete of the key in every envelope (the `d` before it
  // may have been compacted away); skipped without a key or a table.
  void identify_tombstone(const KafkaRecord& rec, Change& c, bool flattened);
  void remember_identity(std::string_view topic, const Change& c);
  // After a record decoded without error.
  void note_decoded(const KafkaRecord& rec, const Change& c) {
    if (c.kind != Kind::Change || c.op != 'd' || !rec.key) return;
    if (last_delete_.size() >= 4096) last_delete_.clear();  // bounded, like the schema caches
    LastDelete& d = last_delete_[{std::string(rec.topic), rec.partition}];
    d.offset = rec.offset;
    d.key.assign(*rec.key);
  }
  bool follows_delete(const KafkaRecord& rec) const {
    if (!rec.key || last_delete_.empty()) return false;
    auto it = last_delete_.find({std::string(rec.topic), rec.partition});  // tombstones only: rare
    return it != last_delete_.end() && it->second.offset + 1 == rec.offset && it->second.key == *rec.key;
  }


  // Whether an error path inside a row image names one of c's key columns
  // (or cannot be attributed to a column at all).
  static bool is_key_column_path(std::string_view path_text, std::string_view image_root, const Change& c);

  // ------------------------------------------------ identify, then convert

  // What convert_record() has to do for the record identify_record() read.
  enum class Pending {
    None,       // nothing: a record without a source table, or identify failed
    Keys,       // a truncate or message: its key columns only
    Tombstone,  // a delete of the Kafka key
    Flat,       // a flattened row
    Change,     // a change event's images
  };
  // The record identify_record() read, for convert_record(): valid until
  // the next identify_record() (its spans point into buf).
  struct Identified {
    Pending pending = Pending::None;
    Frame fr;
    std::shared_ptr<const CompiledValue> schema;
    PayloadInfo pi;
    std::optional<Failure> key_failure;
    std::string_view root;  // "value" or "value.payload"
    bool is_delete = false;  // flattened: a delete
    // The payload scan converted images with the topic's previous column types.
    bool predicted = false;
    const SchemaNode* predicted_hint = nullptr;
    // The topic's entry in hint_by_topic_ (nullptr: none yet), kept so that
    // convert() does not look it up again; nothing is added to the map between.
    const SchemaNode** hint_slot = nullptr;
    // The payload scan converted the before-image's key columns by the Kafka key's fields.
    bool keys_eager = false;
  };
  Identified id;
  void identify_record(const KafkaRecord& rec, Change& c);
  void convert_record(const TableContext& ctx, Change& c);
  void convert_change(const TableContext& ctx, Change& c);
  // identify_record() (ctx nullptr) or convert_record(*ctx), a failure
  // turned into the record's DecodeError.
  std::optional<DecodeError> guarded(const KafkaRecord& rec, Change& out, const TableContext* ctx);
};

}  // namespace cdc2doris::decode
