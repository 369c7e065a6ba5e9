#include <catch2/catch.hpp>

#include "core/decode/wire_values.hpp"

using namespace cdc2doris::decode;

namespace {
std::string dec(std::string_view b64, int32_t scale) {
  std::string bytes, out;
  REQUIRE(base64_decode(b64, bytes));
  decimal_from_twos_complement(bytes, scale, out);
  return out;
}
std::string ts(int64_t v, int64_t ups) {
  std::string out;
  format_timestamp(v, ups, out);
  return out;
}
std::string time_of(int64_t v, int64_t ups) {
  std::string out;
  format_time(v, ups, out);
  return out;
}
std::string date_of(int64_t d) {
  std::string out;
  format_date(d, out);
  return out;
}
std::string zoned(std::string_view iso, const char* zone) {
  std::string out;
  const auto z = zone ? load_time_zone(zone) : std::nullopt;
  REQUIRE((zone == nullptr || z));
  if (!format_zoned_timestamp(iso, z ? &*z : nullptr, out)) return "<invalid>";
  return out;
}
}  // namespace

TEST_CASE("Decimal from two's complement bytes is exact", "[decode][values][decimal]") {
  CHECK(dec("MDk=", 2) == "123.45");
  CHECK(dec("z8c=", 2) == "-123.45");
  CHECK(dec("EtaH", 4) == "123.4567");
  CHECK(dec("ALxfFg==", 3) == "12345.110");
  CHECK(dec("AP//////////", 0) == "18446744073709551615");
  CHECK(dec("AA==", 0) == "0");
  CHECK(dec("AA==", 2) == "0.00");
  CHECK(dec("", 3) == "0.000");
  // scale 38 at the edge of DECIMAL(38,38)
  CHECK(dec("SztMqFqGxHoJiiI//////w==", 38) == "0.99999999999999999999999999999999999999");
  CHECK(dec("tMSzV6V5O4X2dd3AAAAAAQ==", 38) == "-0.99999999999999999999999999999999999999");
  CHECK(dec("SztMqFqGxHoJiiI//////w==", 0) == "99999999999999999999999999999999999999");
  CHECK(dec("/w==", 38) == "-0.00000000000000000000000000000000000001");
  CHECK(dec("/w==", 0) == "-1");
  // more than 16 bytes: the arbitrary-precision path
  CHECK(dec("ACzXb+CGuTzi92igCyKgAAdbzRU=", 5) == "10000000000000000000000000000000000001234.56789");
  CHECK(dec("/9MokB95RsMdCJdf9N1f//ikMus=", 0) == "-1000000000000000000000000000000000000123456789");
  CHECK(dec("AQ==", -3) == "1000");
}

TEST_CASE("base64 rejects invalid input", "[decode][values]") {
  std::string out;
  CHECK_FALSE(base64_decode("MD!=", out));
  CHECK_FALSE(base64_decode("M", out));
  CHECK(base64_decode("MDk", out));  // unpadded is tolerated
  CHECK(out == "09");
  std::string enc;
  base64_encode("__debezium_unavailable_value", enc);
  CHECK(enc == "X19kZWJleml1bV91bmF2YWlsYWJsZV92YWx1ZQ==");
  std::string hex;
  hex_encode(std::string("\x01\xab\xff", 3), hex);
  CHECK(hex == "01abff");
}

TEST_CASE("Dates, including before 1970 and leap days", "[decode][values][date]") {
  CHECK(date_of(19825) == "2024-04-12");
  CHECK(date_of(18460) == "2020-07-17");
  CHECK(date_of(0) == "1970-01-01");
  CHECK(date_of(-1) == "1969-12-31");
  CHECK(date_of(11016) == "2000-02-29");
  CHECK(date_of(-25508) == "1900-03-01");
  CHECK(date_of(-719162) == "0001-01-01");
  CHECK(date_of(2932896) == "9999-12-31");
}

TEST_CASE("Timestamps without zone shift, negative epochs exact", "[decode][values][timestamp]") {
  CHECK(ts(1712917800000, 1000) == "2024-04-12 10:30:00");
  CHECK(ts(1529476623000, 1000) == "2018-06-20 06:37:03");
  CHECK(ts(1595008822123456, 1000000) == "2020-07-17 18:00:22.123456");
  CHECK(ts(1529507596945104, 1000000) == "2018-06-20 15:13:16.945104");
  CHECK(ts(-1, 1000000) == "1969-12-31 23:59:59.999999");
  CHECK(ts(-1, 1000) == "1969-12-31 23:59:59.999000");
  CHECK(ts(-86400000000, 1000000) == "1969-12-31 00:00:00");
  CHECK(ts(253402300799999999, 1000000) == "9999-12-31 23:59:59.999999");
  CHECK(ts(1734382927000000000, 1000000000) == "2024-12-16 21:02:07");
  CHECK(ts(1734382927000000001, 1000000000) == "2024-12-16 21:02:07.000000001");
  CHECK(ts(123, 1000) == "1970-01-01 00:00:00.123000");
  // PostgreSQL 'infinity' in micro mode: far beyond Doris' range, but exact.
  CHECK(ts(9223372036825200000, 1000000) == "294247-01-10 04:00:25.200000");
}

TEST_CASE("Times of day, MySQL TIME beyond 24h and negative", "[decode][values][time]") {
  CHECK(time_of(86399999999, 1000000) == "23:59:59.999999");
  CHECK(time_of(37800000000, 1000000) == "10:30:00");
  CHECK(time_of(3020399000000, 1000000) == "838:59:59");
  CHECK(time_of(-1000000, 1000000) == "-00:00:01");
  CHECK(time_of(75723000000000, 1000000000) == "21:02:03");
  CHECK(time_of(45296789, 1000) == "12:34:56.789000");
}

TEST_CASE("Zoned timestamps convert to the target zone, across DST", "[decode][values][zoned]") {
  CHECK(zoned("2020-07-17T18:00:22.123456Z", nullptr) == "2020-07-17 18:00:22.123456");
  CHECK(zoned("2020-07-17T18:00:22Z", nullptr) == "2020-07-17 18:00:22");
  CHECK(zoned("2024-01-01T08:00:00+08:00", nullptr) == "2024-01-01 00:00:00");
  CHECK(zoned("2024-01-01T00:00:00-05:30", nullptr) == "2024-01-01 05:30:00");
  CHECK(zoned("2018-06-20T13:37:03Z", "Asia/Shanghai") == "2018-06-20 21:37:03");
  // New York spring forward: 01:59:59 EST is followed by 03:00:00 EDT
  CHECK(zoned("2024-03-10T06:59:59Z", "America/New_York") == "2024-03-10 01:59:59");
  CHECK(zoned("2024-03-10T07:00:00Z", "America/New_York") == "2024-03-10 03:00:00");
  // Berlin fall back: 02:30 happens twice
  CHECK(zoned("2024-10-27T00:30:00Z", "Europe/Berlin") == "2024-10-27 02:30:00");
  CHECK(zoned("2024-10-27T01:30:00Z", "Europe/Berlin") == "2024-10-27 02:30:00");
  CHECK(zoned("1969-12-31T23:59:59.999999Z", nullptr) == "1969-12-31 23:59:59.999999");
  CHECK(zoned("9999-12-31T23:59:59.999999Z", nullptr) == "9999-12-31 23:59:59.999999");
  CHECK(zoned("2023-02-30T00:00:00Z", nullptr) == "<invalid>");
  CHECK(zoned("2023-02-03", nullptr) == "<invalid>");
  CHECK(zoned("2023-02-03T00:00:00", nullptr) == "<invalid>");
  std::string out;
  CHECK(format_zoned_time("08:15:30.123456Z", nullptr, out));
  CHECK(out == "08:15:30.123456");
  out.clear();
  const auto shanghai = load_time_zone("Asia/Shanghai");
  REQUIRE(shanghai);
  CHECK(format_zoned_time("23:30:00Z", &*shanghai, out));
  CHECK(out == "07:30:00");
  out.clear();
  CHECK(format_iso_date("2017-09-15Z", out));
  CHECK(out == "2017-09-15");
}

TEST_CASE("WKB to WKT", "[decode][values][geometry]") {
  std::string wkb, out;
  REQUIRE(base64_decode("AQEAAAAAAAAAAADwPwAAAAAAAABA", wkb));  // POINT(1 2), little endian
  REQUIRE(wkb_to_wkt(wkb, out));
  CHECK(out == "POINT(1 2)");
  // MySQL/PostGIS LINESTRING(0 0,1 1.5), big endian
  std::string ls("\x00\x00\x00\x00\x02\x00\x00\x00\x02"
                 "\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"
                 "\x3f\xf0\x00\x00\x00\x00\x00\x00\x3f\xf8\x00\x00\x00\x00\x00\x00",
                 41);
  out.clear();
  REQUIRE(wkb_to_wkt(ls, out));
  CHECK(out == "LINESTRING(0 0,1 1.5)");
  out.clear();
  CHECK_FALSE(wkb_to_wkt(std::string("\x01\x01\x00", 3), out));
  CHECK(out.empty());
}

TEST_CASE("JSON number grammar and exact int64", "[decode][values]") {
  CHECK(is_json_number("0"));
  CHECK(is_json_number("-12.5e+3"));
  CHECK(is_json_number("18446744073709551615"));
  CHECK_FALSE(is_json_number("01"));
  CHECK_FALSE(is_json_number("1."));
  CHECK_FALSE(is_json_number("+1"));
  CHECK_FALSE(is_json_number("NaN"));
  int64_t v;
  CHECK(parse_int64("9223372036854775807", v));
  CHECK(v == INT64_MAX);
  CHECK(parse_int64("-9223372036854775808", v));
  CHECK(v == INT64_MIN);
  CHECK_FALSE(parse_int64("-9223372036854776000", v));
  CHECK_FALSE(parse_int64("1.0", v));
  // Up to 18 digits take a path without overflow checks; 19 go to from_chars.
  CHECK(parse_int64("999999999999999999", v));
  CHECK(v == 999'999'999'999'999'999);
  CHECK(parse_int64("-999999999999999999", v));
  CHECK(v == -999'999'999'999'999'999);
  CHECK(parse_int64("1000000000000000000", v));
  CHECK(v == 1'000'000'000'000'000'000);
  CHECK(parse_int64("-0", v));
  CHECK(v == 0);
  CHECK(parse_int64("1700000000003", v));
  CHECK(v == 1'700'000'000'003);
  for (const char* bad : {"", "-", "007", "-00", "+1", " 1", "1 ", "1a", "12345678901234567a", "0x10",
                          "9223372036854775808", "00000000000000000001"}) {
    INFO(bad);
    CHECK_FALSE(parse_int64(bad, v));
  }
  std::string s;
  append_json_string("a\"b\\c\n\x01", s);
  CHECK(s == "\"a\\\"b\\\\c\\n\\u0001\"");
}
