// Doris BE value parsing as the emulator reproduces it, table-driven: each
// row is (column type, input, load time zone, expected stored token or FAIL).
// The rules and their Doris sources are listed in docs/doris-emulator.md.
#include "tools/doris_emulator/engine.hpp"

#include <boost/json.hpp>
#include <catch2/catch.hpp>

using namespace cdc2doris::emu;
namespace json = boost::json;

namespace {

struct Case {
  const char* type;
  InValue::Tag tag;
  const char* in;
  const char* zone;  // load `timezone`; nullptr: Doris' default (Asia/Shanghai)
  const char* want;  // stored token, or "FAIL"
};

std::string run(const Case& c) {
  std::string err;
  auto t = parse_type(c.type, &err);
  REQUIRE(t);
  std::optional<LoadZone> z;
  if (c.zone) {
    z = find_zone(c.zone);
    REQUIRE(z);
  }
  InValue v{c.tag, c.in, false};
  std::string out, why;
  if (!convert(*t, v, &out, nullptr, &why, z ? &*z : nullptr)) return "FAIL";
  return out;
}

constexpr auto S = InValue::Str;
constexpr auto N = InValue::Num;
constexpr auto R = InValue::Raw;

}  // namespace

TEST_CASE("values: DATETIME/DATE text as Doris' DateV2Value::from_date_str_base reads it", "[emulator][values]") {
  const Case cases[] = {
      // separators: any punctuation, 'T' or one space between date and time
      {"DATETIME", S, "2023-11-14 22:13:54", nullptr, "\"2023-11-14 22:13:54\""},
      {"DATETIME", S, "2023-11-14T22:13:54", nullptr, "\"2023-11-14 22:13:54\""},
      {"DATETIME", S, "2023/11/14 22.13.54", nullptr, "\"2023-11-14 22:13:54\""},
      {"DATETIME", S, "2023-1-4 2:3:4", nullptr, "\"2023-01-04 02:03:04\""},
      {"DATETIME", S, "  2023-11-14 22:13:54", nullptr, "\"2023-11-14 22:13:54\""},
      {"DATETIME", S, "2023-11-14  22:13:54", nullptr, "\"2023-11-14 22:13:54\""},
      {"DATETIME", S, "2023-11 -14 22:13:54", nullptr, "FAIL"},  // space only after the day
      // missing time parts are 0
      {"DATETIME", S, "2023-11-14T22:13", nullptr, "\"2023-11-14 22:13:00\""},
      {"DATETIME", S, "2023-11-14 22", nullptr, "\"2023-11-14 22:00:00\""},
      {"DATETIME", S, "2023-11-14", nullptr, "\"2023-11-14 00:00:00\""},
      {"DATETIME", S, "2023-11", nullptr, "FAIL"},
      // without delimiters: fixed widths, 2-digit years 70-99 -> 19xx, else 20xx
      {"DATETIME", S, "20231114221354", nullptr, "\"2023-11-14 22:13:54\""},
      {"DATETIME", S, "20231114T221354", nullptr, "\"2023-11-14 22:13:54\""},
      {"DATETIME", N, "20231114", nullptr, "\"2023-11-14 00:00:00\""},
      {"DATE", S, "231114", nullptr, "\"2023-11-14\""},
      {"DATE", S, "991114", nullptr, "\"1999-11-14\""},
      {"DATE", S, "23-11-14", nullptr, "\"2023-11-14\""},
      // fractions: rounded half up to the column's scale, carrying into seconds
      {"DATETIME(3)", S, "2023-11-14 22:13:54.026", nullptr, "\"2023-11-14 22:13:54.026\""},
      {"DATETIME(3)", S, "2023-11-14 22:13:54.0265", nullptr, "\"2023-11-14 22:13:54.027\""},
      {"DATETIME(3)", S, "2023-11-14 22:13:54.0264999", nullptr, "\"2023-11-14 22:13:54.026\""},
      {"DATETIME", S, "2023-12-31 23:59:59.5", nullptr, "\"2024-01-01 00:00:00\""},
      {"DATETIME(6)", S, "2023-11-14 22:13:54.1", nullptr, "\"2023-11-14 22:13:54.100000\""},
      // only 6 fraction digits are read: a 7th does not round DATETIME(6)
      {"DATETIME(6)", S, "2023-11-14 22:13:54.1234567", nullptr, "\"2023-11-14 22:13:54.123456\""},
      {"DATETIME(6)", S, "2023-11-14 22:13:54.12345671234567", nullptr, "FAIL"},  // a 7th+ field > 999999
      // zone suffixes: the value is converted into the load's time zone
      {"DATETIME(3)", S, "2023-11-14T22:13:54.026Z", "UTC", "\"2023-11-14 22:13:54.026\""},
      {"DATETIME(3)", S, "2023-11-14T22:13:54.026Z", nullptr, "\"2023-11-15 06:13:54.026\""},
      {"DATETIME(3)", S, "2023-11-14T22:13:54.026Z", "Asia/Shanghai", "\"2023-11-15 06:13:54.026\""},
      {"DATETIME", S, "2023-11-14T22:13:54+08:00", "UTC", "\"2023-11-14 14:13:54\""},
      {"DATETIME", S, "2023-11-14T22:13:54-05:30", "+00:00", "\"2023-11-15 03:43:54\""},
      {"DATETIME", S, "2023-11-14T22:13:54+8:00", "UTC", "\"2023-11-14 14:13:54\""},
      {"DATETIME", S, "2023-11-14T22:13:54UTC", "+01:00", "\"2023-11-14 23:13:54\""},
      {"DATETIME", S, "2023-11-14T22:13:54Europe/Berlin", "UTC", "\"2023-11-14 21:13:54\""},
      {"DATETIME", S, "2023-11-14T22:13:54europe/berlin", "UTC", "\"2023-11-14 21:13:54\""},
      {"DATETIME", S, "2023-11-14T22:13:54CST", "UTC", "\"2023-11-14 14:13:54\""},
      {"DATETIME", S, "2023-11-14T22:13Z", "UTC", "\"2023-11-14 22:13:00\""},
      // Doris takes a named zone's offset at 1970-01-01, not at the value's date
      {"DATETIME", S, "2024-07-01T12:00:00Z", "Europe/Berlin", "\"2024-07-01 13:00:00\""},
      {"DATE", S, "2023-11-14T22:13:54Z", nullptr, "\"2023-11-14\""},  // DATE: zone checked, not applied
      {"DATETIME", S, "2023-11-14T22:13:54+0800", "UTC", "FAIL"},  // offsets need a colon
      {"DATETIME", S, "2023-11-14T22:13:54+15:00", "UTC", "FAIL"},
      {"DATETIME", S, "2023-11-14T22:13:54Mars/Base", "UTC", "FAIL"},
      {"DATETIME", S, "2023-11-14T22:13:54abc", nullptr, "FAIL"},
      // after the seconds, a space ends the value: what follows is ignored
      {"DATETIME", S, "2023-11-14 22:13:54 +08:00", "UTC", "\"2023-11-14 22:13:54\""},
      // ranges
      {"DATETIME", S, "2023-02-29 00:00:00", nullptr, "FAIL"},
      {"DATETIME", S, "2024-02-29 23:59:59", nullptr, "\"2024-02-29 23:59:59\""},
      {"DATETIME", S, "2023-11-14 24:00:00", nullptr, "FAIL"},
      {"DATETIME", S, "2023-11-14 23:60:00", nullptr, "FAIL"},
      {"DATETIME", S, "2023-13-01", nullptr, "FAIL"},
      {"DATETIME", S, "0000-00-00 00:00:00", nullptr, "FAIL"},
      {"DATETIME", S, "9999-12-31T23:00:00Z", "Asia/Shanghai", "FAIL"},  // shifted past year 9999
      {"DATETIME", S, "", nullptr, "FAIL"},
      {"DATETIME", S, "abc", nullptr, "FAIL"},
      {"DATETIME", S, "T2023-11-14", nullptr, "FAIL"},
      {"DATE", R, "[2023]", nullptr, "FAIL"},
  };
  for (const auto& c : cases) {
    INFO(c.type << " <- '" << c.in << "' tz " << (c.zone ? c.zone : "(default)"));
    CHECK(run(c) == c.want);
  }
}

TEST_CASE("values: JSON numbers kept verbatim, ARRAY<T> from JSON arrays", "[emulator][values]") {
  const Case cases[] = {
      {"JSON", R, "{\"a\": 904071.1179451137}", nullptr, "{\"a\":904071.1179451137}"},
      {"JSON", S, "{\"a\":1.10, \"b\": [1e2, -0.0]}", nullptr, "{\"a\":1.10,\"b\":[1e2,-0.0]}"},
      {"JSON", N, "12345678901234567890123", nullptr, "12345678901234567890123"},
      {"JSON", R, "{\"s\": \"a b\\\" c\"}", nullptr, "{\"s\":\"a b\\\" c\"}"},
      {"JSON", S, "{\"a\":", nullptr, "FAIL"},
      {"ARRAY<INT>", R, "[1, 2, 3]", nullptr, "[1,2,3]"},
      {"ARRAY<INT>", S, "[1,null,3]", nullptr, "[1,null,3]"},
      {"ARRAY<INT>", R, "[]", nullptr, "[]"},
      // an element that does not convert is NULL (nullable element SerDe)
      {"ARRAY<TINYINT>", R, "[1, 300, \"x\"]", nullptr, "[1,null,null]"},
      {"ARRAY<VARCHAR(3)>", R, "[\"ab\", \"abcd\", \"q\\\"\"]", nullptr, "[\"ab\",null,\"q\\\"\"]"},
      {"ARRAY<DECIMAL(10,2)>", R, "[1.005, \"2\"]", nullptr, "[\"1.01\",\"2.00\"]"},
      {"ARRAY<DATETIME>", R, "[\"2023-11-14T22:13:54Z\"]", "UTC", "[\"2023-11-14 22:13:54\"]"},
      {"ARRAY<ARRAY<INT>>", R, "[[1,2],[],null]", nullptr, "[[1,2],[],null]"},
      {"ARRAY<STRING>", R, "[\"a,b\", \"[c]\"]", nullptr, "[\"a,b\",\"[c]\"]"},
      {"ARRAY<INT>", R, "{\"a\":1}", nullptr, "FAIL"},
      {"ARRAY<INT>", S, "1,2", nullptr, "FAIL"},
      {"ARRAY<INT>", N, "1", nullptr, "FAIL"},
  };
  for (const auto& c : cases) {
    INFO(c.type << " <- '" << c.in << "'");
    CHECK(run(c) == c.want);
  }
  std::string err;
  auto t = parse_type("array<decimal(10, 2)>", &err);
  REQUIRE(t);
  CHECK(t->sql() == "ARRAY<DECIMAL(10,2)>");
  CHECK_FALSE(parse_type("ARRAY<GEOMETRY>", &err));
  CHECK_FALSE(parse_type("ARRAY(INT)", &err));
}

TEST_CASE("values: zone names as Doris' TimezoneUtils resolves them", "[emulator][values]") {
  struct Z {
    const char* name;
    bool ok;
    int64_t epoch;  // civil 1970-01-01 00:00:00 in the zone, Unix seconds
  };
  const Z zones[] = {
      {"UTC", true, 0},          {"Z", true, 0},           {"zulu", true, 0},
      {"Etc/UTC", true, 0},      {"CST", true, -28800},    {"Asia/Shanghai", true, -28800},
      {"asia/shanghai", true, -28800}, {"+08:00", true, -28800}, {"-00:30", true, 1800},
      {"+5:45", true, -20700},   {"UTC+8", true, -28800},  {"GMT-08:00", true, 28800},
      {"+14:00", true, -50400},  {"+15:00", false, 0},     {"-13:00", false, 0},
      {"+0800", false, 0},       {"+8", false, 0},         {"Nowhere/City", false, 0},
      {"", false, 0},
  };
  for (const auto& z : zones) {
    INFO(z.name);
    auto r = find_zone(z.name);
    CHECK(r.has_value() == z.ok);
    if (r && z.ok) CHECK(r->epoch_civil_s == z.epoch);
  }
}

TEST_CASE("values: a stream load converts zones, filters in strict mode, NULLs otherwise", "[emulator][values]") {
  Engine e{Config{}};
  e.execute_sql("", "CREATE DATABASE d");
  e.execute_sql("d", "CREATE TABLE t (id INT, ts DATETIME(3), j JSON, a ARRAY<INT>) UNIQUE KEY(id) "
                     "DISTRIBUTED BY HASH(id) BUCKETS 1");
  auto load = [&](const std::string& body, std::map<std::string, std::string> h) {
    LoadRequest r;
    r.db = "d";
    r.table = "t";
    h["format"] = "json";
    r.headers = std::move(h);
    r.authorization = "Basic cm9vdDo=";
    r.content_length = static_cast<int64_t>(body.size());
    Reply early;
    auto l = e.start_load(r, &early);
    if (!l) return json::parse(early.body).as_object();
    l->feed(body.data(), body.size());
    return json::parse(l->finish().body).as_object();
  };
  const std::string rows =
      "{\"id\":1,\"ts\":\"2023-11-14T22:13:54.026Z\",\"j\":{\"v\":904071.1179451137},\"a\":[1,2]}\n"
      "{\"id\":2,\"ts\":\"2023-11-14T22:13\",\"j\":null,\"a\":null}\n"
      "{\"id\":3,\"ts\":\"not a time\",\"j\":{},\"a\":[]}\n";
  SECTION("non-strict: the bad value is NULL and the row loads") {
    auto r = load(rows, {{"timezone", "UTC"}});
    CHECK(r.at("Status").as_string() == "Success");
    CHECK(r.at("NumberLoadedRows").as_int64() == 3);
    CHECK(r.at("NumberFilteredRows").as_int64() == 0);
    CHECK(*e.rows_jsonl("d", "t") ==
          "{\"id\":1,\"ts\":\"2023-11-14 22:13:54.026\",\"j\":{\"v\":904071.1179451137},\"a\":[1,2]}\n"
          "{\"id\":2,\"ts\":\"2023-11-14 22:13:00.000\",\"j\":null,\"a\":null}\n"
          "{\"id\":3,\"ts\":null,\"j\":{},\"a\":[]}\n");
  }
  SECTION("strict: the bad value filters its row; NULL sources are fine") {
    auto r = load(rows, {{"timezone", "UTC"}, {"strict_mode", "true"}, {"max_filter_ratio", "0.5"}});
    CHECK(r.at("Status").as_string() == "Success");
    CHECK(r.at("NumberLoadedRows").as_int64() == 2);
    CHECK(r.at("NumberFilteredRows").as_int64() == 1);
    CHECK(r.contains("ErrorURL"));
    auto strict_fail = load(rows, {{"strict_mode", "true"}});
    CHECK(strict_fail.at("Status").as_string() == "Fail");
    CHECK(strict_fail.at("Message").as_string() == "[DATA_QUALITY_ERROR]too many filtered rows");
  }
  SECTION("the default load time zone is Asia/Shanghai; an unknown one fails the load") {
    auto r = load(rows.substr(0, rows.find('\n') + 1), {});
    CHECK(r.at("Status").as_string() == "Success");
    CHECK(e.rows_jsonl("d", "t")->find("\"2023-11-15 06:13:54.026\"") != std::string::npos);
    auto bad = load(rows, {{"timezone", "Mars/Base"}});
    CHECK(bad.at("Status").as_string() == "Fail");
    CHECK(bad.at("Message").as_string() ==
          "[ANALYSIS_ERROR]TStatus: errCode = 2, detailMessage = Unknown or incorrect time zone: 'Mars/Base'");
  }
}
