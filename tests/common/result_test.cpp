// Result<T, E> (core/common/result.hpp): what it holds and how it converts.
#include <catch2/catch.hpp>
#include <string>

#include "core/common/result.hpp"

using namespace cdc2doris;

namespace {
Result<std::string> named(bool ok) {
  if (!ok) return Error(Disposition::Fail, "no name");
  return "a name";  // converts through std::string
}
Result<void> done(bool ok) {
  if (!ok) return Error(Disposition::Retry, "not done");
  return {};
}
}  // namespace

TEST_CASE("result: a value or an error", "[common][result]") {
  auto v = named(true);
  REQUIRE(v);
  REQUIRE(v.has_value());
  CHECK(*v == "a name");
  CHECK(v->size() == 6);
  CHECK(v.value() == "a name");
  std::string moved = std::move(v).value();
  CHECK(moved == "a name");

  auto e = named(false);
  REQUIRE_FALSE(e);
  CHECK(e.error().disposition() == Disposition::Fail);
  CHECK(e.error().message() == "no name");
}

TEST_CASE("result: void holds success or the error", "[common][result]") {
  CHECK(done(true));
  auto e = done(false);
  REQUIRE_FALSE(e.has_value());
  CHECK(e.error().message() == "not done");
}

TEST_CASE("result: default-constructed holds a value-initialised T", "[common][result]") {
  Result<int> r;
  REQUIRE(r);
  CHECK(*r == 0);
  r = Error(Disposition::Fatal, "later");
  REQUIRE_FALSE(r);
  CHECK(r.error().disposition() == Disposition::Fatal);
}
