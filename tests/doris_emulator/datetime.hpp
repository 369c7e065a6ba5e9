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

// Parses `text` for a DATE (datetime=false) or DATETIME(scale) column.
// Fractions are rounded half up to `scale` digits (carrying into seconds);
// a zone suffix shifts the value into `zone`. False: Doris rejects the text.
bool parse_datetime_text(std::string_view text, bool datetime, int scale, const LoadZone& zone, DateTimeParts* out);

}  // namespace cdc2doris::emu
