#include "core/decode/wire_values.hpp"

#include <array>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstring>
#include <vector>

namespace cdc2doris::decode {
namespace {

constexpr std::array<int8_t, 256> make_b64_table() {
  std::array<int8_t, 256> t{};
  for (auto& v : t) v = -1;
  const char* a = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  for (int i = 0; i < 64; ++i) t[static_cast<unsigned char>(a[i])] = static_cast<int8_t>(i);
  return t;
}
constexpr auto kB64 = make_b64_table();
constexpr char kB64Chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
constexpr char kHex[] = "0123456789abcdef";

int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

// Howard Hinnant's civil-from-days in int64: exact for every int64 timestamp,
// which date::year (a short) cannot hold for e.g. PostgreSQL 'infinity'.
void civil_from_days(int64_t z, int64_t& y, unsigned& m, unsigned& d) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const auto doe = static_cast<uint64_t>(z - era * 146097);
  const uint64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  y = static_cast<int64_t>(yoe) + era * 400;
  const uint64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const uint64_t mp = (5 * doy + 2) / 153;
  d = static_cast<unsigned>(doy - (153 * mp + 2) / 5 + 1);
  m = static_cast<unsigned>(mp < 10 ? mp + 3 : mp - 9);
  if (m <= 2) ++y;
}

int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<uint64_t>(y - era * 400);
  const uint64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const uint64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

void append_padded(uint64_t v, int width, std::string& out) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  for (int n = static_cast<int>(r.ptr - buf); n < width; ++n) out.push_back('0');
  out.append(buf, r.ptr);
}

// Dates and times are written into a stack buffer and appended once: they
// are on nearly every row, and a dozen small std::string appends (each with
// its capacity check) cost more than the arithmetic.
constexpr size_t kTimeBuf = 96;  // sign + 20-digit year + hours of a 64-bit duration + fraction

char* put_padded(char* p, uint64_t v, int width) {
  char tmp[24];
  auto r = std::to_chars(tmp, tmp + sizeof tmp, v);
  const auto n = static_cast<int>(r.ptr - tmp);
  for (int i = n; i < width; ++i) *p++ = '0';
  std::memcpy(p, tmp, static_cast<size_t>(n));
  return p + n;
}

char* put2(char* p, uint64_t v) {
  if (v >= 100) return put_padded(p, v, 2);
  p[0] = static_cast<char>('0' + v / 10);
  p[1] = static_cast<char>('0' + v % 10);
  return p + 2;
}

char* put_ymd(char* p, int64_t days) {
  int64_t y;
  unsigned m, d;
  civil_from_days(days, y, m, d);
  if (y >= 0 && y <= 9999) {
    p = put2(p, static_cast<uint64_t>(y) / 100);
    p = put2(p, static_cast<uint64_t>(y) % 100);
  } else if (y < 0) {
    *p++ = '-';
    p = put_padded(p, static_cast<uint64_t>(-y), 4);
  } else {
    p = put_padded(p, static_cast<uint64_t>(y), 4);
  }
  *p++ = '-';
  p = put2(p, m);
  *p++ = '-';
  return put2(p, d);
}

char* put_hms(char* p, uint64_t seconds_of_day) {
  p = put2(p, seconds_of_day / 3600);
  *p++ = ':';
  p = put2(p, seconds_of_day / 60 % 60);
  *p++ = ':';
  return put2(p, seconds_of_day % 60);
}

// Microseconds when the value has no sub-microsecond part (Doris keeps 6).
char* put_fraction(char* p, int64_t nanos) {
  if (nanos == 0) return p;
  *p++ = '.';
  if (nanos % 1000 == 0) return put_padded(p, static_cast<uint64_t>(nanos / 1000), 6);
  return put_padded(p, static_cast<uint64_t>(nanos), 9);
}

void append_ymd(int64_t days, std::string& out) {
  char buf[kTimeBuf];
  out.append(buf, put_ymd(buf, days));
}

void place_decimal_point(bool negative, std::string_view digits, int32_t scale, std::string& out) {
  if (digits == "0") negative = false;
  if (negative) out.push_back('-');
  if (scale <= 0) {
    out.append(digits);
    if (digits != "0") out.append(static_cast<size_t>(-static_cast<int64_t>(scale)), '0');
    return;
  }
  const auto s = static_cast<size_t>(scale);
  if (digits.size() <= s) {
    out.append("0.");
    out.append(s - digits.size(), '0');
    out.append(digits);
  } else {
    out.append(digits.substr(0, digits.size() - s));
    out.push_back('.');
    out.append(digits.substr(digits.size() - s));
  }
}

// Parses exactly `n` digits.
bool take_digits(std::string_view& s, size_t n, uint64_t& v) {
  if (s.size() < n) return false;
  v = 0;
  for (size_t i = 0; i < n; ++i) {
    char c = s[i];
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  s.remove_prefix(n);
  return true;
}

bool take_char(std::string_view& s, char c) {
  if (s.empty() || s[0] != c) return false;
  s.remove_prefix(1);
  return true;
}

// ".ffffffff" -> nanoseconds (digits beyond 9 must be zero to stay exact).
bool take_fraction(std::string_view& s, int64_t& nanos) {
  nanos = 0;
  if (s.empty() || s[0] != '.') return true;
  s.remove_prefix(1);
  size_t n = 0;
  int64_t scale = 100000000;
  while (!s.empty() && s[0] >= '0' && s[0] <= '9') {
    int digit = s[0] - '0';
    if (n < 9) {
      nanos += digit * scale;
      scale /= 10;
    } else if (digit != 0) {
      return false;
    }
    ++n;
    s.remove_prefix(1);
  }
  return n > 0;
}

// "Z" | "+HH:MM[:SS]" | "+HHMM" | "+HH" -> seconds east of UTC.
bool take_offset(std::string_view& s, int64_t& offset) {
  offset = 0;
  if (take_char(s, 'Z') || take_char(s, 'z')) return s.empty();
  bool neg;
  if (take_char(s, '+')) {
    neg = false;
  } else if (take_char(s, '-')) {
    neg = true;
  } else {
    return false;
  }
  uint64_t hh = 0, mm = 0, ss = 0;
  if (!take_digits(s, 2, hh)) return false;
  if (take_char(s, ':')) {
    if (!take_digits(s, 2, mm)) return false;
    if (take_char(s, ':') && !take_digits(s, 2, ss)) return false;
  } else if (!s.empty() && !take_digits(s, 2, mm)) {
    return false;
  }
  if (!s.empty() || hh > 18 || mm > 59 || ss > 59) return false;
  offset = static_cast<int64_t>(hh * 3600 + mm * 60 + ss);
  if (neg) offset = -offset;
  return true;
}

bool take_hms(std::string_view& s, int64_t& seconds_of_day) {
  uint64_t hh, mm, ss;
  if (!take_digits(s, 2, hh) || !take_char(s, ':') || !take_digits(s, 2, mm) || !take_char(s, ':') ||
      !take_digits(s, 2, ss))
    return false;
  if (hh > 23 || mm > 59 || ss > 60) return false;
  seconds_of_day = static_cast<int64_t>(hh * 3600 + mm * 60 + ss);
  return true;
}

bool take_ymd(std::string_view& s, int64_t& days) {
  bool neg = take_char(s, '-');
  if (!neg) take_char(s, '+');
  size_t n = 0;
  while (n < s.size() && s[n] >= '0' && s[n] <= '9') ++n;
  if (n < 4 || n > 9) return false;
  uint64_t y, m, d;
  if (!take_digits(s, n, y) || !take_char(s, '-') || !take_digits(s, 2, m) || !take_char(s, '-') ||
      !take_digits(s, 2, d))
    return false;
  if (m < 1 || m > 12 || d < 1 || d > 31) return false;
  const int64_t year = neg ? -static_cast<int64_t>(y) : static_cast<int64_t>(y);
  days = days_from_civil(year, static_cast<unsigned>(m), static_cast<unsigned>(d));
  // Rejects 2023-02-30 and the like instead of silently rolling over.
  int64_t yy;
  unsigned mm2, dd2;
  civil_from_days(days, yy, mm2, dd2);
  return mm2 == m && dd2 == d;
}

int64_t zone_offset_at(const absl::TimeZone* zone, int64_t utc_seconds) {
  if (zone == nullptr) return 0;
  return zone->At(absl::FromUnixSeconds(utc_seconds)).offset;
}

struct WkbReader {
  std::string_view in;
  size_t pos = 0;
  bool read_u8(uint8_t& v) {
    if (pos + 1 > in.size()) return false;
    v = static_cast<uint8_t>(in[pos++]);
    return true;
  }
  bool read_u32(bool le, uint32_t& v) {
    if (pos + 4 > in.size()) return false;
    unsigned char b[4];
    std::memcpy(b, in.data() + pos, 4);
    pos += 4;
    v = le ? (uint32_t{b[0]} | uint32_t{b[1]} << 8 | uint32_t{b[2]} << 16 | uint32_t{b[3]} << 24)
           : (uint32_t{b[3]} | uint32_t{b[2]} << 8 | uint32_t{b[1]} << 16 | uint32_t{b[0]} << 24);
    return true;
  }
  bool read_f64(bool le, double& v) {
    if (pos + 8 > in.size()) return false;
    unsigned char b[8];
    std::memcpy(b, in.data() + pos, 8);
    pos += 8;
    uint64_t u = 0;
    for (int i = 0; i < 8; ++i) u |= uint64_t{b[le ? i : 7 - i]} << (8 * i);
    std::memcpy(&v, &u, 8);
    return true;
  }
  size_t remaining() const { return in.size() - pos; }
};

bool wkb_coords(WkbReader& r, bool le, std::string& out) {
  double x, y;
  if (!r.read_f64(le, x) || !r.read_f64(le, y)) return false;
  if (!std::isfinite(x) || !std::isfinite(y)) return false;
  append_double(x, out);
  out.push_back(' ');
  append_double(y, out);
  return true;
}

bool wkb_point_list(WkbReader& r, bool le, std::string& out) {
  uint32_t n;
  if (!r.read_u32(le, n) || n > r.remaining() / 16) return false;
  if (n == 0) {
    out.append("EMPTY");
    return true;
  }
  out.push_back('(');
  for (uint32_t i = 0; i < n; ++i) {
    if (i) out.push_back(',');
    if (!wkb_coords(r, le, out)) return false;
  }
  out.push_back(')');
  return true;
}

bool wkb_ring_list(WkbReader& r, bool le, std::string& out) {
  uint32_t n;
  if (!r.read_u32(le, n) || n > r.remaining() / 4) return false;
  if (n == 0) {
    out.append("EMPTY");
    return true;
  }
  out.push_back('(');
  for (uint32_t i = 0; i < n; ++i) {
    if (i) out.push_back(',');
    if (!wkb_point_list(r, le, out)) return false;
  }
  out.push_back(')');
  return true;
}

bool wkb_geometry(WkbReader& r, int depth, bool with_name, std::string& out, uint32_t expect_type = 0) {
  if (depth > 16) return false;
  uint8_t order;
  uint32_t type;
  if (!r.read_u8(order) || order > 1) return false;
  const bool le = order == 1;
  if (!r.read_u32(le, type)) return false;
  if (type & 0x20000000u) {  // EWKB SRID follows; the srid travels separately
    uint32_t srid;
    if (!r.read_u32(le, srid)) return false;
    type &= ~0x20000000u;
  }
  if (type > 7 || type == 0) return false;  // Z/M/ISO-3D/curves: caller falls back to hex
  if (expect_type != 0 && type != expect_type) return false;
  static const char* names[] = {"",           "POINT",           "LINESTRING",   "POLYGON",
                                "MULTIPOINT", "MULTILINESTRING", "MULTIPOLYGON", "GEOMETRYCOLLECTION"};
  if (with_name) out.append(names[type]);
  switch (type) {
    case 1: {
      const size_t mark = r.pos;
      double x, y;
      if (!r.read_f64(le, x) || !r.read_f64(le, y)) return false;
      if (std::isnan(x) && std::isnan(y)) {
        out.append(with_name ? " EMPTY" : "EMPTY");
        return true;
      }
      r.pos = mark;
      out.push_back('(');
      if (!wkb_coords(r, le, out)) return false;
      out.push_back(')');
      return true;
    }
    case 2:
      return wkb_point_list(r, le, out);
    case 3:
      return wkb_ring_list(r, le, out);
    default: {
      uint32_t n;
      if (!r.read_u32(le, n) || n > r.remaining() / 5) return false;
      if (n == 0) {
        out.append(" EMPTY");
        return true;
      }
      out.push_back('(');
      for (uint32_t i = 0; i < n; ++i) {
        if (i) out.push_back(',');
        const uint32_t member = type == 7 ? 0 : type - 3;
        if (!wkb_geometry(r, depth + 1, type == 7, out, member)) return false;
      }
      out.push_back(')');
      return true;
    }
  }
}

}  // namespace

bool base64_decode(std::string_view in, std::string& out) {
  out.clear();
  while (!in.empty() && in.back() == '=') in.remove_suffix(1);
  if (in.size() % 4 == 1) return false;
  out.reserve(in.size() * 3 / 4);
  uint32_t acc = 0;
  int bits = 0;
  for (char c : in) {
    int8_t v = kB64[static_cast<unsigned char>(c)];
    if (v < 0) return false;
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xFF));
    }
  }
  return true;
}

void base64_encode(std::string_view bytes, std::string& out) {
  size_t i = 0;
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  for (; i + 3 <= bytes.size(); i += 3) {
    uint32_t v = uint32_t{p[i]} << 16 | uint32_t{p[i + 1]} << 8 | p[i + 2];
    out.push_back(kB64Chars[v >> 18]);
    out.push_back(kB64Chars[(v >> 12) & 63]);
    out.push_back(kB64Chars[(v >> 6) & 63]);
    out.push_back(kB64Chars[v & 63]);
  }
  if (i + 1 == bytes.size()) {
    uint32_t v = uint32_t{p[i]} << 16;
    out.push_back(kB64Chars[v >> 18]);
    out.push_back(kB64Chars[(v >> 12) & 63]);
    out.append("==");
  } else if (i + 2 == bytes.size()) {
    uint32_t v = uint32_t{p[i]} << 16 | uint32_t{p[i + 1]} << 8;
    out.push_back(kB64Chars[v >> 18]);
    out.push_back(kB64Chars[(v >> 12) & 63]);
    out.push_back(kB64Chars[(v >> 6) & 63]);
    out.push_back('=');
  }
}

void hex_encode(std::string_view bytes, std::string& out) {
  for (char c : bytes) {
    auto b = static_cast<unsigned char>(c);
    out.push_back(kHex[b >> 4]);
    out.push_back(kHex[b & 15]);
  }
}

void decimal_from_twos_complement(std::string_view be, int32_t scale, std::string& out) {
  if (be.empty()) {
    place_decimal_point(false, "0", scale, out);
    return;
  }
  const bool negative = static_cast<unsigned char>(be[0]) & 0x80;
  char digits_buf[48];
  std::string big_digits;
  std::string_view digits;
  if (be.size() <= 16) {
    unsigned __int128 v = negative ? ~static_cast<unsigned __int128>(0) : 0;
    for (char c : be) v = (v << 8) | static_cast<unsigned char>(c);
    if (negative) v = ~v + 1;  // magnitude; -2^127 stays representable unsigned
    // Digits are produced right to left into a stack buffer: no allocation
    // for the common DECIMAL(<=38) case.
    char* end = digits_buf + sizeof digits_buf;
    char* p = end;
    do {
      *--p = static_cast<char>('0' + static_cast<int>(v % 10));
      v /= 10;
    } while (v != 0);
    digits = std::string_view(p, static_cast<size_t>(end - p));
  } else {
    // Arbitrary length (VariableScaleDecimal, NUMERIC without precision):
    // magnitude in base 2^32 limbs, then repeated division by 10^9.
    std::vector<uint8_t> mag(be.begin(), be.end());
    if (negative) {
      for (auto& b : mag) b = static_cast<uint8_t>(~b);
      for (size_t i = mag.size(); i-- > 0;) {
        if (++mag[i] != 0) break;
      }
    }
    std::vector<uint32_t> limbs;  // little-endian
    for (size_t end = mag.size(); end > 0;) {
      size_t begin = end >= 4 ? end - 4 : 0;
      uint32_t limb = 0;
      for (size_t i = begin; i < end; ++i) limb = (limb << 8) | mag[i];
      limbs.push_back(limb);
      end = begin;
    }
    while (!limbs.empty() && limbs.back() == 0) limbs.pop_back();
    std::vector<uint32_t> chunks;  // base 10^9, little-endian
    while (!limbs.empty()) {
      uint64_t rem = 0;
      for (size_t i = limbs.size(); i-- > 0;) {
        uint64_t cur = (rem << 32) | limbs[i];
        limbs[i] = static_cast<uint32_t>(cur / 1000000000u);
        rem = cur % 1000000000u;
      }
      chunks.push_back(static_cast<uint32_t>(rem));
      while (!limbs.empty() && limbs.back() == 0) limbs.pop_back();
    }
    if (chunks.empty()) chunks.push_back(0);
    append_padded(chunks.back(), 1, big_digits);
    for (size_t i = chunks.size() - 1; i-- > 0;) append_padded(chunks[i], 9, big_digits);
    digits = big_digits;
  }
  place_decimal_point(negative, digits, scale, out);
}

bool is_json_number(std::string_view t) {
  size_t i = 0, n = t.size();
  if (i < n && t[i] == '-') ++i;
  if (i >= n) return false;
  if (t[i] == '0') {
    ++i;
  } else if (t[i] >= '1' && t[i] <= '9') {
    while (i < n && t[i] >= '0' && t[i] <= '9') ++i;
  } else {
    return false;
  }
  if (i < n && t[i] == '.') {
    ++i;
    size_t start = i;
    while (i < n && t[i] >= '0' && t[i] <= '9') ++i;
    if (i == start) return false;
  }
  if (i < n && (t[i] == 'e' || t[i] == 'E')) {
    ++i;
    if (i < n && (t[i] == '+' || t[i] == '-')) ++i;
    size_t start = i;
    while (i < n && t[i] >= '0' && t[i] <= '9') ++i;
    if (i == start) return false;
  }
  return i == n;
}

bool parse_int64(std::string_view t, int64_t& value) {
  const bool negative = !t.empty() && t[0] == '-';
  const std::string_view digits = negative ? t.substr(1) : t;
  // JSON has no leading zeros ("007" is not an int); from_chars would take them.
  if (digits.empty() || (digits.size() > 1 && digits[0] == '0')) return false;
  if (digits.size() <= 18) {
    // Cannot overflow: one pass without from_chars' per-digit overflow
    // checks (this runs for every timestamp, position and integer column).
    uint64_t v = 0;
    for (const char c : digits) {
      const auto d = static_cast<unsigned>(static_cast<unsigned char>(c) - '0');
      if (d > 9) return false;
      v = v * 10 + d;
    }
    value = negative ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
    return true;
  }
  auto r = std::from_chars(t.data(), t.data() + t.size(), value);
  return r.ec == std::errc() && r.ptr == t.data() + t.size();
}

void append_fraction(int64_t nanos, std::string& out) {
  char buf[kTimeBuf];
  out.append(buf, put_fraction(buf, nanos));
}

void format_date(int64_t days, std::string& out) { append_ymd(days, out); }

void format_timestamp_ns(int64_t seconds, int64_t nanos, std::string& out) {
  const int64_t days = floor_div(seconds, 86400);
  char buf[kTimeBuf];
  char* p = put_ymd(buf, days);
  *p++ = ' ';
  p = put_hms(p, static_cast<uint64_t>(seconds - days * 86400));
  out.append(buf, put_fraction(p, nanos));
}

void format_timestamp(int64_t value, int64_t ups, std::string& out) {
  const int64_t seconds = floor_div(value, ups);
  const int64_t rem = value - seconds * ups;
  format_timestamp_ns(seconds, rem * (1000000000 / ups), out);
}

void format_time(int64_t value, int64_t ups, std::string& out) {
  uint64_t mag = value < 0 ? static_cast<uint64_t>(0) - static_cast<uint64_t>(value) : static_cast<uint64_t>(value);
  const auto u = static_cast<uint64_t>(ups);
  char buf[kTimeBuf];
  char* p = buf;
  if (value < 0) *p++ = '-';
  p = put_hms(p, mag / u);
  out.append(buf, put_fraction(p, static_cast<int64_t>((mag % u) * (1000000000 / u))));
}

std::optional<absl::TimeZone> load_time_zone(std::string_view name) {
  if (name.empty() || name == "UTC") return absl::UTCTimeZone();
  // IANA names only: abseil would also open "file:..." and absolute paths.
  if (name.front() == '/' || name.find("..") != std::string_view::npos || name.find(':') != std::string_view::npos)
    return std::nullopt;
  absl::TimeZone tz;
  if (!absl::LoadTimeZone(std::string(name), &tz)) return std::nullopt;
  return tz;
}

bool format_zoned_timestamp(std::string_view s, const absl::TimeZone* zone, std::string& out) {
  int64_t days, sod, nanos, offset;
  if (!take_ymd(s, days)) return false;
  if (!take_char(s, 'T') && !take_char(s, ' ')) return false;
  if (!take_hms(s, sod) || !take_fraction(s, nanos) || !take_offset(s, offset)) return false;
  if (days > 106751991167LL / 1000 || days < -106751991167LL / 1000) return false;
  const int64_t utc = days * 86400 + sod - offset;
  const int64_t local = utc + zone_offset_at(zone, utc);
  format_timestamp_ns(local, nanos, out);
  return true;
}

bool format_zoned_time(std::string_view s, const absl::TimeZone* zone, std::string& out) {
  int64_t sod, nanos, offset;
  if (!take_hms(s, sod) || !take_fraction(s, nanos) || !take_offset(s, offset)) return false;
  int64_t local = sod - offset + zone_offset_at(zone, 0);
  local = ((local % 86400) + 86400) % 86400;
  char buf[kTimeBuf];
  out.append(buf, put_fraction(put_hms(buf, static_cast<uint64_t>(local)), nanos));
  return true;
}

bool format_local_timestamp(std::string_view s, std::string& out) {
  int64_t days, sod = 0, nanos = 0;
  if (!take_ymd(s, days)) return false;
  if (!s.empty()) {
    if (!take_char(s, 'T') && !take_char(s, ' ')) return false;
    if (!take_hms(s, sod) || !take_fraction(s, nanos) || !s.empty()) return false;
  }
  if (days > 106751991167LL / 1000 || days < -106751991167LL / 1000) return false;
  format_timestamp_ns(days * 86400 + sod, nanos, out);
  return true;
}

bool is_integer_text(std::string_view s) {
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) s.remove_prefix(1);
  if (s.empty()) return false;
  for (char ch : s) {
    if (ch < '0' || ch > '9') return false;
  }
  return true;
}

bool is_decimal_text(std::string_view s) {
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) s.remove_prefix(1);
  size_t digits = 0, dots = 0;
  for (char ch : s) {
    if (ch >= '0' && ch <= '9') {
      ++digits;
    } else if (ch == '.' && dots == 0) {
      ++dots;
    } else {
      return false;
    }
  }
  return digits > 0;
}

bool format_iso_date(std::string_view s, std::string& out) {
  int64_t days, offset;
  if (!take_ymd(s, days)) return false;
  if (!s.empty() && !take_offset(s, offset)) return false;
  append_ymd(days, out);
  return true;
}

bool wkb_to_wkt(std::string_view wkb, std::string& out) {
  WkbReader r{wkb};
  const size_t mark = out.size();
  if (!wkb_geometry(r, 0, true, out) || r.remaining() != 0) {
    out.resize(mark);
    return false;
  }
  return true;
}

void append_json_string(std::string_view s, std::string& out) {
  out.push_back('"');
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out.append(s.data() + start, i - start);
    start = i + 1;
    switch (c) {
      case '"': out.append("\\\""); break;
      case '\\': out.append("\\\\"); break;
      case '\n': out.append("\\n"); break;
      case '\r': out.append("\\r"); break;
      case '\t': out.append("\\t"); break;
      case '\b': out.append("\\b"); break;
      case '\f': out.append("\\f"); break;
      default:
        out.append("\\u00");
        out.push_back(kHex[c >> 4]);
        out.push_back(kHex[c & 15]);
    }
  }
  out.append(s.data() + start, s.size() - start);
  out.push_back('"');
}

bool json_unescape(std::string_view inner, std::string& out) {
  out.clear();
  auto hex4 = [&](size_t at, uint32_t& v) {
    if (at + 4 > inner.size()) return false;
    v = 0;
    for (size_t k = at; k < at + 4; ++k) {
      const char h = inner[k];
      const int d = h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10 : h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
      if (d < 0) return false;
      v = v * 16 + static_cast<uint32_t>(d);
    }
    return true;
  };
  for (size_t i = 0; i < inner.size(); ++i) {
    if (inner[i] != '\\') {
      out.push_back(inner[i]);
      continue;
    }
    if (++i == inner.size()) return false;
    switch (inner[i]) {
      case '"': out.push_back('"'); break;
      case '\\': out.push_back('\\'); break;
      case '/': out.push_back('/'); break;
      case 'b': out.push_back('\b'); break;
      case 'f': out.push_back('\f'); break;
      case 'n': out.push_back('\n'); break;
      case 'r': out.push_back('\r'); break;
      case 't': out.push_back('\t'); break;
      case 'u': {
        uint32_t cp = 0;
        if (!hex4(i + 1, cp)) return false;
        i += 4;
        if (cp >= 0xD800 && cp < 0xDC00) {  // a surrogate pair
          uint32_t lo = 0;
          if (i + 2 >= inner.size() || inner[i + 1] != '\\' || inner[i + 2] != 'u' || !hex4(i + 3, lo) || lo < 0xDC00 ||
              lo > 0xDFFF)
            return false;
          i += 6;
          cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
          return false;
        }
        if (cp < 0x80) {
          out.push_back(static_cast<char>(cp));
        } else if (cp < 0x800) {
          out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
          out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
        } else if (cp < 0x10000) {
          out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
          out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
          out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
        } else {
          out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
          out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
          out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
          out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
        }
        break;
      }
      default: return false;
    }
  }
  return true;
}

void append_double(double v, std::string& out) {
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

}  // namespace cdc2doris::decode
