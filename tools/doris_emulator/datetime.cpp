#include "tools/doris_emulator/datetime.hpp"

#include <absl/time/civil_time.h>
#include <absl/time/time.h>

#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <unordered_map>

namespace cdc2doris::emu {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }
// The C locale's ispunct: printable ASCII that is neither alphanumeric nor space.
bool is_punct(char c) { return c > ' ' && c < 127 && !is_digit(c) && !is_alpha(c); }

std::string lower(std::string_view s) {
  std::string r(s);
  for (auto& c : r)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return r;
}

int days_in(int y, int m) {
  static const int d[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return m == 2 && leap ? 29 : d[m - 1];
}

// Where a zone suffix starts, as Doris' time_zone_begins decides it: '+', a
// '-' that has ':' three characters on ("-08:00", not a date's "-11-14"), or
// a letter other than the date/time separator 'T'.
bool zone_begins(const char* p, const char* end) {
  return *p == '+' || (*p == '-' && p + 3 < end && p[3] == ':') || (is_alpha(*p) && *p != 'T');
}

LoadZone fixed_zone(std::string name, int64_t offset_s) { return LoadZone{std::move(name), -offset_s}; }

// "+H:MM", "+HH:MM" (and hour-only "+8" when allowed, for "UTC+8") with
// Doris' bounds: -12:00..+14:00, minutes below 60.
std::optional<int64_t> offset_seconds(std::string_view s, bool allow_hour_only) {
  if (s.size() < 2 || (s[0] != '+' && s[0] != '-')) return std::nullopt;
  bool pos = s[0] == '+';
  std::string_view rest = s.substr(1);
  auto digits = [](std::string_view v, size_t lo, size_t hi) {
    if (v.size() < lo || v.size() > hi) return false;
    for (char c : v)
      if (!is_digit(c)) return false;
    return true;
  };
  int h = 0, m = 0;
  size_t colon = rest.find(':');
  if (colon != std::string_view::npos) {
    std::string_view hp = rest.substr(0, colon), mp = rest.substr(colon + 1);
    if (!digits(hp, 1, 2) || !digits(mp, 2, 2)) return std::nullopt;
    for (char c : hp) h = h * 10 + (c - '0');
    m = (mp[0] - '0') * 10 + (mp[1] - '0');
  } else {
    if (!allow_hour_only || !digits(rest, 1, 2)) return std::nullopt;
    for (char c : rest) h = h * 10 + (c - '0');
  }
  if ((!pos && h > 12) || (pos && h > 14) || m >= 60) return std::nullopt;
  int64_t off = h * 3600 + m * 60;
  return pos ? off : -off;
}

// Lower-case tz database name -> its spelling on disk (Doris preloads every
// zoneinfo file under its lower-case name).
const std::unordered_map<std::string, std::string>& zone_names() {
  static const std::unordered_map<std::string, std::string> names = [] {
    std::unordered_map<std::string, std::string> m;
    const char* env = std::getenv("TZDIR");
    std::filesystem::path root = env && *env ? env : "/usr/share/zoneinfo";
    std::error_code ec;
    for (auto it = std::filesystem::recursive_directory_iterator(root, ec);
         !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
      auto fn = it->path().filename().string();
      if (it->is_directory(ec) && (fn == "posix" || fn == "right")) {
        it.disable_recursion_pending();
        continue;
      }
      if (!it->is_regular_file(ec)) continue;
      std::string rel = std::filesystem::relative(it->path(), root, ec).string();
      if (!ec) m.emplace(lower(rel), rel);
    }
    m.erase("lmt");
    return m;
  }();
  return names;
}

std::optional<LoadZone> resolve_zone(const std::string& name) {
  std::string l = lower(name);
  if (l == "z" || l == "zulu" || l == "utc" || l == "etc/utc") return fixed_zone("UTC", 0);
  if (l == "cst") l = "asia/shanghai";
  auto& names = zone_names();
  if (auto it = names.find(l); it != names.end()) {
    absl::TimeZone tz;
    if (!absl::LoadTimeZone(it->second, &tz)) return std::nullopt;
    auto t = tz.At(absl::CivilSecond(1970, 1, 1, 0, 0, 0)).pre;
    return LoadZone{it->second, absl::ToUnixSeconds(t)};
  }
  std::optional<int64_t> off;
  if (l.rfind("utc", 0) == 0 || l.rfind("gmt", 0) == 0) off = offset_seconds(std::string_view(name).substr(3), true);
  else off = offset_seconds(name, false);
  if (!off) return std::nullopt;
  return fixed_zone(name, *off);
}

}  // namespace

std::optional<LoadZone> find_zone(std::string_view name) {
  // Resolved names are cached: a zone suffix may come with every row.
  static std::mutex mu;
  static std::unordered_map<std::string, std::optional<LoadZone>> cache;
  std::lock_guard lock(mu);
  auto [it, fresh] = cache.try_emplace(std::string(name));
  if (fresh) it->second = resolve_zone(it->first);
  return it->second;
}

bool parse_datetime_text(std::string_view text, bool datetime, int scale, const LoadZone& zone, DateTimeParts* out) {
  if (parse_canonical_datetime(text, datetime, scale, out)) return true;
  const char* p = text.data();
  const char* end = p + text.size();
  while (p < end && is_space(*p)) ++p;
  if (p == end || !is_digit(*p)) return false;
  // Without delimiters ("20231114", "20231114T221354", "231114") the field
  // widths are fixed and the year has 4 digits for 4, 8 or >= 14 digits.
  const char* q = p;
  while (q < end && (is_digit(*q) || *q == 'T')) ++q;
  const bool packed = q == end || *q == '.' || zone_begins(q, end);
  const int64_t run = q - p;
  int year_len = packed ? (run == 4 || run == 8 || run >= 14 ? 4 : 2) : 4;

  constexpr int kParts = 8;  // year month day hour minute second fraction (and one spare)
  int64_t val[kParts] = {0};
  int64_t len[kParts] = {0};
  int idx = 0;
  int field_len = year_len;
  bool has_bar = false;
  int64_t shift_s = 0;
  bool carry = false;
  while (p < end && is_digit(*p) && idx < kParts) {
    const char* start = p;
    int64_t v = 0;
    const bool to_delim = !packed && idx != 6;
    while (p < end && is_digit(*p) && (to_delim || field_len-- > 0)) {
      if (v <= 9999999) v = v * 10 + (*p - '0');
      ++p;
    }
    if (idx == 6) {
      // Fraction: up to 6 digits read, scaled to microseconds and rounded
      // half up to the column's scale.
      const int64_t nd = p - start;
      for (int64_t k = nd; k < 6; ++k) v *= 10;
      if (datetime && scale >= 0) {
        if (scale == 6 && nd > 6) {
          if (p < end && is_digit(*p) && *p >= '5') v += 1;
        } else {
          int64_t div = 1;
          for (int k = scale; k < 6; ++k) div *= 10;
          int64_t rem = v % div;
          v /= div;
          if (scale < 6 && rem >= div / 2) v += 1;
          v *= div;
          if (v == 1000000) {
            v = 0;
            carry = true;
          }
        }
      }
    }
    if (v > 999999) return false;
    val[idx] = v;
    len[idx] = p - start;
    field_len = 2;
    if (p == end) {
      ++idx;
      break;
    }
    if ((idx > 2 || !has_bar) && zone_begins(p, end)) {
      auto z = find_zone(std::string_view(p, static_cast<size_t>(end - p)));
      if (!z) return false;
      shift_s = z->epoch_civil_s - zone.epoch_civil_s;
      ++idx;
      break;
    }
    if (idx == 2 && *p == 'T') {
      ++p;
      ++idx;
      continue;
    }
    if (idx == 5) {
      // After the seconds only a '.' and the fraction count; anything else
      // (a space, another zone spelling) ends the value and is ignored.
      if (*p == '.') {
        ++p;
        field_len = 6;
      } else if (is_digit(*p)) {
        ++idx;
        break;
      }
      ++idx;
      continue;
    }
    while (p < end && (is_punct(*p) || is_space(*p))) {
      // Spaces only between date and time and after the fraction.
      if (is_space(*p) && idx != 2 && idx != 6) return false;
      if (*p == '-') has_bar = true;
      ++p;
    }
    ++idx;
  }
  const int fields = idx;
  if (!packed) year_len = static_cast<int>(len[0]);
  if (year_len == 2) val[0] += val[0] < 70 ? 2000 : 1900;
  if (fields < 3) return false;
  const int64_t y = val[0], mo = val[1], d = val[2];
  if (y > 9999 || mo < 1 || mo > 12 || d < 1 || d > days_in(static_cast<int>(y), static_cast<int>(mo))) return false;
  if (datetime && (val[3] > 23 || val[4] > 59 || val[5] > 59)) return false;
  absl::CivilSecond cs(y, mo, d, datetime ? val[3] : 0, datetime ? val[4] : 0, datetime ? val[5] : 0);
  if (carry) cs += 1;
  // A zone suffix converts DATETIME values only: the newest DATE SerDe parses
  // and checks the zone but keeps the date as written
  // (be/src/vec/data_types/serde/data_type_datev2_serde.cpp, _from_string*;
  // regression suite datatype_p0/datetimev2/test_tz_streamload2 agrees).
  if (shift_s != 0 && datetime) cs += shift_s;
  if (cs.year() < 0 || cs.year() > 9999) return false;
  out->y = static_cast<int>(cs.year());
  out->mo = cs.month();
  out->d = cs.day();
  out->h = datetime ? cs.hour() : 0;
  out->mi = datetime ? cs.minute() : 0;
  out->s = datetime ? cs.second() : 0;
  out->us = datetime ? static_cast<int>(val[6]) : 0;
  return true;
}

}  // namespace cdc2doris::emu
