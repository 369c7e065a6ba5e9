// decode::RowCheck: each limit of a Doris column against decoder output rows
// (the limits as Doris BE and tools/doris_emulator/values.cpp apply them).
#include <catch2/catch.hpp>

#include "core/decode/row_check.hpp"
#include "core/schema/types.hpp"

using namespace cdc2doris;

namespace {

decode::ColumnLimit col(std::string name, std::string_view type, bool nullable = true, bool has_default = false) {
  return schema::column_limit(std::move(name), type, nullable, has_default);
}

std::optional<decode::RowViolation> check(decode::RowCheck& rc, std::string_view row, bool full = true) {
  return rc.check(row, full);
}

}  // namespace

TEST_CASE("row check: VARCHAR and CHAR lengths are bytes, escapes count as the bytes they stand for",
          "[decode][row_check]") {
  std::vector<decode::ColumnLimit> cols{col("id", "bigint", false), col("name", "varchar(5)"),
                                        col("code", "char(2)")};
  decode::RowCheck rc(cols);
  CHECK(rc.checks());
  CHECK_FALSE(check(rc, R"({"id":1,"name":"abcde","code":"xy","__DORIS_DELETE_SIGN__":0})"));
  // 5 characters of 2 bytes each: 10 bytes.
  auto v = check(rc, R"({"id":1,"name":"ééééé"})");
  REQUIRE(v);
  CHECK(v->column == "name");
  CHECK(v->expected == "VARCHAR(5): at most 5 bytes");
  CHECK(v->detail == "10 bytes: \"ééééé\"");
  // \u00e9 is 6 escaped bytes but 2 bytes of value: 4 of them fit.
  CHECK_FALSE(check(rc, R"({"id":1,"name":"\u00e9\u00e9"})"));
  CHECK(check(rc, R"({"id":1,"name":"\u00e9\u00e9\u00e9"})"));
  auto c = check(rc, R"({"id":1,"code":"abc"})");
  REQUIRE(c);
  CHECK(c->column == "code");
  // A number into a VARCHAR is its text.
  CHECK(check(rc, R"({"id":1,"name":123456})"));
  // Column names match as Doris matches them: case-insensitively.
  CHECK(check(rc, R"({"id":1,"NAME":"abcdef"})"));
}

TEST_CASE("row check: the start of a long value is quoted, cut at a character boundary", "[decode][row_check]") {
  decode::RowCheck rc({col("s", "varchar(3)")});
  auto v = check(rc, R"({"s":"0123456789012345678901234567890é and more"})");
  REQUIRE(v);
  // 31 ASCII bytes, then a 2-byte character that would end at byte 33.
  CHECK(v->detail == "42 bytes: \"0123456789012345678901234567890\"...");
  auto ctl = check(rc, R"({"s":"a\nbcd"})");
  REQUIRE(ctl);
  CHECK(ctl->detail == "5 bytes: \"a\\x0abcd\"");
}

TEST_CASE("row check: DECIMAL digits before the point, never the fraction", "[decode][row_check]") {
  decode::RowCheck rc({col("p", "decimalv3(5, 2)")});
  CHECK_FALSE(check(rc, R"({"p":"999.99"})"));
  CHECK_FALSE(check(rc, R"({"p":"-999.999999"})"));  // rounded by Doris, not refused here
  CHECK_FALSE(check(rc, R"({"p":"000123.4"})"));
  CHECK_FALSE(check(rc, R"({"p":0.5})"));
  CHECK_FALSE(check(rc, R"({"p":"1.5E2"})"));
  auto v = check(rc, R"({"p":"1000.5"})");
  REQUIRE(v);
  CHECK(v->expected == "DECIMAL(5,2): at most 3 digits before the decimal point");
  CHECK(v->detail == "4 digits: \"1000.5\"");
  CHECK(check(rc, R"({"p":-1234})"));
  CHECK(check(rc, R"({"p":"1.5E3"})"));
  CHECK_FALSE(check(rc, R"({"p":"not a number"})"));  // left to Doris
}

TEST_CASE("row check: integer ranges of TINYINT to LARGEINT", "[decode][row_check]") {
  decode::RowCheck rc({col("t", "tinyint(4)"), col("s", "smallint"), col("i", "int"), col("b", "bigint"),
                       col("l", "largeint")});
  CHECK_FALSE(check(rc, R"({"t":127,"s":-32768,"i":2147483647,"b":-9223372036854775808})"));
  CHECK(check(rc, R"({"t":128})"));
  CHECK(check(rc, R"({"t":-129})"));
  CHECK(check(rc, R"({"s":32768})"));
  CHECK(check(rc, R"({"i":"-2147483649"})"));
  CHECK(check(rc, R"({"b":9223372036854775808})"));
  CHECK_FALSE(check(rc, R"({"l":"170141183460469231731687303715884105727"})"));
  CHECK(check(rc, R"({"l":"170141183460469231731687303715884105728"})"));
  CHECK(check(rc, R"({"l":"-1701411834604692317316873037158841057280000"})"));
  CHECK_FALSE(check(rc, R"({"i":1.5,"b":true})"));  // other forms are left to Doris
}

TEST_CASE("row check: DATE and DATETIME years outside 0000 to 9999", "[decode][row_check]") {
  decode::RowCheck rc({col("d", "datev2"), col("ts", "datetime(6)")});
  CHECK_FALSE(check(rc, R"({"d":"9999-12-31","ts":"0000-01-01 00:00:00.000001"})"));
  auto v = check(rc, R"({"d":"10000-01-01"})");
  REQUIRE(v);
  CHECK(v->expected == "DATE: a year from 0000 to 9999");
  CHECK(check(rc, R"({"ts":"-0001-12-31 23:59:59"})"));
  CHECK_FALSE(check(rc, R"({"d":20240101})"));  // an integer form: Doris reads it
}

TEST_CASE("row check: NOT NULL without a default takes no null and must be in a full row", "[decode][row_check]") {
  decode::RowCheck rc({col("id", "int", false), col("n", "string", false, /*has_default=*/true), col("o", "string")});
  CHECK_FALSE(check(rc, R"({"id":1,"n":"x","o":null})"));
  auto v = check(rc, R"({"id":null,"n":"x"})");
  REQUIRE(v);
  CHECK(v->column == "id");
  CHECK(v->detail == "null");
  auto absent = check(rc, R"({"n":"x"})");
  REQUIRE(absent);
  CHECK(absent->detail == "the row has no such column");
  CHECK_FALSE(check(rc, R"({"n":"x"})", /*full=*/false));  // a partial row leaves it out
  CHECK_FALSE(check(rc, R"({"id":1})"));  // a default fills `n`
}

TEST_CASE("row check: a table without limits checks nothing", "[decode][row_check]") {
  decode::RowCheck rc({col("a", "string"), col("b", "double"), col("c", "json")});
  CHECK_FALSE(rc.checks());
}
