// Compiled with the decoder's hot files (core/decode/CMakeLists.txt): it
// parses rows with simdjson's On-Demand API, whose implementation follows the
// compile-time ISA. RowCheck's constructor (decoder_api.cpp) checks the CPU.
#include "core/decode/row_check.hpp"

#include <simdjson.h>

#include <charconv>
#include <unordered_map>

#include "core/common/ascii_case.hpp"

namespace cdc2doris::decode {

namespace sj = simdjson::ondemand;

namespace {

std::string_view trim_ws(std::string_view t) {
  while (!t.empty() && (t.back() == ' ' || t.back() == '\n' || t.back() == '\r' || t.back() == '\t')) t.remove_suffix(1);
  return t;
}

// The first 32 bytes of a value (as Doris' error log quotes "first 32 bytes
// of input str"), cut at a UTF-8 character boundary, control bytes escaped.
std::string value_start(std::string_view v) {
  size_t n = std::min<size_t>(v.size(), 32);
  while (n < v.size() && n > 0 && (static_cast<unsigned char>(v[n]) & 0xC0) == 0x80) --n;
  std::string out = "\"";
  for (char c : v.substr(0, n)) {
    if (static_cast<unsigned char>(c) < 0x20) {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[(c >> 4) & 0xF];
      out += kHex[c & 0xF];
    } else {
      out += c;
    }
  }
  out += n < v.size() ? "\"..." : "\"";
  return out;
}

// Digits before the decimal point of a decimal text without leading zeros
// (`-001.50` 1, `0.5` 0, `1.5E3` 4); nullopt: not a decimal text.
std::optional<int> integer_digits(std::string_view t) {
  size_t i = 0;
  if (i < t.size() && (t[i] == '-' || t[i] == '+')) ++i;
  int before = 0, total = 0, leading_zeros = 0;
  bool point = false, any = false;
  for (; i < t.size(); ++i) {
    const char c = t[i];
    if (c >= '0' && c <= '9') {
      any = true;
      if (total == leading_zeros && c == '0') ++leading_zeros;
      ++total;
      if (!point) ++before;
    } else if (c == '.' && !point) {
      point = true;
    } else {
      break;
    }
  }
  if (!any) return std::nullopt;
  int64_t exp = 0;
  if (i < t.size() && (t[i] == 'e' || t[i] == 'E')) {
    auto r = std::from_chars(t.data() + i + 1 + (i + 1 < t.size() && t[i + 1] == '+'), t.data() + t.size(), exp);
    if (r.ec != std::errc() || r.ptr != t.data() + t.size()) return std::nullopt;
  } else if (i != t.size()) {
    return std::nullopt;
  }
  // The point sits `before + exp` digits into the digit string; leading zeros
  // before it are not digits of the value.
  const int64_t digits = static_cast<int64_t>(before) + exp - leading_zeros;
  return static_cast<int>(std::clamp<int64_t>(digits, 0, 1000));
}

// Whether an integer text fits a signed integer of `bits`; nullopt: not an
// integer text (left to Doris).
std::optional<bool> integer_fits(std::string_view t, int bits) {
  // Up to this many characters (a sign included) any integer text fits:
  // the common case, decided without reading the digits.
  const size_t always_fits = bits == 8 ? 2 : bits == 16 ? 4 : bits == 32 ? 9 : bits == 64 ? 18 : 38;
  if (t.size() <= always_fits) return true;
  size_t i = 0;
  const bool neg = !t.empty() && t[0] == '-';
  if (!t.empty() && (t[0] == '-' || t[0] == '+')) ++i;
  if (i == t.size()) return std::nullopt;
  unsigned __int128 v = 0;
  const unsigned __int128 limit = (static_cast<unsigned __int128>(1) << (bits - 1)) - (neg ? 0 : 1);
  bool over = false;
  for (; i < t.size(); ++i) {
    const char c = t[i];
    if (c < '0' || c > '9') return std::nullopt;
    // Past limit/10 + 1 the next digit exceeds the limit; stop multiplying
    // before 128 bits wrap, but keep validating the text.
    if (over || v > limit / 10 + 1) {
      over = true;
      continue;
    }
    v = v * 10 + static_cast<unsigned>(c - '0');
  }
  return !over && v <= limit;
}

// A DATE/DATETIME text whose year the decoder wrote outside 0000..9999: a
// leading sign or five digits before the first '-'.
bool year_out_of_range(std::string_view t) {
  if (!t.empty() && (t[0] == '-' || t[0] == '+')) return true;
  size_t digits = 0;
  while (digits < t.size() && t[digits] >= '0' && t[digits] <= '9') ++digits;
  return digits > 4 && digits < t.size() && t[digits] == '-';
}

// Looked up by the row's keys without a string per key.
struct NameHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
using NameIndex = std::unordered_map<std::string, uint32_t, NameHash, std::equal_to<>>;

}  // namespace

struct RowCheck::Impl {
  std::vector<ColumnLimit> cols;
  NameIndex exact;
  NameIndex folded;  // Doris column names are case-insensitive
  std::vector<uint32_t> required;                     // NOT NULL without a default
  std::vector<uint64_t> seen;                          // row number that carried the column
  uint64_t row = 0;
  // The previous row's keys in order and their columns (kNoColumn: none):
  // rows of a table come with their keys in one order, so most keys are
  // recognised by one comparison, without unescaping or hashing them.
  static constexpr uint32_t kNoColumn = UINT32_MAX;
  std::vector<std::string> order_keys;
  std::vector<uint32_t> order;
  std::string buf;
  sj::parser parser;

  explicit Impl(std::vector<ColumnLimit> columns) {
    for (auto& c : columns) {
      if (c.kind == ColumnLimit::Kind::None && !c.not_null) continue;
      const auto i = static_cast<uint32_t>(cols.size());
      exact.emplace(c.name, i);
      folded.emplace(ascii_lower(c.name), i);
      if (c.not_null) required.push_back(i);
      cols.push_back(std::move(c));
    }
    seen.assign(cols.size(), 0);
  }

  uint32_t find(std::string_view key) {
    auto it = exact.find(key);
    if (it == exact.end()) {
      it = folded.find(ascii_lower(std::string(key)));
      if (it == folded.end()) return kNoColumn;
    }
    return it->second;
  }

  // The column of the row's `pos`-th key; nullopt: a malformed row.
  std::optional<uint32_t> column_at(size_t pos, sj::field& field) {
    if (pos < order.size() && field.key().unsafe_is_equal(order_keys[pos])) return order[pos];
    std::string_view key;
    if (field.unescaped_key().get(key)) return std::nullopt;
    const uint32_t index = find(key);
    if (pos >= order.size()) {
      order.resize(pos + 1, kNoColumn);
      order_keys.resize(pos + 1);
    }
    // A key with a quote or backslash is not compared raw (it came escaped).
    const bool plain = key.find_first_of("\"\\") == std::string_view::npos;
    order[pos] = index;
    order_keys[pos] = plain ? std::string(key) : std::string("\"");  // never equal to a raw key
    return index;
  }

  static RowViolation violation(const ColumnLimit& c, std::string expected, std::string detail, uint64_t bytes = 0) {
    return RowViolation{c.kind, bytes, c.name, c.type + ": " + std::move(expected), std::move(detail)};
  }

  // nullopt: fits, or a form this check leaves to Doris.
  std::optional<RowViolation> check_value(const ColumnLimit& c, sj::value& v) {
    sj::json_type type;
    if (v.type().get(type)) return std::nullopt;
    if (type == sj::json_type::null) {
      if (c.not_null) {
        RowViolation v = violation(c, "a value (NOT NULL without a default)", "null");
        v.kind = ColumnLimit::Kind::None;  // not a limit of the type
        return v;
      }
      return std::nullopt;
    }
    std::string_view text;
    if (type == sj::json_type::string) {
      std::string_view raw = trim_ws(v.raw_json_token());
      // The escaped text is never shorter than the value: most strings are
      // ruled out without unescaping them.
      if (c.kind == ColumnLimit::Kind::Bytes && raw.size() >= 2 && raw.size() - 2 <= c.max_bytes) return std::nullopt;
      // Numbers and dates as strings carry no escapes: read in place.
      if (c.kind != ColumnLimit::Kind::Bytes && raw.size() >= 2 && raw.find('\\') == std::string_view::npos)
        text = raw.substr(1, raw.size() - 2);
      else if (v.get_string().get(text))
        return std::nullopt;
    } else if (type == sj::json_type::number || type == sj::json_type::boolean) {
      text = trim_ws(v.raw_json_token());
    } else {
      return std::nullopt;  // arrays and objects: Doris converts or refuses them
    }
    switch (c.kind) {
      case ColumnLimit::Kind::Bytes:
        if (text.size() > c.max_bytes)
          return violation(c, "at most " + std::to_string(c.max_bytes) + " bytes",
                           std::to_string(text.size()) + " bytes: " + value_start(text), text.size());
        break;
      case ColumnLimit::Kind::Decimal:
        if (auto d = integer_digits(text); d && *d > c.int_digits)
          return violation(c, "at most " + std::to_string(c.int_digits) + " digits before the decimal point",
                           std::to_string(*d) + " digits: " + value_start(text));
        break;
      case ColumnLimit::Kind::Integer:
        if (auto f = integer_fits(text, c.bits); f && !*f)
          return violation(c, "a value in the range of a " + std::to_string(c.bits) + "-bit integer", value_start(text));
        break;
      case ColumnLimit::Kind::Date:
        if (type == sj::json_type::string && year_out_of_range(text))
          return violation(c, "a year from 0000 to 9999", value_start(text));
        break;
      case ColumnLimit::Kind::None: break;
    }
    return std::nullopt;
  }

  // `capacity`: readable bytes from json.data() (simdjson reads up to
  // SIMDJSON_PADDING past the end); with less the row is copied first.
  std::optional<RowViolation> check(std::string_view json, size_t capacity, bool full_row) {
    ++row;
    const char* at = json.data();
    if (capacity < json.size() + simdjson::SIMDJSON_PADDING) {
      buf.assign(json);
      buf.resize(json.size() + simdjson::SIMDJSON_PADDING);
      at = buf.data();
      capacity = buf.size();
    }
    sj::document doc;
    sj::object obj;
    if (parser.iterate(at, json.size(), capacity).get(doc) || doc.get_object().get(obj)) return std::nullopt;
    size_t pos = 0;
    for (auto f : obj) {
      sj::field field;
      if (std::move(f).get(field)) return std::nullopt;
      const auto index = column_at(pos++, field);
      if (!index) return std::nullopt;
      if (*index == kNoColumn) continue;
      seen[*index] = row;
      sj::value v = field.value();
      if (auto bad = check_value(cols[*index], v)) return bad;
    }
    if (full_row)
      for (uint32_t i : required)
        if (seen[i] != row) {
          RowViolation v = violation(cols[i], "a value (NOT NULL without a default)", "the row has no such column");
          v.kind = ColumnLimit::Kind::None;
          return v;
        }
    return std::nullopt;
  }
};

void RowCheck::ImplDeleter::operator()(Impl* p) const { delete p; }

std::unique_ptr<RowCheck::Impl, RowCheck::ImplDeleter> RowCheck::make_impl(std::vector<ColumnLimit> columns) {
  return std::unique_ptr<Impl, ImplDeleter>(new Impl(std::move(columns)));
}

RowCheck::~RowCheck() = default;

bool RowCheck::checks() const { return !impl_->cols.empty(); }

std::optional<RowViolation> RowCheck::check(std::string_view row, bool full_row) {
  return impl_->check(row, row.size(), full_row);
}

std::optional<RowViolation> RowCheck::check_in_place(std::string& row, bool full_row) {
  // Once per pooled row string: its capacity stays for the rows after.
  row.reserve(row.size() + simdjson::SIMDJSON_PADDING);
  return impl_->check(row, row.capacity(), full_row);
}

}  // namespace cdc2doris::decode
