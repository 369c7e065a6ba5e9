#pragma once
// DATE/DATETIME text as a Doris BE reads it in a load, and the load's time
// zone. The rules follow DateV2Value<T>::from_date_str_base
// (be/src/vec/runtime/vdatetime_value.cpp) and TimezoneUtils
// (be/src/util/timezone_utils.cpp); docs/doris-emulator.md lists them with
// examples.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace cdc2doris::emu {

// The time zone a load converts zone-suffixed values into (stream-load header
// `timezone`, default Asia/Shanghai like the FE's TimeUtils.DEFAULT_TIME_ZONE).
struct LoadZone {
  std::string name = "Asia/Shanghai";
  // Absolute time (Unix seconds) of civil 1970-01-01 00:00:00 in this zone:
  // Doris converts "<value><zone>" by the difference of the two zones' values
  // of this instant, not by their offsets at the value's own date.
  int64_t epoch_civil_s = -8 * 3600;
};

// Resolves a zone name as Doris' TimezoneUtils::find_cctz_time_zone does:
// tz database names case-insensitively, "Z"/"Zulu"/"UTC"/"Etc/UTC", "CST"
// (Asia/Shanghai), "+HH:MM"/"-HH:MM" (also one hour digit), "UTC+8",
// "GMT-08:00". nullopt: unknown.
std::optional<LoadZone> find_zone(std::string_view name);

struct DateTimeParts {
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0;
  int us = 0;
};

inline bool dt_digit(char c) { return c >= '0' && c <= '9'; }
inline int dt_days_in(int y, int m) {
  static constexpr int d[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && ((y % 4 == 0 && y % 100 != 0) || y % 400 == 0) ? 29 : d[m - 1];
}

// "YYYY-MM-DD[( |T)HH:MM:SS[.f{1,6}]]" without a zone, the form almost every
// writer sends, read at fixed positions (inline: it runs per value on the
// ingest path). False leaves the value to parse_datetime_text, which gives
// the same result for these forms.
inline bool parse_canonical_datetime(std::string_view s, bool datetime, int scale, DateTimeParts* out) {
  const size_t n = s.size();
  if (n != 10 && n != 19 && (n < 21 || n > 26)) return false;
  auto d2 = [&](size_t i, int* v) {
    if (!dt_digit(s[i]) || !dt_digit(s[i + 1])) return false;
    *v = (s[i] - '0') * 10 + (s[i + 1] - '0');
    return true;
  };
  int y1, y2, mo, d, h = 0, mi = 0, se = 0;
  if (!d2(0, &y1) || !d2(2, &y2) || s[4] != '-' || !d2(5, &mo) || s[7] != '-' || !d2(8, &d)) return false;
  int64_t us = 0;
  if (n > 10) {
    if ((s[10] != ' ' && s[10] != 'T') || !d2(11, &h) || s[13] != ':' || !d2(14, &mi) || s[16] != ':' ||
        !d2(17, &se))
      return false;
    if (n > 19) {
      if (s[19] != '.') return false;
      for (size_t i = 20; i < n; ++i) {
        if (!dt_digit(s[i])) return false;
        us = us * 10 + (s[i] - '0');
      }
      for (size_t k = n - 20; k < 6; ++k) us *= 10;
      if (datetime && scale < 6) {
        int64_t div = 1;
        for (int k = scale; k < 6; ++k) div *= 10;
        int64_t rem = us % div;
        us = us / div * div + (rem >= div / 2 ? div : 0);
        if (us == 1000000) return false;  // carries into the seconds: general path
      }
    }
  }
  const int y = y1 * 100 + y2;
  if (mo < 1 || mo > 12 || d < 1 || d > dt_days_in(y, mo)) return false;
  if (datetime && (h > 23 || mi > 59 || se > 59)) return false;
  out->y = y;
  out->mo = mo;
  out->d = d;
  out->h = datetime ? h : 0;
  out->mi = datetime ? mi : 0;
  out->s = datetime ? se : 0;
  out->us = datetime ? static_cast<int>(us) : 0;
  return true;
}


// Parses `text` for a DATE (datetime=false) or DATETIME(scale) column.
// Fractions are rounded half up to `scale` digits (carrying into seconds);
// a zone suffix shifts the value into `zone`. False: Doris rejects the text.
bool parse_datetime_text(std::string_view text, bool datetime, int scale, const LoadZone& zone, DateTimeParts* out);

}  // namespace cdc2doris::emu
