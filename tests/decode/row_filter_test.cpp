// Row filters (issue 33 item 3): the parser's errors with their place, the
// evaluator's three-valued logic, exact numeric comparison, and the values a
// filter cannot judge (a column the record left out, a column it lacks).
#include <catch2/catch.hpp>

#include <map>
#include <string>

#include "core/decode/row_filter.hpp"

using namespace cdc2doris::decode;
using K = FilterValue::Kind;

namespace {

// A row as name -> value; metadata op "u", topic "t", offset 42.
struct Row final : RowFilter::Inputs {
  const RowFilter& f;
  std::map<std::string, FilterValue> values;
  explicit Row(const RowFilter& f) : f(f) {}
  Row& set(const std::string& name, K kind, std::string_view text = {}) {
    values[name] = {kind, text};
    return *this;
  }
  FilterValue column(size_t slot) const override {
    auto it = values.find(f.columns().at(slot));
    return it == values.end() ? FilterValue{K::Missing, {}} : it->second;
  }
  FilterValue meta(Meta m) const override {
    if (m == Meta::Op) return {K::String, "u"};
    if (m == Meta::Topic) return {K::String, "dbserver1.shop.orders"};
    if (m == Meta::Offset) return {K::Number, "42"};
    return {K::Null, {}};
  }
};

RowFilter::Verdict eval(const std::string& expr, const std::map<std::string, FilterValue>& values) {
  const auto f = RowFilter::parse(expr);
  Row row(*f);
  row.values = values;
  return f->evaluate(row).verdict;
}

bool match(const std::string& expr, const std::map<std::string, FilterValue>& values) {
  return eval(expr, values) == RowFilter::Verdict::Match;
}

FilterValue num(std::string_view t) { return {K::Number, t}; }
FilterValue str(std::string_view t) { return {K::String, t}; }
FilterValue null() { return {K::Null, {}}; }

// The error's place and text, as "line:column: what".
std::string error_of(const std::string& expr) {
  try {
    RowFilter::parse(expr);
  } catch (const FilterSyntaxError& e) {
    return std::to_string(e.line) + ":" + std::to_string(e.column) + ": " + e.what();
  }
  return "parsed";
}

}  // namespace

TEST_CASE("Row filter syntax errors name the line and column inside the expression", "[decode][filter]") {
  CHECK(error_of("") == "1:1: expected an expression, got the end");
  CHECK(error_of("a = ") == "1:5: expected a value: a 'string', a number, TRUE or FALSE, got the end");
  CHECK(error_of("a == 1") == "1:4: expected a value: a 'string', a number, TRUE or FALSE, got '='");
  CHECK(error_of("a = 1 b = 2") == "1:7: expected AND, OR or the end of the expression, got 'b'");
  CHECK(error_of("(a = 1") == "1:7: expected ')', got the end");
  CHECK(error_of("a = 'x") == "1:5: expected a closing quote for the string opened here, got ''x'");
  CHECK(error_of("a = NULL").find("use IS NULL / IS NOT NULL") != std::string::npos);
  CHECK(error_of("a IS 1") == "1:6: expected NULL, got '1'");
  CHECK(error_of("a IN (1, 2") == "1:11: expected ',' or ')' closing the IN list, got the end");
  CHECK(error_of("a IN 1") == "1:6: expected '(' opening the IN list, got '1'");
  CHECK(error_of("@nope = 1").find("1:1: expected metadata (@op, @source_ts, @source.db") == 0);
  CHECK(error_of("\"a\" = 1").find("strings take single quotes") != std::string::npos);
  CHECK(error_of("a ~ '('").find("1:5: expected a valid regular expression") == 0);
  CHECK(error_of("a STARTS 'x'") == "1:10: expected WITH, got ''x''");
  CHECK(error_of("a NOT = 1") == "1:7: expected IN, STARTS WITH or MATCHES after NOT, got '='");
  CHECK(error_of("in = 1").find("IN is a keyword: write `in`") != std::string::npos);
  CHECK(error_of("a = 1 AND\n  b >> 2") == "2:6: expected a value: a 'string', a number, TRUE or FALSE, got '>'");
  CHECK(error_of("a = 1.") == "1:5: expected a value: a 'string', a number, TRUE or FALSE, got '1.'");
}

TEST_CASE("Row filter comparisons, IN, IS NULL, prefixes and regexes", "[decode][filter]") {
  CHECK(match("status = 'paid'", {{"status", str("paid")}}));
  CHECK_FALSE(match("status = 'paid'", {{"status", str("open")}}));
  CHECK(match("status != 'paid'", {{"status", str("open")}}));
  CHECK(match("status <> 'paid'", {{"status", str("open")}}));
  CHECK(match("name < 'b' AND name >= 'a'", {{"name", str("abc")}}));
  CHECK(match("region IN ('eu', 'us')", {{"region", str("us")}}));
  CHECK(match("region NOT IN ('eu', 'us')", {{"region", str("apac")}}));
  CHECK(match("id IN (1, 2, 3)", {{"id", num("2")}}));
  CHECK(match("note IS NULL", {{"note", null()}}));
  CHECK(match("note IS NOT NULL", {{"note", str("")}}));
  CHECK(match("sku STARTS WITH 'AB-'", {{"sku", str("AB-1")}}));
  CHECK(match("sku NOT STARTS WITH 'AB-'", {{"sku", str("XY-1")}}));
  CHECK(match("email ~ '@example\\.com$'", {{"email", str("a@example.com")}}));
  CHECK_FALSE(match("email MATCHES '^x'", {{"email", str("a@example.com")}}));
  CHECK(match("email NOT MATCHES '^x'", {{"email", str("a@example.com")}}));
  CHECK(match("`order id` = 7", {{"order id", num("7")}}));
  CHECK(match("flag = TRUE", {{"flag", {K::Bool, "true"}}}));
  CHECK(match("flag = TRUE", {{"flag", num("1")}}));  // MySQL TINYINT(1)
  CHECK_FALSE(match("flag = FALSE", {{"flag", num("1")}}));
  // Keywords in any case; a string quote doubled.
  CHECK(match("a = 'it''s' and not b is null", {{"a", str("it's")}, {"b", num("1")}}));
  CHECK(match("NOT (a = 1 OR a = 2)", {{"a", num("3")}}));
  CHECK(match("a = 1 OR b = 1 AND c = 1", {{"a", num("1")}, {"b", num("0")}, {"c", num("0")}}));  // AND binds tighter
  CHECK(match("@op = 'u' AND @topic STARTS WITH 'dbserver1.' AND @offset > 41", {}));
  CHECK(match("@source.db IS NULL", {}));
}

TEST_CASE("Row filter numbers compare exactly, as decimals", "[decode][filter]") {
  // Beyond a double's 53 bits: 2^53 + 1 differs from 2^53.
  CHECK(match("id > 9007199254740992", {{"id", num("9007199254740993")}}));
  CHECK_FALSE(match("id = 9007199254740992", {{"id", num("9007199254740993")}}));
  // Decimal text (decimal.handling.mode=string, Decimal bytes decoded) by value.
  CHECK(match("amount = 10.5", {{"amount", str("10.50")}}));
  CHECK(match("amount > 0.1", {{"amount", str("0.10000000000000000000000000000000001")}}));
  CHECK(match("amount < -1e2", {{"amount", num("-100.0000001")}}));
  CHECK(match("amount = 1e3", {{"amount", num("1000")}}));
  CHECK(match("amount = 0", {{"amount", num("-0.000")}}));
  CHECK(match("amount >= -5", {{"amount", num("-4.99")}}));
  CHECK(compare_decimal_text("123456789012345678901234567890.1", "123456789012345678901234567890.09") == 1);
  CHECK(compare_decimal_text("-2", "-10") == 1);
  CHECK(compare_decimal_text("0.5", "5e-1") == 0);
  CHECK(compare_decimal_text("+7", "7.000") == 0);
  CHECK_FALSE(compare_decimal_text("abc", "1").has_value());
  CHECK_FALSE(compare_decimal_text("1.", "1").has_value());
  // A number literal against a value that is no number: only != holds.
  CHECK_FALSE(match("amount > 5", {{"amount", str("n/a")}}));
  CHECK(match("amount != 5", {{"amount", str("n/a")}}));
}

TEST_CASE("Row filter NULLs are unknown, and unknown rows do not load", "[decode][filter]") {
  CHECK_FALSE(match("a = 1", {{"a", null()}}));
  CHECK_FALSE(match("a != 1", {{"a", null()}}));
  CHECK_FALSE(match("NOT a = 1", {{"a", null()}}));
  CHECK(match("a = 1 OR b = 2", {{"a", null()}, {"b", num("2")}}));
  CHECK_FALSE(match("a IN (1, 2)", {{"a", null()}}));
}

TEST_CASE("Row filter over a value the record left out (TOAST) or a column it lacks", "[decode][filter]") {
  const FilterValue unavailable{K::Unavailable, {}};
  // The outcome depends on it: the filter cannot judge the row.
  CHECK(eval("big IS NOT NULL", {{"big", unavailable}}) == RowFilter::Verdict::Unavailable);
  CHECK(eval("a = 1 AND big = 'x'", {{"a", num("1")}, {"big", unavailable}}) == RowFilter::Verdict::Unavailable);
  // A decisive other operand decides without it.
  CHECK(eval("a = 1 AND big = 'x'", {{"a", num("2")}, {"big", unavailable}}) == RowFilter::Verdict::NoMatch);
  CHECK(eval("a = 1 OR big = 'x'", {{"a", num("1")}, {"big", unavailable}}) == RowFilter::Verdict::Match);
  // A column the row does not have is reported, whatever the logic around it.
  const auto f = RowFilter::parse("a = 1 OR typo = 2");
  Row row(*f);
  row.set("a", K::Number, "1");
  const auto res = f->evaluate(row);
  CHECK(res.verdict == RowFilter::Verdict::Match);  // short-circuited before the typo
  Row other(*f);
  other.set("a", K::Number, "2");
  const auto missing = f->evaluate(other);
  CHECK(missing.verdict == RowFilter::Verdict::Missing);
  CHECK(f->columns().at(static_cast<size_t>(missing.slot)) == "typo");
}

TEST_CASE("Row filter lists its columns once and keeps its text", "[decode][filter]") {
  const auto f = RowFilter::parse("a = 1 AND (b = 2 OR a = 3) AND @op = 'c'");
  CHECK(f->columns() == std::vector<std::string>{"a", "b"});
  CHECK(f->text() == "a = 1 AND (b = 2 OR a = 3) AND @op = 'c'");
  CHECK(parse_meta("source.table") == Meta::SourceTable);
  CHECK_FALSE(parse_meta("table").has_value());
  for (Meta m : kAllMeta) CHECK(parse_meta(to_string(m)) == m);
}
