#include "core/decode/decoder.hpp"

#include <date/tz.h>
#include <simdjson.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <stdexcept>
#include <unordered_map>

#include "core/decode/values.hpp"

namespace cdc2doris::decode {

namespace sj = simdjson::ondemand;

const char* to_string(Kind k) {
  switch (k) {
    case Kind::Change: return "change";
    case Kind::Tombstone: return "tombstone";
    case Kind::Heartbeat: return "heartbeat";
    case Kind::TransactionMetadata: return "transaction";
    case Kind::SchemaChange: return "schema_change";
    case Kind::Truncate: return "truncate";
    case Kind::Message: return "message";
  }
  return "?";
}

const char* to_string(DecodeErrorCode c) {
  switch (c) {
    case DecodeErrorCode::InvalidJson: return "invalid_json";
    case DecodeErrorCode::InvalidUtf8: return "invalid_utf8";
    case DecodeErrorCode::TooDeep: return "too_deep";
    case DecodeErrorCode::TooLarge: return "too_large";
    case DecodeErrorCode::MissingField: return "missing_field";
    case DecodeErrorCode::BadOp: return "bad_op";
    case DecodeErrorCode::TypeMismatch: return "type_mismatch";
    case DecodeErrorCode::NotAnEnvelope: return "not_an_envelope";
    case DecodeErrorCode::MissingKey: return "missing_key";
    case DecodeErrorCode::Unsupported: return "unsupported";
    case DecodeErrorCode::SchemaInvalid: return "schema_invalid";
  }
  return "?";
}

std::string DecodeError::message() const {
  std::string m = topic + "/" + std::to_string(partition) + "@" + std::to_string(offset) + ": ";
  m += to_string(code);
  if (!path.empty()) m += " at " + path;
  if (!expected.empty()) m += ": expected " + expected;
  if (!detail.empty()) m += (expected.empty() ? ": " : ", got ") + detail;
  return m;
}

Error DecodeError::to_error() const {
  ErrorContext ctx;
  ctx.topic = topic;
  ctx.partition = partition;
  ctx.offset = offset;
  return Error(Disposition::Fail, message(), std::move(ctx));
}

void SourcePosition::clear() {
  connector.clear();
  ts_ms.reset();
  snapshot.clear();
  file.clear();
  pos.reset();
  row.reset();
  gtid.clear();
  lsn.reset();
  tx_id.reset();
  commit_lsn.clear();
  change_lsn.clear();
  event_serial_no.reset();
  scn.clear();
  commit_scn.clear();
}

std::optional<int64_t> SourcePosition::sequence() const {
  if ((connector == "mysql" || connector == "mariadb") && !file.empty() && pos) {
    // 20 bits binlog index | 32 bits position | 11 bits row-in-event: ordered
    // like (file, pos, row) as long as each part fits (docs/decoding.md).
    auto dot = file.rfind('.');
    int64_t index = 0;
    if (dot == std::string::npos || !parse_int64(std::string_view(file).substr(dot + 1), index)) {
      std::string_view digits = std::string_view(file).substr(dot == std::string::npos ? 0 : dot + 1);
      while (digits.size() > 1 && digits[0] == '0') digits.remove_prefix(1);
      if (!parse_int64(digits, index)) return std::nullopt;
    }
    if (index < 0 || index >= (1 << 20) || *pos < 0 || *pos > 0xFFFFFFFFLL) return std::nullopt;
    int64_t r = row.value_or(0);
    if (r < 0) r = 0;
    if (r > 2047) r = 2047;
    return (index << 43) | (*pos << 11) | r;
  }
  if (connector == "postgresql" && lsn) return lsn;
  if (connector == "oracle") {
    int64_t v;
    if (!commit_scn.empty() && parse_int64(commit_scn, v)) return v;
    if (!scn.empty() && parse_int64(scn, v)) return v;
  }
  return std::nullopt;
}

bool Row::is_delete() const {
  constexpr std::string_view suffix = "\"__DORIS_DELETE_SIGN__\":1}";
  return std::string_view(json).ends_with(suffix);
}

namespace {

constexpr std::string_view kDeleteSign = "__DORIS_DELETE_SIGN__";

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

bool is_ws(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

std::string_view trim_token(std::string_view t) {
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
const char* end_before_key(const char* value_begin, const char* next_key) {
  const char* p = next_key - 1;  // the quote
  while (p > value_begin && is_ws(p[-1])) --p;
  if (p > value_begin && p[-1] == ',') --p;
  while (p > value_begin && is_ws(p[-1])) --p;
  return p;
}

// The last field's value ends before the object's closing brace.
const char* end_before_close(const char* value_begin, const char* object_end) {
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

struct Col {
  uint32_t name_off, name_len, val_off, val_len;
  bool toast;
};

// A row body under construction: `{"a":1,"b":"x"` plus where each column is.
// The opening brace is there from the start so a full row can take the
// buffer over (swap) instead of copying it.
struct RowBuild {
  std::string body = "{";
  std::vector<Col> cols;
  bool toast = false;
  bool present = false;
  void clear() {
    body.assign(1, '{');
    cols.clear();
    toast = false;
    present = false;
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

}  // namespace

struct Decoder::Impl {
  DecoderOptions opt;
  const date::time_zone* zone = nullptr;
  sj::parser parser;
  sj::document payload_doc;  // the record's payload, indexed once by scan_payload()
  sj::parser aux_parser;  // embedded JSON (io.debezium.data.Json) while the row doc is live
  std::string buf, keybuf, auxbuf;
  std::string scratch, scratch2;
  DecodeStats stats;
  SchemaCache<CompiledValue> value_schemas;
  SchemaCache<SchemaNode> key_schemas;
  PathStack path;
  std::string path_root;
  std::vector<Row> pool;
  std::vector<std::string> toast_strings, toast_base64, toast_hex, toast_compact;

  RowBuild before_b, after_b, key_b;
  std::vector<std::string> key_names;
  // Per topic, the hint of its last record: the prediction for the next one.
  std::unordered_map<std::string, const SchemaNode*, TransparentHash, std::equal_to<>> hint_by_topic_;

  explicit Impl(DecoderOptions o) : opt(std::move(o)) {
    if (opt.time_zone.empty() || opt.time_zone == "UTC" || opt.time_zone == "Etc/UTC") {
      zone = nullptr;
    } else {
      try {
        zone = date::locate_zone(opt.time_zone);
      } catch (const std::exception& e) {
        throw std::invalid_argument("unknown time zone \"" + opt.time_zone + "\": " + e.what());
      }
    }
    if (parser.allocate(1 << 16, opt.max_depth + 8) != simdjson::SUCCESS ||
        aux_parser.allocate(1 << 12, opt.max_depth + 2) != simdjson::SUCCESS)
      throw std::runtime_error("simdjson parser allocation failed");
    for (const auto& p : opt.toast_placeholders) {
      // `hex:` means the placeholder is given as raw bytes (Debezium's syntax).
      std::string raw = p;
      if (raw.rfind("hex:", 0) == 0) {
        std::string bytes;
        for (size_t i = 4; i + 1 < raw.size(); i += 2) bytes.push_back(static_cast<char>(std::stoi(raw.substr(i, 2), nullptr, 16)));
        raw = bytes;
      }
      toast_strings.push_back(raw);
      std::string b64;
      base64_encode(raw, b64);
      toast_base64.push_back(b64);
      std::string hex;
      hex_encode(raw, hex);
      toast_hex.push_back(hex);
      // text[] / int[] / hstore forms (debezium-format.md §4.3)
      std::string js;
      append_json_string(raw, js);
      toast_compact.push_back("[" + js + "]");
      toast_compact.push_back("{" + js + ":" + js + "}");
      std::string ints = "[";
      for (size_t i = 0; i < raw.size(); ++i) {
        if (i) ints.push_back(',');
        ints += std::to_string(static_cast<unsigned char>(raw[i]));
      }
      ints.push_back(']');
      toast_compact.push_back(ints);
    }
  }

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
    for (const char* c = b; c < limit; ++c) {  // keys are short: one inline pass beats memchr
      const auto ch = static_cast<unsigned char>(*c);
      if (ch == '"') return Key{std::string_view(b, static_cast<size_t>(c - b)), true};
      if (ch == '\\' || ch < 0x20) break;
    }
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

  // Schemaless: JSON copied through, validated, compacted.
  void emit_generic(sj::value v, std::string& out, size_t depth, bool& toast) {
    if (depth > opt.max_depth) fail(DecodeErrorCode::TooDeep, "nesting of at most " + std::to_string(opt.max_depth) + " levels");
    // The type from the token's first byte, as simdjson's type() does: most
    // values are scalars copied through as their raw token, fetched once.
    const std::string_view tok = trim_token(v.raw_json_token());
    switch (tok.empty() ? '\0' : tok.front()) {
      case '"': {
        std::string_view raw = string_token(v, tok);
        if (is_toast_string(raw.substr(1, raw.size() - 2))) toast = true;
        out.append(raw);
        return;
      }
      case 't':
      case 'f':
      case 'n':
        if (tok != "true" && tok != "false" && tok != "null") fail(DecodeErrorCode::InvalidJson, "true, false or null");
        out.append(tok);
        return;
      case '{':
      case '[':
        break;  // containers below
      case '-':
      case '0':
      case '1':
      case '2':
      case '3':
      case '4':
      case '5':
      case '6':
      case '7':
      case '8':
      case '9':
        out.append(number_token(tok));
        return;
      default:
        fail(DecodeErrorCode::InvalidJson, "a JSON value");
    }
    if (tok.front() == '{') {
      // This object walk is repeated in emit_struct_fields and for maps: a
      // shared helper taking the value writer as a lambda measured ~8% slower
      // on schemaless records (bench-decode plain-untyped, A/B alternated),
      // although no object value is on that path: it changes how this
      // recursive function is compiled.
      const size_t mark = out.size();
      out.push_back('{');
      sj::object obj;
      if (v.get_object().get(obj) != simdjson::SUCCESS) fail(DecodeErrorCode::InvalidJson, "an object");
      bool first = true;
      PathLevel level(path);
      for (auto res : obj) {
        sj::field& f = take_field(res, level);
        sj::value& child = f.value();
        const Key key = key_of(f, child);
        level.enter(key.text);
        if (!first) out.push_back(',');
        first = false;
        append_key(key, out);
        out.push_back(':');
        bool child_toast = false;
        emit_generic(child, out, depth + 1, child_toast);
      }
      level.leave();
      out.push_back('}');
      if (is_toast_compact(std::string_view(out).substr(mark))) toast = true;
      schemaless_variable_scale_decimal(out, mark);
      return;
    }
    // '[': an array
    const size_t mark = out.size();
    out.push_back('[');
    sj::array arr;
    if (v.get_array().get(arr) != simdjson::SUCCESS) fail(DecodeErrorCode::InvalidJson, "an array");
    bool first = true;
    PathLevel level(path);
    level.enter("[]");
    for (auto item : arr) {
      sj::value child;
      if (item.get(child) != simdjson::SUCCESS) fail(DecodeErrorCode::InvalidJson, "an array element");
      if (!first) out.push_back(',');
      first = false;
      bool child_toast = false;
      emit_generic(child, out, depth + 1, child_toast);
    }
    level.leave();
    out.push_back(']');
    if (is_toast_compact(std::string_view(out).substr(mark))) toast = true;
  }

  // Without a schema, a VariableScaleDecimal (Oracle NUMBER, PostgreSQL
  // NUMERIC without scale) still has its unmistakable {"scale":N,"value":"b64"}
  // shape; turning it into the exact decimal beats loading a struct into a
  // numeric column.
  void schemaless_variable_scale_decimal(std::string& out, size_t mark) {
    std::string_view obj = std::string_view(out).substr(mark);
    constexpr std::string_view p1 = "{\"scale\":", p2 = ",\"value\":\"";
    if (!obj.starts_with(p1) || !obj.ends_with("\"}")) return;
    const auto comma = obj.find(p2);
    if (comma == std::string_view::npos) return;
    int64_t scale;
    if (!parse_int64(obj.substr(p1.size(), comma - p1.size()), scale) || scale < -1000 || scale > 1000) return;
    std::string_view b64 = obj.substr(comma + p2.size(), obj.size() - 2 - comma - p2.size());
    if (!base64_decode(b64, scratch)) return;
    out.resize(mark);
    out.push_back('"');
    decimal_from_twos_complement(scratch, static_cast<int32_t>(scale), out);
    out.push_back('"');
  }

  void expect_type(sj::json_type actual, sj::json_type wanted, const char* what) {
    if (actual != wanted) fail(DecodeErrorCode::TypeMismatch, what, type_name(actual));
  }

  int64_t int_value(sj::value& v, const SchemaNode& node) {
    // parse_int64 accepts only JSON integers, so on success the token needs
    // no separate syntax check; on failure number_token() says which it was.
    std::string_view raw = trim_token(v.raw_json_token());
    int64_t x;
    if (!parse_int64(raw, x)) {
      raw = number_token(v);
      fail(DecodeErrorCode::TypeMismatch, "an integer for Connect type int", std::string(raw.substr(0, 32)));
    }
    int64_t lo = INT64_MIN, hi = INT64_MAX;
    switch (node.type) {
      case ConnectType::Int8: lo = INT8_MIN; hi = INT8_MAX; break;
      case ConnectType::Int16: lo = INT16_MIN; hi = INT16_MAX; break;
      case ConnectType::Int32: lo = INT32_MIN; hi = INT32_MAX; break;
      default: break;
    }
    if (x < lo || x > hi) fail(DecodeErrorCode::TypeMismatch, "an integer in the range of the Connect type", std::string(raw));
    return x;
  }

  void emit_bytes(std::string_view b64_raw_token, std::string& out, bool& toast) {
    std::string_view inner = b64_raw_token.substr(1, b64_raw_token.size() - 2);
    if (is_toast_string(inner)) toast = true;
    if (!base64_decode(inner, scratch)) fail(DecodeErrorCode::TypeMismatch, "base64 bytes", std::string(inner.substr(0, 32)));
    if (opt.binary_mode == BinaryMode::Base64) {
      out.append(b64_raw_token);
    } else {
      out.push_back('"');
      hex_encode(scratch, out);
      out.push_back('"');
    }
  }

  void emit_decimal_bytes(std::string_view inner, int32_t scale, std::string& out) {
    if (!base64_decode(inner, scratch)) fail(DecodeErrorCode::TypeMismatch, "Decimal as base64 two's-complement bytes", std::string(inner.substr(0, 32)));
    out.push_back('"');
    decimal_from_twos_complement(scratch, scale, out);
    out.push_back('"');
  }

  void emit_struct_fields(sj::value& v, const SchemaNode& node, std::string& out, size_t depth) {
    sj::object obj;
    if (v.get_object().get(obj) != simdjson::SUCCESS) fail(DecodeErrorCode::InvalidJson, "an object");
    out.push_back('{');
    bool first = true;
    size_t hint = 0;
    PathLevel level(path);
    for (auto res : obj) {
      sj::field& f = take_field(res, level);
      sj::value& child = f.value();
      const Key key = key_of(f, child);
      level.enter(key.text);
      if (!first) out.push_back(',');
      first = false;
      append_key(key, out);
      out.push_back(':');
      bool t = false;
      emit_typed(child, node.find(key.text, hint), out, depth + 1, t);
    }
    level.leave();
    out.push_back('}');
  }

  void emit_variable_scale_decimal(sj::value& v, std::string& out) {
    sj::object obj;
    if (v.get_object().get(obj) != simdjson::SUCCESS) fail(DecodeErrorCode::TypeMismatch, "VariableScaleDecimal {scale, value}");
    std::optional<int64_t> scale;
    std::string_view value_b64;
    bool have_value = false;
    PathLevel level(path);
    for (auto res : obj) {
      sj::field& f = take_field(res, level);
      sj::value& child = f.value();
      const std::string_view key = key_of(f, child).text;
      level.enter(key);
      if (key == "scale") {
        int64_t s;
        if (!parse_int64(number_token(child), s) || s < -1000 || s > 1000) fail(DecodeErrorCode::TypeMismatch, "an int32 scale");
        scale = s;
      } else if (key == "value") {
        expect_type(type_of(child), sj::json_type::string, "base64 bytes");
        std::string_view raw = string_token(child);
        value_b64 = raw.substr(1, raw.size() - 2);
        have_value = true;
      }
    }
    if (!scale || !have_value) fail(DecodeErrorCode::MissingField, "VariableScaleDecimal with both scale and value");
    emit_decimal_bytes(value_b64, static_cast<int32_t>(*scale), out);
  }

  void emit_geometry(sj::value& v, bool point, std::string& out) {
    sj::object obj;
    if (v.get_object().get(obj) != simdjson::SUCCESS) fail(DecodeErrorCode::TypeMismatch, "a geometry struct");
    std::string_view x, y, wkb;
    PathLevel level(path);
    for (auto res : obj) {
      sj::field& f = take_field(res, level);
      sj::value& child = f.value();
      const std::string_view key = key_of(f, child).text;
      level.enter(key);
      auto t = type_of(child);
      if (t == sj::json_type::null) continue;
      if (key == "wkb") {
        expect_type(t, sj::json_type::string, "WKB as base64 bytes");
        std::string_view raw = string_token(child);
        wkb = raw.substr(1, raw.size() - 2);
      } else if (point && key == "x") {
        x = number_token(child);
      } else if (point && key == "y") {
        y = number_token(child);
      }
    }
    level.leave();
    if (!wkb.empty()) {
      if (!base64_decode(wkb, scratch2)) fail(DecodeErrorCode::TypeMismatch, "WKB as base64 bytes");
      out.push_back('"');
      if (opt.geometry_mode == GeometryMode::Hex || !wkb_to_wkt(scratch2, out)) hex_encode(scratch2, out);
      out.push_back('"');
      return;
    }
    if (point && !x.empty() && !y.empty()) {
      out.append("\"POINT(");
      out.append(x);
      out.push_back(' ');
      out.append(y);
      out.append(")\"");
      return;
    }
    out.append("null");
  }

  void emit_json_text(std::string_view text, std::string& out, size_t depth) {
    // Wrapping in [] makes scalar JSON texts parse like containers.
    auxbuf.reserve(text.size() + 2 + simdjson::SIMDJSON_PADDING);
    auxbuf.assign("[");
    auxbuf.append(text);
    auxbuf.push_back(']');
    const size_t base = path.size();
    try {
      emit_json_document(out, depth);
    } catch (const simdjson::simdjson_error& e) {
      path.resize(base);  // the error is the column's: its text is not JSON
      fail(DecodeErrorCode::TypeMismatch, "JSON text in an io.debezium.data.Json string", e.what());
    } catch (Failure& f) {
      // Bad JSON inside the string is a value that contradicts its type.
      f.code = f.code == DecodeErrorCode::TooDeep ? f.code : DecodeErrorCode::TypeMismatch;
      f.detail = "io.debezium.data.Json string: " + f.expected;
      f.expected = "JSON text";
      throw;
    }
  }

  void emit_json_document(std::string& out, size_t depth) {
    sj::document doc;
    if (aux_parser.iterate(simdjson::padded_string_view(auxbuf.data(), auxbuf.size(), auxbuf.capacity())).get(doc) != simdjson::SUCCESS)
      fail(DecodeErrorCode::TypeMismatch, "JSON text in an io.debezium.data.Json string");
    sj::array arr;
    if (doc.get_array().get(arr) != simdjson::SUCCESS) fail(DecodeErrorCode::TypeMismatch, "JSON text in an io.debezium.data.Json string");
    size_t n = 0;
    for (auto item : arr) {
      sj::value child;
      if (item.get(child) != simdjson::SUCCESS) fail(DecodeErrorCode::TypeMismatch, "JSON text in an io.debezium.data.Json string");
      if (n++ > 0) fail(DecodeErrorCode::TypeMismatch, "a single JSON value in an io.debezium.data.Json string");
      bool t = false;
      emit_generic(child, out, depth, t);
    }
    if (n != 1) fail(DecodeErrorCode::TypeMismatch, "a single JSON value in an io.debezium.data.Json string");
  }

  void emit_typed(sj::value v, const SchemaNode* node, std::string& out, size_t depth, bool& toast) {
    if (node == nullptr) {
      emit_generic(v, out, depth, toast);
      return;
    }
    if (depth > opt.max_depth) fail(DecodeErrorCode::TooDeep, "nesting of at most " + std::to_string(opt.max_depth) + " levels");
    const sj::json_type t = type_of(v);
    if (t == sj::json_type::null) {
      std::string_view raw = trim_token(v.raw_json_token());
      if (raw != "null") fail(DecodeErrorCode::InvalidJson, "null");
      out.append("null");
      return;
    }
    switch (node->type) {
      case ConnectType::Boolean: {
        expect_type(t, sj::json_type::boolean, "a boolean");
        std::string_view raw = trim_token(v.raw_json_token());
        if (raw != "true" && raw != "false") fail(DecodeErrorCode::InvalidJson, "true or false");
        out.append(raw);
        return;
      }
      case ConnectType::Int8:
      case ConnectType::Int16:
      case ConnectType::Int32:
      case ConnectType::Int64: {
        expect_type(t, sj::json_type::number, node->logical == Logical::None ? "an integer" : "an integer (epoch-based temporal value)");
        const int64_t x = int_value(v, *node);
        switch (node->logical) {
          case Logical::Date:
            out.push_back('"');
            format_date(x, out);
            out.push_back('"');
            return;
          case Logical::TimeMillis:
          case Logical::TimeMicros:
          case Logical::TimeNanos:
            out.push_back('"');
            format_time(x, node->logical == Logical::TimeMillis ? 1000 : node->logical == Logical::TimeMicros ? 1000000 : 1000000000, out);
            out.push_back('"');
            return;
          case Logical::TimestampMillis:
          case Logical::TimestampMicros:
          case Logical::TimestampNanos:
            out.push_back('"');
            format_timestamp(x, node->logical == Logical::TimestampMillis ? 1000 : node->logical == Logical::TimestampMicros ? 1000000 : 1000000000, out);
            out.push_back('"');
            return;
          default:
            out.append(trim_token(v.raw_json_token()));
            return;
        }
      }
      case ConnectType::Float:
      case ConnectType::Double:
        if (t == sj::json_type::string) {
          // Jackson writes NaN/Infinity as strings; kept as strings for Doris to judge.
          std::string_view raw = string_token(v);
          if (raw != "\"NaN\"" && raw != "\"Infinity\"" && raw != "\"-Infinity\"")
            fail(DecodeErrorCode::TypeMismatch, "a floating-point number", std::string(raw.substr(0, 32)));
          out.append(raw);
          return;
        }
        expect_type(t, sj::json_type::number, "a floating-point number");
        out.append(number_token(v));
        return;
      case ConnectType::String: {
        expect_type(t, sj::json_type::string, node->logical == Logical::None ? "a string" : "a string (temporal or JSON text)");
        switch (node->logical) {
          case Logical::ZonedTimestamp:
          case Logical::IsoTimestamp: {
            std::string_view s = string_value(v);
            if (is_toast_string(s)) {
              toast = true;
              append_json_string(s, out);
              return;
            }
            out.push_back('"');
            if (!format_zoned_timestamp(s, zone, out)) fail(DecodeErrorCode::TypeMismatch, "an ISO-8601 timestamp with offset", std::string(s.substr(0, 40)));
            out.push_back('"');
            return;
          }
          case Logical::ZonedTime:
          case Logical::IsoTime: {
            std::string_view s = string_value(v);
            out.push_back('"');
            if (!format_zoned_time(s, zone, out)) fail(DecodeErrorCode::TypeMismatch, "an ISO-8601 time with offset", std::string(s.substr(0, 40)));
            out.push_back('"');
            return;
          }
          case Logical::IsoDate: {
            std::string_view s = string_value(v);
            out.push_back('"');
            if (!format_iso_date(s, out)) fail(DecodeErrorCode::TypeMismatch, "an ISO-8601 date", std::string(s.substr(0, 40)));
            out.push_back('"');
            return;
          }
          case Logical::Json: {
            std::string_view s = string_value(v);
            if (is_toast_string(s)) {
              toast = true;
              append_json_string(s, out);
              return;
            }
            // string_value points into the main parser's buffer, which the
            // aux parse does not touch.
            emit_json_text(s, out, depth);
            return;
          }
          default: {
            std::string_view raw = string_token(v);
            if (is_toast_string(raw.substr(1, raw.size() - 2))) toast = true;
            out.append(raw);
            return;
          }
        }
      }
      case ConnectType::Bytes: {
        if (node->logical == Logical::Decimal) {
          if (t == sj::json_type::number) {  // decimal.format=NUMERIC: the text is exact
            std::string_view raw = number_token(v);
            out.push_back('"');
            out.append(raw);
            out.push_back('"');
            return;
          }
          expect_type(t, sj::json_type::string, "Decimal as base64 bytes");
          std::string_view raw = string_token(v);
          emit_decimal_bytes(raw.substr(1, raw.size() - 2), node->scale, out);
          return;
        }
        expect_type(t, sj::json_type::string, "base64 bytes");
        emit_bytes(string_token(v), out, toast);
        return;
      }
      case ConnectType::Struct:
        expect_type(t, sj::json_type::object, "a struct (JSON object)");
        if (node->logical == Logical::VariableScaleDecimal) {
          emit_variable_scale_decimal(v, out);
        } else if (node->logical == Logical::Geometry || node->logical == Logical::Point) {
          emit_geometry(v, node->logical == Logical::Point, out);
        } else {
          emit_struct_fields(v, *node, out, depth);
        }
        return;
      case ConnectType::Array: {
        expect_type(t, sj::json_type::array, "an array");
        const size_t mark = out.size();
        sj::array arr;
        if (v.get_array().get(arr) != simdjson::SUCCESS) fail(DecodeErrorCode::InvalidJson, "an array");
        out.push_back('[');
        bool first = true;
        PathLevel level(path);
        level.enter("[]");
        for (auto item : arr) {
          sj::value child;
          if (item.get(child) != simdjson::SUCCESS) fail(DecodeErrorCode::InvalidJson, "an array element");
          if (!first) out.push_back(',');
          first = false;
          bool ct = false;
          emit_typed(child, node->items.get(), out, depth + 1, ct);
        }
        level.leave();
        out.push_back(']');
        if (is_toast_compact(std::string_view(out).substr(mark))) toast = true;
        return;
      }
      case ConnectType::Map: {
        if (t == sj::json_type::object) {
          const size_t mark = out.size();
          sj::object obj;
          if (v.get_object().get(obj) != simdjson::SUCCESS) fail(DecodeErrorCode::InvalidJson, "an object");
          out.push_back('{');
          bool first = true;
          PathLevel level(path);
          for (auto res : obj) {
            sj::field& f = take_field(res, level);
            sj::value& child = f.value();
            const Key key = key_of(f, child);
            level.enter(key.text);
            if (!first) out.push_back(',');
            first = false;
            append_key(key, out);
            out.push_back(':');
            bool ct = false;
            emit_typed(child, node->values.get(), out, depth + 1, ct);
          }
          level.leave();
          out.push_back('}');
          if (is_toast_compact(std::string_view(out).substr(mark))) toast = true;
          return;
        }
        expect_type(t, sj::json_type::array, "a map (object or array of pairs)");
        emit_generic(v, out, depth, toast);
        return;
      }
    }
  }

  // Converts the row object in `span` (a document of its own: the Kafka key)
  // into `b`.
  void convert_row(Span span, const std::string& owner, const SchemaNode* schema, RowBuild& b, std::string_view root) {
    path.clear();
    path_root = root;
    sj::document doc = iterate(span.begin, static_cast<size_t>(span.end - span.begin), owner);
    sj::object obj = doc.get_object();
    convert_object(obj, schema, b, {}, nullptr);
    path.clear();
  }

  // Converts a row image of the payload scan_payload() indexed: `field`
  // ("after", "before") of the top-level object, or the top-level object
  // itself when empty (flattened records). Rewinding the document reuses
  // simdjson's index of the record instead of indexing the image again.
  void convert_image(std::string_view field, const SchemaNode* schema, RowBuild& b, std::string_view root,
                     std::string_view skip_prefix = {}, const std::vector<std::string>* only = nullptr) {
    path.clear();
    path_root = root;
    payload_doc.rewind();
    sj::object top = payload_doc.get_object();
    if (field.empty()) {
      convert_object(top, schema, b, skip_prefix, only);
      path.clear();
      return;
    }
    PathLevel level(path);
    for (auto res : top) {
      sj::field& f = take_field(res, level);
      sj::value& v = f.value();
      if (key_of(f, v).text != field) continue;
      sj::object obj = v.get_object();
      convert_object(obj, schema, b, skip_prefix, only);
      path.clear();
      return;
    }
    // scan_payload() saw the field, so this is unreachable for a document it accepted.
    fail(DecodeErrorCode::MissingField, "\"" + std::string(field) + "\" in the change event");
  }

  // `skip_prefix` drops SMT metadata fields of flattened records; `only`
  // limits the conversion to these columns (the key columns of a
  // before-image, enough to detect a primary-key change).
  void convert_object(sj::object& obj, const SchemaNode* schema, RowBuild& b, std::string_view skip_prefix,
                      const std::vector<std::string>* only) {
    b.clear();
    b.present = true;
    size_t hint = 0;
    PathLevel level(path);
    for (auto res : obj) {
      sj::field& f = take_field(res, level);
      sj::value& v = f.value();
      const Key key = key_of(f, v);
      if (!skip_prefix.empty() && key.text.substr(0, skip_prefix.size()) == skip_prefix) continue;
      if (only != nullptr && std::find(only->begin(), only->end(), key.text) == only->end()) continue;
      level.enter(key.text);
      if (b.body.size() > 1) b.body.push_back(',');
      Col c{};
      const size_t name_start = b.body.size() + 1;
      append_key(key, b.body);
      c.name_off = static_cast<uint32_t>(name_start);
      c.name_len = static_cast<uint32_t>(b.body.size() - 1 - name_start);
      b.body.push_back(':');
      c.val_off = static_cast<uint32_t>(b.body.size());
      bool toast = false;
      emit_typed(v, schema != nullptr ? schema->find(key.text, hint) : nullptr, b.body, 1, toast);
      c.val_len = static_cast<uint32_t>(b.body.size() - c.val_off);
      c.toast = toast;
      b.toast = b.toast || toast;
      b.cols.push_back(c);
    }
    level.leave();
  }

  // ----------------------------------------------------------- output rows

  Row& new_row(Change& out) {
    if (!pool.empty()) {
      out.rows.push_back(std::move(pool.back()));
      pool.pop_back();
    } else {
      out.rows.emplace_back();
    }
    Row& r = out.rows.back();
    r.json.clear();
    r.partial_columns.clear();
    return r;
  }

  const ExtraColumns& extras_for(const Change& c) {
    if (!opt.extra_columns_per_table.empty()) {
      scratch2.assign(c.db);
      scratch2.push_back('.');
      scratch2.append(c.table);
      auto it = opt.extra_columns_per_table.find(scratch2);
      if (it != opt.extra_columns_per_table.end()) return it->second;
    }
    return opt.extra_columns;
  }

  void append_extras(const Change& c, const ExtraColumns& ex, Row& r, bool list_names) {
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

  // partial: write only the non-TOAST columns and list them.
  // A full row takes b's buffer over (b is cleared): emit each image once.
  void emit_row(Change& c, RowBuild& b, bool is_delete, bool partial) {
    Row& r = new_row(c);
    const ExtraColumns& ex = extras_for(c);
    if (!partial) {
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
    if (ex.any()) {
      append_extras(c, ex, r, partial);
      if (empty) r.json.erase(1, 1);  // append_extras writes a leading comma
    }
    if (r.json.size() > 1) r.json.push_back(',');
    r.json += "\"__DORIS_DELETE_SIGN__\":";
    r.json.push_back(is_delete ? '1' : '0');
    r.json.push_back('}');
    if (partial) r.partial_columns.emplace_back(kDeleteSign);
    ++stats.rows;
    if (is_delete) ++stats.deletes;
    if (partial) ++stats.partial_rows;
  }

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

  static CompiledValue compile_value(std::string_view text) {
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

  // ------------------------------------------------------------- the record

  struct Frame {
    Span schema, payload;
    bool schema_null = true;
    bool wrapper = false;
  };

  // Finds {"schema","payload"} (or decides there is no wrapper).
  Frame unwrap(std::string_view value, const std::string& owner, bool allow_wrapper) {
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
    if (q == begin || q[-1] != '}') fail(DecodeErrorCode::InvalidJson, "a JSON object ending in '}'", "trailing or truncated content");
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
    if (!fr.payload.present()) fail(DecodeErrorCode::MissingField, "\"payload\" in the {schema, payload} envelope");
    return fr;
  }

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

  std::optional<int64_t> opt_int(sj::value& v) {
    int64_t x;
    std::string_view raw = trim_token(v.raw_json_token());
    if (parse_int64(raw, x)) return x;
    return std::nullopt;  // e.g. an lsn that lost precision upstream: position only
  }

  void assign_text(sj::value& v, std::string& dst) {
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

  void parse_source(sj::value& v, Change& c) {
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

  static std::string_view string_inner(std::string_view raw) {
    return raw.size() >= 2 ? raw.substr(1, raw.size() - 2) : raw;
  }

  PayloadInfo scan_payload(Span payload, const std::string& owner, Change& c, bool flattened, std::string_view root,
                           const EagerImages* eager) {
    PayloadInfo pi;
    path.clear();
    path_root = root;
    payload_doc = iterate(payload.begin, static_cast<size_t>(payload.end - payload.begin), owner);
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
    path.clear();
    return pi;
  }

  // Kafka key -> key column names (+ converted values in key_b).
  std::optional<Failure> parse_key(const KafkaRecord& rec) {
    key_names.clear();
    key_b.clear();
    if (!rec.key || rec.key->empty()) return std::nullopt;
    try {
      load_padded(keybuf, *rec.key);
      path.clear();
      path_root = "key";
      Frame fr = unwrap(*rec.key, keybuf, true);
      std::shared_ptr<const SchemaNode> schema;
      if (fr.wrapper && !fr.schema_null && fr.schema.present()) {
        schema = cached(key_schemas, rec.topic, fr.schema.view(), [](std::string_view t) { return compile_schema(t); });
      }
      if (fr.wrapper && trim_token(fr.payload.view()) == "null") return std::nullopt;
      convert_row(fr.payload, keybuf, schema ? schema.get() : nullptr, key_b, fr.wrapper ? "key.payload" : "key");
      for (const auto& c : key_b.cols) key_names.emplace_back(key_b.name(c));
    } catch (const Failure& f) {
      key_b.clear();
      key_names.clear();
      return f;
    } catch (const simdjson::simdjson_error& e) {
      key_b.clear();
      key_names.clear();
      return Failure{DecodeErrorCode::InvalidJson, "key", "a JSON object key", e.what()};
    }
    return std::nullopt;
  }

  void identity_from_topic(std::string_view topic, Change& c) {
    // <prefix>.<db>.<table>, <prefix>.<schema>.<table> (PostgreSQL, Oracle),
    // <prefix>.<db>.<schema>.<table> (SQL Server).
    std::array<std::string_view, 4> parts;  // the first three and the last
    size_t n = 0, start = 0;
    for (size_t i = 0; i <= topic.size(); ++i) {
      if (i == topic.size() || topic[i] == '.') {
        parts[n < 3 ? n : 3] = topic.substr(start, i - start);
        ++n;
        start = i + 1;
      }
    }
    const std::string_view last = n <= 3 ? parts[n - 1] : parts[3];
    if (c.table.empty()) c.table.assign(last);
    if (c.db.empty() && n >= 3) c.db.assign(parts[1]);
    if (c.schema.empty() && n >= 4) c.schema.assign(parts[2]);
  }

  void resolve_key_columns(Change& c) {
    c.key_columns.clear();
    if (!opt.key_columns.empty()) {
      scratch2.assign(c.db);
      scratch2.push_back('.');
      scratch2.append(c.table);
      auto it = opt.key_columns.find(scratch2);
      if (it != opt.key_columns.end()) {
        c.key_columns = it->second;
        return;
      }
    }
    for (const auto& n : key_names) c.key_columns.push_back(n);
  }

  // Before-key != after-key? Only decidable when both images carry every key column.
  bool key_changed(const Change& c) const {
    if (c.key_columns.empty() || !before_b.present) return false;
    for (const auto& k : c.key_columns) {
      const Col* b = before_b.find(k);
      const Col* a = after_b.find(k);
      if (b == nullptr || a == nullptr) return false;
      if (before_b.value(*b) != after_b.value(*a)) return true;
    }
    return false;
  }

  void delete_from_key(Change& c, const std::optional<Failure>& key_failure) {
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

  const SchemaNode* hint_for(const Change& c) const {
    if (!opt.schemaless_types) return nullptr;
    return opt.schemaless_types(c.db, c.table);
  }

  void decode_record(const KafkaRecord& rec, Change& c) {
    c.kind = Kind::Change;
    c.db.clear();
    c.schema.clear();
    c.table.clear();
    c.op = 0;
    c.ddl.clear();
    c.primary_key_changed = false;
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
    std::optional<Failure> key_failure = parse_key(rec);

    if (!rec.value) {
      identity_from_topic(rec.topic, c);
      if (flattened) {  // delete.tombstone.handling.mode=tombstone: null value = delete the key
        resolve_key_columns(c);
        c.op = 'd';
        delete_from_key(c, key_failure);
        ++stats.changes;
        return;
      }
      c.kind = Kind::Tombstone;
      ++stats.tombstones;
      return;
    }
    if (rec.value->size() > opt.max_record_bytes) {
      path_root = "value";
      path.clear();
      fail(DecodeErrorCode::TooLarge, "a record of at most " + std::to_string(opt.max_record_bytes) + " bytes",
           std::to_string(rec.value->size()) + " bytes");
    }
    load_padded(buf, *rec.value);
    Frame fr = unwrap(*rec.value, buf, opt.envelope != Envelope::Plain);
    if (opt.envelope == Envelope::Schema && !fr.wrapper)
      fail(DecodeErrorCode::NotAnEnvelope, "a {\"schema\":…,\"payload\":…} record (envelope: schema)");
    std::shared_ptr<const CompiledValue> schema;
    if (fr.wrapper && !fr.schema_null && fr.schema.present() && opt.use_schema) {
      path_root = "value.schema";
      schema = cached(value_schemas, rec.topic, fr.schema.view(), compile_value);
    }
    if (fr.wrapper && trim_token(fr.payload.view()) == "null") {
      c.kind = Kind::Tombstone;
      ++stats.tombstones;
      return;
    }
    const std::string_view root = fr.wrapper ? "value.payload" : "value";
    const bool as_flat = flattened && (!schema || schema->flat);
    // A per-table type hint depends on the source db/table, which follows the
    // images in the record: predict it from the topic's previous record and
    // convert again below if the prediction was wrong.
    const bool hinted = schema == nullptr && static_cast<bool>(opt.schemaless_types);
    auto hint_it = hinted ? hint_by_topic_.find(rec.topic) : hint_by_topic_.end();
    const bool predicted = hint_it != hint_by_topic_.end();
    const SchemaNode* predicted_hint = predicted ? hint_it->second : nullptr;
    EagerImages eager;
    const bool convert_eagerly = !as_flat && (!hinted || predicted);
    if (convert_eagerly) {
      eager.before = schema ? schema->before : predicted_hint;
      eager.after = schema ? schema->after : predicted_hint;
      if (opt.key_columns.empty()) eager.key_columns = &key_names;
    }
    // A decoding error may come from a predicted hint that does not fit this
    // record's table: the verdict must come from its own hint, so scan again
    // without it (anything else, e.g. bad_alloc, is not the record's fault).
    auto scan_unpredicted = [&] { return scan_payload(fr.payload, buf, c, as_flat, root, nullptr); };
    PayloadInfo pi;
    try {
      pi = scan_payload(fr.payload, buf, c, as_flat, root, convert_eagerly ? &eager : nullptr);
    } catch (const Failure&) {
      if (!predicted) throw;
      pi = scan_unpredicted();
    } catch (const simdjson::simdjson_error&) {
      if (!predicted) throw;
      pi = scan_unpredicted();
    }

    if (as_flat) {
      identity_from_topic(rec.topic, c);
      resolve_key_columns(c);
      const bool is_delete = (pi.deleted && *pi.deleted) || pi.op == 'd';
      c.op = pi.op != 0 ? pi.op : (is_delete ? 'd' : 'u');
      const SchemaNode* row_schema = schema ? &schema->root : hint_for(c);
      convert_image({}, row_schema, after_b, root, opt.flattened.metadata_prefix);
      emit_row(c, after_b, is_delete, after_b.toast && !is_delete);
      ++stats.changes;
      return;
    }

    if (!pi.has_op) {
      identity_from_topic(rec.topic, c);
      if (pi.has_ddl) {
        c.kind = Kind::SchemaChange;
        ++stats.schema_changes;
        if (opt.on_schema_change) opt.on_schema_change(c, *rec.value);
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
    resolve_key_columns(c);
    if (c.op == 't') {
      c.kind = Kind::Truncate;
      ++stats.truncates;
      if (opt.on_truncate) opt.on_truncate(c);
      return;
    }
    if (c.op == 'm') {
      c.kind = Kind::Message;
      ++stats.messages;
      return;
    }
    const SchemaNode* hint = hinted ? hint_for(c) : nullptr;
    if (hinted) {
      if (predicted && hint != predicted_hint) pi.after_done = pi.before_keys_done = false;
      if (predicted) {
        hint_it->second = hint;
      } else {
        if (hint_by_topic_.size() >= 4096) hint_by_topic_.clear();  // bounded, like the schema caches
        hint_by_topic_.emplace(std::string(rec.topic), hint);
      }
    }
    const SchemaNode* before_schema = schema ? schema->before : hint;
    const SchemaNode* after_schema = schema ? schema->after : hint;
    const std::string_view before_root = fr.wrapper ? "value.payload.before" : "value.before";
    const std::string_view after_root = fr.wrapper ? "value.payload.after" : "value.after";
    if (c.op == 'd') {
      if (pi.before.present()) {
        convert_image("before", before_schema, before_b, before_root);
        // A before-image without the key columns (a partial image) cannot
        // identify the row; the Kafka key can.
        bool has_keys = true;
        for (const auto& k : c.key_columns) has_keys = has_keys && before_b.find(k) != nullptr;
        if (has_keys || key_b.cols.empty()) {
          emit_row(c, before_b, true, false);
          ++stats.changes;
          return;
        }
      } else if (pi.before_type != sj::json_type::null) {
        path_root = before_root;
        fail(DecodeErrorCode::TypeMismatch, "an object or null", type_name(pi.before_type));
      }
      delete_from_key(c, key_failure);
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
    emit_row(c, after_b, false, after_b.toast);
    ++stats.changes;
  }
};

std::unique_ptr<Decoder::Impl, Decoder::ImplDeleter> Decoder::make_impl(DecoderOptions options) {
  return std::unique_ptr<Impl, ImplDeleter>(new Impl(std::move(options)));
}
void Decoder::ImplDeleter::operator()(Impl* p) const { delete p; }
Decoder::~Decoder() = default;

const DecodeStats& Decoder::stats() const { return impl_->stats; }
const DecoderOptions& Decoder::options() const { return impl_->opt; }

std::optional<DecodeError> Decoder::decode(const KafkaRecord& record, Change& out) {
  Impl& d = *impl_;
  ++d.stats.records;
  if (record.value) d.stats.bytes += record.value->size();
  auto make = [&](DecodeErrorCode code, std::string p, std::string expected, std::string detail) {
    ++d.stats.errors;
    DecodeError e;
    e.code = code;
    e.topic = std::string(record.topic);
    e.partition = record.partition;
    e.offset = record.offset;
    e.path = std::move(p);
    e.expected = std::move(expected);
    e.detail = std::move(detail);
    return e;
  };
  try {
    d.decode_record(record, out);
    return std::nullopt;
  } catch (const Failure& f) {
    return make(f.code, f.path, f.expected, f.detail);
  } catch (const simdjson::simdjson_error& e) {
    DecodeErrorCode code = DecodeErrorCode::InvalidJson;
    std::string expected = "valid JSON";
    if (e.error() == simdjson::UTF8_ERROR) {
      code = DecodeErrorCode::InvalidUtf8;
      expected = "valid UTF-8";
    } else if (e.error() == simdjson::DEPTH_ERROR) {
      code = DecodeErrorCode::TooDeep;
      expected = "nesting of at most " + std::to_string(d.opt.max_depth) + " levels";
    } else if (e.error() == simdjson::INCORRECT_TYPE) {
      code = DecodeErrorCode::TypeMismatch;
      expected = "a value of another JSON type";
    }
    return make(code, d.current_path(), expected, e.what());
  }
}

}  // namespace cdc2doris::decode
