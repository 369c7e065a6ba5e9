#pragma once
// Pure value conversions used by the decoder: Debezium wire forms to the
// exact text Doris parses. No JSON parsing here, so each function can be
// tested (and fuzzed) on its own. Every function appends to `out` and returns
// false when the input is not what the type requires; `out` is then in an
// unspecified state and the caller reports the error.
#include <absl/time/time.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace cdc2doris::decode {

// Standard base64 with padding (Kafka Connect's bytes encoding). Also accepts
// unpadded input, which some hand-written producers emit.
bool base64_decode(std::string_view in, std::string& out);
void base64_encode(std::string_view bytes, std::string& out);
void hex_encode(std::string_view bytes, std::string& out);

// Big-endian two's-complement unscaled integer * 10^-scale, as a plain decimal
// string ("-123.45", "0.001", "18446744073709551615"). Any length of input;
// negative scales append zeros. Empty input is zero.
void decimal_from_twos_complement(std::string_view be_bytes, int32_t scale, std::string& out);

// True if `text` is a JSON number token (RFC 8259 grammar).
bool is_json_number(std::string_view text);
// Parses a JSON integer token into int64 without going through double.
bool parse_int64(std::string_view text, int64_t& value);

// Epoch-based temporal values, all without time-zone shift. Negative values
// (before 1970) use floor division so 1969-12-31 23:59:59.999999 is exact.
void format_date(int64_t days_since_epoch, std::string& out);                 // YYYY-MM-DD
void format_timestamp_ns(int64_t seconds, int64_t nanos_of_second, std::string& out);  // YYYY-MM-DD HH:MM:SS[.ffffff]
void format_timestamp(int64_t value, int64_t units_per_second, std::string& out);
// Time of day (may exceed 24h or be negative for MySQL TIME): [-]HH:MM:SS[.ffffff]
void format_time(int64_t value, int64_t units_per_second, std::string& out);
// Fraction: nothing when zero, 6 digits when a whole number of microseconds,
// else 9 digits (sub-microsecond precision is kept, never rounded away).
void append_fraction(int64_t nanos, std::string& out);

// An IANA zone by name via abseil's time zone library, which applies the tz
// file's POSIX footer rule after its last stored transition (hand-rolled
// readers that stop at the last transition are an hour off in summers after
// 2037, and "slim" tz files list few transitions at all). nullopt for an
// unknown name; "UTC" and "" are UTC.
std::optional<absl::TimeZone> load_time_zone(std::string_view name);

// ISO-8601 instant with offset ("2020-07-17T18:00:22.123456Z", "...+02:00")
// converted to the wall clock of `zone` (nullptr = UTC). No allocation.
bool format_zoned_timestamp(std::string_view iso, const absl::TimeZone* zone, std::string& out);
// ISO offset time ("08:15:30.123456Z"). A time has no date, so the zone's
// offset at 1970-01-01 is used (documented in docs/decoding.md).
bool format_zoned_time(std::string_view iso, const absl::TimeZone* zone, std::string& out);
// A wall-clock timestamp without zone ("2024-01-01T10:00:00.5", "... 10:00:00",
// or a date alone) -> "YYYY-MM-DD HH:MM:SS[.ffffff]". False with a zone suffix.
bool format_local_timestamp(std::string_view iso, std::string& out);
// "-123.45", "7", "+0.5": decimal text as decimal.handling.mode=string sends it.
bool is_decimal_text(std::string_view s);
// [+-]digits: an integer written as text.
bool is_integer_text(std::string_view s);
// ISO date with optional zone suffix ("2017-09-15Z") -> "2017-09-15".
bool format_iso_date(std::string_view iso, std::string& out);

// WKB (ISO or EWKB, either byte order) -> WKT. False for shapes it does not
// know (Z/M, curves); the caller then falls back to hex.
bool wkb_to_wkt(std::string_view wkb, std::string& out);

// Appends `s` as a JSON string literal (with quotes), escaping as needed.
void append_json_string(std::string_view s, std::string& out);
// The content of a JSON string literal (between its quotes) unescaped into `out`.
bool json_unescape(std::string_view inner, std::string& out);
// Shortest round-trip text of a double ("3.14", "1e+300").
void append_double(double v, std::string& out);

}  // namespace cdc2doris::decode
