#include "tools/doris_emulator/values.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

namespace cdc2doris::emu {
namespace {

const LoadZone kDefaultZone;  // Doris' default load time zone

std::string upper(std::string_view s) {
  std::string r(s);
  for (auto& c : r) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return r;
}

// The C-locale isspace set, inline: trim runs for every line and value and
// std::isspace is an out-of-line locale lookup.
constexpr bool is_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

void put_be64(std::string* key, uint64_t v) {
  char b[8];
  for (int i = 7; i >= 0; --i) { b[i] = static_cast<char>(v & 0xff); v >>= 8; }
  key->append(b, 8);
}

void put_i64(std::string* key, int64_t v) { put_be64(key, static_cast<uint64_t>(v) ^ (1ULL << 63)); }

void put_i128(std::string* key, __int128 v) {
  unsigned __int128 u = static_cast<unsigned __int128>(v) ^ (static_cast<unsigned __int128>(1) << 127);
  put_be64(key, static_cast<uint64_t>(u >> 64));
  put_be64(key, static_cast<uint64_t>(u));
}

void put_str(std::string* key, std::string_view s) {
  // 0x00 is escaped as 0x00 0xff and the string ends with 0x00 0x01, so a
  // prefix sorts before its extensions and composite keys stay unambiguous.
  for (char c : s) {
    key->push_back(c);
    if (c == '\0') key->push_back('\xff');
  }
  key->push_back('\0');
  key->push_back('\x01');
}

bool parse_i128(std::string_view s, __int128* out) {
  s = trim(s);
  if (s.empty()) return false;
  bool neg = false;
  if (s[0] == '-' || s[0] == '+') { neg = s[0] == '-'; s.remove_prefix(1); }
  if (s.empty()) return false;
  // A JSON number like 12.0 or 1e3 still names an integer; anything with a
  // non-zero fraction does not.
  unsigned __int128 v = 0;
  size_t i = 0;
  const unsigned __int128 limit = static_cast<unsigned __int128>(1) << 127;
  for (; i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])); ++i) {
    v = v * 10 + static_cast<unsigned>(s[i] - '0');
    if (v > limit) return false;
  }
  if (i == 0) return false;
  if (i < s.size() && s[i] == '.') {
    ++i;
    for (; i < s.size(); ++i) if (s[i] != '0') return false;
  }
  if (i != s.size()) return false;
  if (!neg && v == limit) return false;
  if (neg && v == limit) *out = std::numeric_limits<__int128>::min();
  else *out = neg ? -static_cast<__int128>(v) : static_cast<__int128>(v);
  return true;
}

std::string i128_to_string(__int128 v) {
  if (v == 0) return "0";
  bool neg = v < 0;
  unsigned __int128 u = neg ? static_cast<unsigned __int128>(-(v + 1)) + 1 : static_cast<unsigned __int128>(v);
  char buf[48];
  int p = 48;
  while (u) { buf[--p] = static_cast<char>('0' + static_cast<int>(u % 10)); u /= 10; }
  if (neg) buf[--p] = '-';
  return std::string(buf + p, buf + 48);
}

__int128 pow10_128(int n) {
  __int128 r = 1;
  for (int i = 0; i < n; ++i) r *= 10;
  return r;
}

// Exact decimal parse: digits, optional fraction, optional exponent; rounds
// half away from zero to `scale` digits and rejects more than p-s integer digits.
// Works on digit positions in place (no temporaries): it runs once per value.
bool parse_decimal(std::string_view s, int precision, int scale, __int128* out) {
  s = trim(s);
  if (s.empty()) return false;
  bool neg = false;
  if (s[0] == '-' || s[0] == '+') { neg = s[0] == '-'; s.remove_prefix(1); }
  int nd = 0;          // digits seen
  int point = -1;      // digit index of '.', -1: none
  size_t i = 0;
  for (; i < s.size(); ++i) {
    char c = s[i];
    if (c >= '0' && c <= '9') ++nd;
    else if (c == '.' && point < 0) point = nd;
    else break;
  }
  if (nd == 0) return false;
  const bool has_dot = point >= 0;
  int exp = 0;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    auto r = std::from_chars(s.data() + i + (i < s.size() && s[i] == '+' ? 1 : 0), s.data() + s.size(), exp);
    if (r.ec != std::errc() || r.ptr != s.data() + s.size()) return false;
    i = s.size();
  }
  if (i != s.size()) return false;
  const int raw_point = has_dot ? point : nd;
  // Digit k of the mantissa (0 outside [0, nd)); the '.' is skipped.
  auto dig = [&](int64_t k) -> int {
    if (k < 0 || k >= nd) return 0;
    size_t pos = static_cast<size_t>(k) + (has_dot && k >= raw_point ? 1 : 0);
    return s[pos] - '0';
  };
  const int64_t pt = static_cast<int64_t>(raw_point) + exp;  // digits before the decimal point
  __int128 v = 0;
  int int_digits = 0;
  for (int64_t k = 0; k < pt; ++k) {
    if (int_digits == 0 && k >= nd) break;  // only zeros left: the integer part is 0
    int d = dig(k);
    if (int_digits > 0 || d != 0) ++int_digits;
    if (int_digits > precision - scale) return false;
    v = v * 10 + d;
  }
  for (int j = 0; j < scale; ++j) v = v * 10 + dig(pt + j);
  if (dig(pt + scale) >= 5) {
    ++v;
    if (v >= pow10_128(precision)) return false;
  }
  *out = neg ? -v : v;
  return true;
}

void append_decimal(std::string* out, __int128 v, int scale) {
  char buf[48];
  int p = 48;
  bool neg = v < 0;
  unsigned __int128 u = neg ? static_cast<unsigned __int128>(-(v + 1)) + 1 : static_cast<unsigned __int128>(v);
  int written = 0;
  do {
    buf[--p] = static_cast<char>('0' + static_cast<int>(u % 10));
    u /= 10;
    if (++written == scale) buf[--p] = '.';
  } while (u || written < scale + 1);
  if (neg) buf[--p] = '-';
  out->append(buf + p, static_cast<size_t>(48 - p));
}

// JSON text without insignificant whitespace, every token kept as written:
// Doris' JSONB keeps a number's digits (a double round trip would change
// 904071.1179451137 into ...136). `raw` must be valid JSON.
std::string compact_json(std::string_view raw) {
  std::string out;
  out.reserve(raw.size());
  for (size_t i = 0; i < raw.size(); ++i) {
    char c = raw[i];
    if (is_space(c)) continue;
    if (c != '"') {
      out.push_back(c);
      continue;
    }
    size_t j = i + 1;
    while (j < raw.size() && raw[j] != '"') j += raw[j] == '\\' ? 2 : 1;
    out.append(raw.substr(i, j + 1 - i));
    i = j;
  }
  return out;
}

// The top-level elements of a valid JSON array text, as raw tokens.
std::vector<std::string_view> array_elements(std::string_view raw) {
  std::vector<std::string_view> out;
  raw = trim(raw);
  size_t i = 1, start = 1;
  int depth = 0;
  for (; i + 1 < raw.size(); ++i) {
    char c = raw[i];
    if (c == '"') {
      for (++i; i < raw.size() && raw[i] != '"'; ++i)
        if (raw[i] == '\\') ++i;
    } else if (c == '[' || c == '{') {
      ++depth;
    } else if (c == ']' || c == '}') {
      --depth;
    } else if (c == ',' && depth == 0) {
      out.push_back(trim(raw.substr(start, i - start)));
      start = i + 1;
    }
  }
  std::string_view last = trim(raw.substr(start, raw.size() - 1 - start));
  if (!last.empty() || !out.empty()) out.push_back(last);
  return out;
}

bool as_text(const InValue& in, std::string_view* s) {
  switch (in.tag) {
    case InValue::Str:
    case InValue::Num:
    case InValue::Raw: *s = in.text; return true;
    case InValue::Bool: *s = in.b ? "true" : "false"; return true;
    case InValue::Null: return false;
  }
  return false;
}

}  // namespace

std::string ColType::sql() const {
  switch (kind) {
    case Kind::Boolean: return "BOOLEAN";
    case Kind::TinyInt: return "TINYINT";
    case Kind::SmallInt: return "SMALLINT";
    case Kind::Int: return "INT";
    case Kind::BigInt: return "BIGINT";
    case Kind::LargeInt: return "LARGEINT";
    case Kind::Float: return "FLOAT";
    case Kind::Double: return "DOUBLE";
    case Kind::Decimal: return "DECIMAL(" + std::to_string(precision) + "," + std::to_string(scale) + ")";
    case Kind::Date: return "DATE";
    case Kind::DateTime: return frac ? "DATETIME(" + std::to_string(frac) + ")" : "DATETIME";
    case Kind::Char: return "CHAR(" + std::to_string(len) + ")";
    case Kind::Varchar: return "VARCHAR(" + std::to_string(len) + ")";
    case Kind::String: return "TEXT";
    case Kind::Json: return "JSON";
    case Kind::Array: return "ARRAY<" + elem->sql() + ">";
  }
  return "?";
}

std::string ColType::schema_name() const {
  switch (kind) {
    case Kind::Decimal: return "DECIMALV3";
    case Kind::Date: return "DATEV2";
    case Kind::DateTime: return "DATETIMEV2";
    case Kind::Char: return "CHAR";
    case Kind::Varchar: return "VARCHAR";
    case Kind::String: return "STRING";
    case Kind::Array: return "ARRAY";
    default: return sql();
  }
}

std::optional<ColType> parse_type(std::string_view text, std::string* err) {
  text = trim(text);
  if (text.size() > 5 && upper(text.substr(0, 5)) == "ARRAY") {
    std::string_view inner = trim(text.substr(5));
    if (inner.size() < 2 || inner.front() != '<' || inner.back() != '>') {
      *err = "malformed type " + std::string(text);
      return std::nullopt;
    }
    auto e = parse_type(inner.substr(1, inner.size() - 2), err);
    if (!e) return std::nullopt;
    ColType t;
    t.kind = Kind::Array;
    t.elem = std::make_shared<const ColType>(std::move(*e));
    return t;
  }
  std::string name;
  std::vector<int> args;
  size_t lp = text.find('(');
  name = upper(trim(text.substr(0, lp)));
  if (lp != std::string_view::npos) {
    size_t rp = text.find(')', lp);
    if (rp == std::string_view::npos) { *err = "malformed type " + std::string(text); return std::nullopt; }
    std::string_view inner = text.substr(lp + 1, rp - lp - 1);
    while (!inner.empty()) {
      size_t c = inner.find(',');
      std::string_view part = trim(inner.substr(0, c));
      int v = 0;
      auto r = std::from_chars(part.data(), part.data() + part.size(), v);
      if (r.ec != std::errc() || r.ptr != part.data() + part.size()) {
        *err = "malformed type " + std::string(text);
        return std::nullopt;
      }
      args.push_back(v);
      if (c == std::string_view::npos) break;
      inner.remove_prefix(c + 1);
    }
  }
  ColType t;
  auto arg = [&](size_t i, int def) { return i < args.size() ? args[i] : def; };
  if (name == "BOOLEAN" || name == "BOOL") t.kind = Kind::Boolean;
  else if (name == "TINYINT") t.kind = Kind::TinyInt;
  else if (name == "SMALLINT") t.kind = Kind::SmallInt;
  else if (name == "INT" || name == "INTEGER") t.kind = Kind::Int;
  else if (name == "BIGINT") t.kind = Kind::BigInt;
  else if (name == "LARGEINT") t.kind = Kind::LargeInt;
  else if (name == "FLOAT") t.kind = Kind::Float;
  else if (name == "DOUBLE") t.kind = Kind::Double;
  else if (name == "DECIMAL" || name == "DECIMALV3" || name == "DECIMALV2" || name == "NUMERIC") {
    t.kind = Kind::Decimal;
    t.precision = arg(0, 9);
    t.scale = arg(1, 0);
    if (t.precision < 1 || t.precision > 38 || t.scale < 0 || t.scale > t.precision) {
      *err = "Invalid decimal type: " + std::string(text);
      return std::nullopt;
    }
  } else if (name == "DATE" || name == "DATEV2") t.kind = Kind::Date;
  else if (name == "DATETIME" || name == "DATETIMEV2") {
    t.kind = Kind::DateTime;
    t.frac = arg(0, 0);
    if (t.frac < 0 || t.frac > 6) { *err = "Scale of Datetime/Time must between 0 and 6. Scale was set to: " + std::to_string(t.frac); return std::nullopt; }
  } else if (name == "CHAR") { t.kind = Kind::Char; t.len = arg(0, 1); }
  else if (name == "VARCHAR") { t.kind = Kind::Varchar; t.len = arg(0, 65533); }
  else if (name == "STRING" || name == "TEXT") t.kind = Kind::String;
  else if (name == "JSON" || name == "JSONB") t.kind = Kind::Json;
  else { *err = "Unknown type: " + std::string(text); return std::nullopt; }
  return t;
}

void encode_null(std::string* key) { key->push_back('\0'); }
void encode_not_null(std::string* key) { key->push_back('\x01'); }

void append_json_string(std::string* out, std::string_view s) {
  out->push_back('"');
  size_t start = 0;
  size_t i = 0;
  // Eight bytes at a time: most strings need no escaping at all.
  auto has_special = [](uint64_t w) {
    auto has_zero = [](uint64_t x) { return (x - 0x0101010101010101ULL) & ~x & 0x8080808080808080ULL; };
    uint64_t lt20 = (w - 0x2020202020202020ULL) & ~w & 0x8080808080808080ULL;
    return lt20 | has_zero(w ^ 0x2222222222222222ULL) | has_zero(w ^ 0x5c5c5c5c5c5c5c5cULL);
  };
  while (i + 8 <= s.size()) {
    uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    if (has_special(w)) break;
    i += 8;
  }
  for (; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out->append(s.data() + start, i - start);
    start = i + 1;
    switch (c) {
      case '"': out->append("\\\""); break;
      case '\\': out->append("\\\\"); break;
      case '\n': out->append("\\n"); break;
      case '\r': out->append("\\r"); break;
      case '\t': out->append("\\t"); break;
      case '\b': out->append("\\b"); break;
      case '\f': out->append("\\f"); break;
      default: {
        char b[8];
        std::snprintf(b, sizeof b, "\\u%04x", c);
        out->append(b);
      }
    }
  }
  out->append(s.data() + start, s.size() - start);
  out->push_back('"');
}

namespace {

// Array text that is not JSON ("[1,\\N,1.3]", "['a', 'b']"), as Doris'
// DataTypeArraySerDe::deserialize_one_cell_from_json reads a CSV cell
// (be/src/vec/data_types/serde/data_type_array_serde.cpp): elements split at
// top-level commas outside quotes, trimmed, `null` / `\N` are NULL, one level
// of ' or " quotes stripped; an element that does not convert becomes NULL.
bool convert_text_array(const ColType& t, std::string_view raw, std::string* out, std::string* key,
                        std::string* why, const LoadZone* zone) {
  std::string_view inner = trim(raw.substr(1, raw.size() - 2));
  std::vector<std::string_view> elems;
  if (!inner.empty()) {
    int depth = 0;
    char quote = 0;
    size_t start = 0;
    for (size_t i = 0; i < inner.size(); ++i) {
      char c = inner[i];
      if (quote) {
        if (c == '\\') ++i;
        else if (c == quote) quote = 0;
      } else if (c == '"' || c == '\'') quote = c;
      else if (c == '[' || c == '{') ++depth;
      else if (c == ']' || c == '}') --depth;
      else if (c == ',' && depth == 0) {
        elems.push_back(trim(inner.substr(start, i - start)));
        start = i + 1;
      }
    }
    if (quote || depth != 0) { *why = "invalid array text"; return false; }
    elems.push_back(trim(inner.substr(start)));
  }
  size_t mark = out->size();
  out->push_back('[');
  std::string ewhy;
  for (size_t i = 0; i < elems.size(); ++i) {
    if (i) out->push_back(',');
    std::string_view e = elems[i];
    InValue ev;
    if (e == "null" || e == "\\N") ev.tag = InValue::Null;
    else {
      ev.tag = InValue::Str;
      if (e.size() >= 2 && (e.front() == '"' || e.front() == '\'') && e.back() == e.front()) e = e.substr(1, e.size() - 2);
      ev.text = e;
    }
    size_t emark = out->size();
    if (ev.tag == InValue::Null || !convert(*t.elem, ev, out, nullptr, &ewhy, zone)) {
      out->resize(emark);
      out->append("null");
    }
  }
  out->push_back(']');
  if (key) put_str(key, std::string_view(*out).substr(mark));
  return true;
}

}  // namespace

bool convert(const ColType& t, const InValue& in, std::string* out, std::string* key, std::string* why,
             const LoadZone* zone) {
  std::string_view text;
  switch (t.kind) {
    case Kind::Boolean: {
      bool v;
      if (in.tag == InValue::Bool) v = in.b;
      else {
        if (!as_text(in, &text)) return false;
        std::string u = upper(trim(text));
        if (u == "TRUE" || u == "1") v = true;
        else if (u == "FALSE" || u == "0") v = false;
        else { *why = "invalid BOOLEAN value"; return false; }
      }
      out->append(v ? "true" : "false");
      if (key) key->push_back(v ? '\x01' : '\0');
      return true;
    }
    case Kind::TinyInt:
    case Kind::SmallInt:
    case Kind::Int:
    case Kind::BigInt:
    case Kind::LargeInt: {
      __int128 v;
      if (in.tag == InValue::Bool) v = in.b ? 1 : 0;
      else {
        if (!as_text(in, &text) || in.tag == InValue::Raw) { *why = "not an integer"; return false; }
        if (!parse_i128(text, &v)) { *why = "not an integer"; return false; }
      }
      __int128 lo, hi;
      switch (t.kind) {
        case Kind::TinyInt: lo = INT8_MIN; hi = INT8_MAX; break;
        case Kind::SmallInt: lo = INT16_MIN; hi = INT16_MAX; break;
        case Kind::Int: lo = INT32_MIN; hi = INT32_MAX; break;
        case Kind::BigInt: lo = INT64_MIN; hi = INT64_MAX; break;
        default: lo = std::numeric_limits<__int128>::min(); hi = std::numeric_limits<__int128>::max();
      }
      if (v < lo || v > hi) { *why = "value out of range for " + t.sql(); return false; }
      if (t.kind == Kind::LargeInt) {
        // LARGEINT exceeds what JSON numbers carry reliably, so it is a string.
        out->push_back('"');
        out->append(i128_to_string(v));
        out->push_back('"');
        if (key) put_i128(key, v);
      } else {
        char b[24];
        auto r = std::to_chars(b, b + sizeof b, static_cast<int64_t>(v));
        out->append(b, r.ptr);
        if (key) put_i64(key, static_cast<int64_t>(v));
      }
      return true;
    }
    case Kind::Float:
    case Kind::Double: {
      if (in.tag == InValue::Raw || !as_text(in, &text)) { *why = "not a number"; return false; }
      if (in.tag == InValue::Bool) text = in.b ? "1" : "0";
      text = trim(text);
      double d;
      auto r = std::from_chars(text.data(), text.data() + text.size(), d);
      if (r.ec != std::errc() || r.ptr != text.data() + text.size() || !std::isfinite(d)) {
        *why = "not a number";
        return false;
      }
      char b[40];
      if (t.kind == Kind::Float) {
        float f = static_cast<float>(d);
        if (!std::isfinite(f)) { *why = "value out of range for FLOAT"; return false; }
        auto w = std::to_chars(b, b + sizeof b, f);
        out->append(b, w.ptr);
        d = f;
      } else {
        auto w = std::to_chars(b, b + sizeof b, d);
        out->append(b, w.ptr);
      }
      if (key) {
        uint64_t u;
        std::memcpy(&u, &d, 8);
        u = (u & (1ULL << 63)) ? ~u : u | (1ULL << 63);
        put_be64(key, u);
      }
      return true;
    }
    case Kind::Decimal: {
      if (in.tag == InValue::Raw || !as_text(in, &text)) { *why = "not a decimal"; return false; }
      if (in.tag == InValue::Bool) text = in.b ? "1" : "0";
      __int128 v;
      if (!parse_decimal(text, t.precision, t.scale, &v)) {
        *why = "value does not fit " + t.sql();
        return false;
      }
      // Rendered as a string: a JSON number would invite lossy double parsing.
      out->push_back('"');
      append_decimal(out, v, t.scale);
      out->push_back('"');
      if (key) put_i128(key, v);
      return true;
    }
    case Kind::Date:
    case Kind::DateTime: {
      if (in.tag != InValue::Str && in.tag != InValue::Num) { *why = "not a date"; return false; }
      DateTimeParts dt;
      if (!parse_canonical_datetime(in.text, t.kind == Kind::DateTime, t.frac, &dt) &&
          !parse_datetime_text(in.text, t.kind == Kind::DateTime, t.frac, zone ? *zone : kDefaultZone, &dt)) {
        *why = "invalid " + t.sql() + " value";
        return false;
      }
      // Rendered into a local buffer and appended once.
      char b[32];
      char* w = b;
      auto two = [&w](int v) {
        *w++ = static_cast<char>('0' + v / 10);
        *w++ = static_cast<char>('0' + v % 10);
      };
      *w++ = '"';
      two(dt.y / 100);
      two(dt.y % 100);
      *w++ = '-';
      two(dt.mo);
      *w++ = '-';
      two(dt.d);
      const int64_t enc = (static_cast<int64_t>(dt.y) * 10000 + dt.mo * 100 + dt.d);
      int64_t tod = 0;
      if (t.kind == Kind::DateTime) {
        *w++ = ' ';
        two(dt.h);
        *w++ = ':';
        two(dt.mi);
        *w++ = ':';
        two(dt.s);
        const int64_t us = dt.us;  // already rounded to the column's precision
        int64_t div = 1;
        for (int i = t.frac; i < 6; ++i) div *= 10;
        if (t.frac > 0) {
          *w++ = '.';
          int64_t x = us / div;
          for (int k = t.frac - 1; k >= 0; --k) { w[k] = static_cast<char>('0' + x % 10); x /= 10; }
          w += t.frac;
        }
        // Time of day as a second key part: folded into one int64 with the
        // date it overflowed for years past 9223 (UBSan, year 9990).
        tod = (static_cast<int64_t>(dt.h) * 3600 + dt.mi * 60 + dt.s) * 1000000 + us;
      }
      *w++ = '"';
      out->append(b, static_cast<size_t>(w - b));
      if (key) {
        put_i64(key, enc);
        if (t.kind == Kind::DateTime) put_i64(key, tod);
      }
      return true;
    }
    case Kind::Char:
    case Kind::Varchar:
    case Kind::String: {
      if (!as_text(in, &text)) return false;
      if ((t.kind != Kind::String) && static_cast<int>(text.size()) > t.len) {
        // be/src/vec/sink/vtablet_block_convertor.cpp, _internal_validate_column.
        *why = "the length of input is too long than schema. first 32 bytes of input str: [" +
               std::string(text.substr(0, 32)) + "] schema length: " + std::to_string(t.len) +
               "; actual length: " + std::to_string(text.size()) + "; ";
        return false;
      }
      append_json_string(out, text);
      if (key) put_str(key, text);
      return true;
    }
    case Kind::Json: {
      std::string_view raw;
      std::string tmp;
      if (in.tag == InValue::Str) raw = in.text;  // a string carries JSON text
      else if (!as_text(in, &raw)) return false;
      boost::system::error_code ec;
      boost::json::parse(raw, ec);
      if (ec) { *why = "invalid JSON text"; return false; }
      tmp = compact_json(raw);
      out->append(tmp);
      if (key) put_str(key, tmp);
      return true;
    }
    case Kind::Array: {
      // A JSON array (or its text in a string/CSV field). An element that
      // does not convert becomes NULL, as Doris' nullable element SerDe does.
      std::string_view raw;
      if (in.tag == InValue::Str || in.tag == InValue::Raw) raw = trim(in.text);
      if (raw.empty() || raw.front() != '[') { *why = "not a JSON array"; return false; }
      boost::system::error_code ec;
      auto v = boost::json::parse(raw, ec);
      if (ec && raw.back() == ']') return convert_text_array(t, raw, out, key, why, zone);
      if (ec || !v.is_array()) { *why = "invalid JSON array"; return false; }
      const auto& arr = v.as_array();
      auto toks = array_elements(raw);
      if (toks.size() != arr.size()) { *why = "invalid JSON array"; return false; }
      size_t mark = out->size();
      out->push_back('[');
      std::string ewhy;
      for (size_t i = 0; i < arr.size(); ++i) {
        if (i) out->push_back(',');
        InValue e;
        const auto& ev = arr[i];
        if (ev.is_null()) e.tag = InValue::Null;
        else if (ev.is_string()) { e.tag = InValue::Str; e.text = std::string_view(ev.as_string()); }
        else if (ev.is_bool()) { e.tag = InValue::Bool; e.b = ev.as_bool(); }
        else if (ev.is_number()) { e.tag = InValue::Num; e.text = toks[i]; }
        else { e.tag = InValue::Raw; e.text = toks[i]; }
        size_t emark = out->size();
        if (e.tag == InValue::Null || !convert(*t.elem, e, out, nullptr, &ewhy, zone)) {
          out->resize(emark);
          out->append("null");
        }
      }
      out->push_back(']');
      if (key) put_str(key, std::string_view(*out).substr(mark));
      return true;
    }
  }
  return false;
}

}  // namespace cdc2doris::emu
