// Column transforms (issue 33 item 3) through the pipeline into the Doris
// emulator: an auto-created table takes the transformed shape (renamed,
// case-mapped, computed columns, never the excluded ones), schema evolution
// sees it too (a source ADD of an excluded column is no DDL), and a row
// filter keeps Doris = filter(source): creates that do not match are
// dropped, an update that leaves the filter deletes its key, deletes of
// filtered keys pass harmlessly.
#include <catch2/catch.hpp>

#include <algorithm>

#include "tests/pipeline/ddl_world.hpp"

using namespace cdc2doris;
using namespace cdc2doris::test::ddl;

namespace {

std::vector<std::string> names(const std::vector<std::string>& desc) {
  std::vector<std::string> out;
  for (const auto& d : desc) out.push_back(d.substr(0, d.find(' ')));
  return out;
}

}  // namespace

TEST_CASE("transforms: an auto-created table and schema evolution see the renamed, case-mapped shape",
          "[pipeline][transforms]") {
  World w;
  w.topic("orders");
  auto& s = w.set("orders");
  s.auto_create = true;
  decode::ColumnTransforms tf;
  tf.rename = {{"Amount", "total"}};
  tf.exclude = {"Secret", "Later"};
  tf.name_case = decode::NameCase::Lower;
  tf.computed = {{"src_offset", decode::Meta::Offset}};
  s.transforms = tf;
  const std::vector<Field> v1{{"id", kInt64}, {"Name", kString}, {"Amount", kInt32}, {"Secret", kString}};
  w.produce("orders", v1, 1, R"({"id":1,"Name":"a","Amount":5,"Secret":"s1"})");
  auto res = w.run(1);
  REQUIRE_FALSE(res.error);
  CHECK(names(w.desc("orders")) == std::vector<std::string>{"id", "name", "total", "src_offset"});
  CHECK(w.emu.rows("d", "orders") == std::vector<std::string>{R"({"id":1,"name":"a","total":5,"src_offset":0})"});
  CHECK(w.ddl_count("orders", "create") == 1);

  // The source adds an excluded column: no DDL, the value is not loaded.
  auto v2 = v1;
  v2.push_back({"Later", kString});
  w.produce("orders", v2, 2, R"({"id":2,"Name":"b","Amount":6,"Secret":"s2","Later":"x"})");
  res = w.run(1);
  REQUIRE_FALSE(res.error);
  CHECK(w.ddl_count("orders", "add") == 0);
  CHECK(names(w.desc("orders")) == std::vector<std::string>{"id", "name", "total", "src_offset"});

  // A column that is loaded is added under its Doris name.
  auto v3 = v2;
  v3.push_back({"Note", kString});
  w.produce("orders", v3, 3, R"({"id":3,"Name":"c","Amount":7,"Secret":"s3","Later":"y","Note":"n"})");
  res = w.run(1);
  REQUIRE_FALSE(res.error);
  CHECK(w.ddl_count("orders", "add") == 1);
  CHECK(names(w.desc("orders")) == std::vector<std::string>{"id", "name", "total", "src_offset", "note"});
  CHECK(w.emu.rows("d", "orders") == std::vector<std::string>{R"({"id":1,"name":"a","total":5,"src_offset":0,"note":null})",
                                                               R"({"id":2,"name":"b","total":6,"src_offset":1,"note":null})",
                                                               R"({"id":3,"name":"c","total":7,"src_offset":2,"note":"n"})"});
}

TEST_CASE("transforms: a row filter keeps Doris equal to the filtered source, deletes of filtered keys included",
          "[pipeline][transforms][filter]") {
  World w;
  w.topic("subs");
  auto& s = w.set("subs");
  s.auto_create = true;
  decode::ColumnTransforms tf;
  tf.filter = decode::RowFilter::parse("status = 'live' AND plan STARTS WITH 'pro'");
  tf.rename = {{"status", "state"}};
  s.transforms = tf;
  const std::vector<Field> f{{"id", kInt64}, {"status", kString}, {"plan", kString}};
  w.produce("subs", f, 1, R"({"id":1,"status":"live","plan":"pro-1"})");
  w.produce("subs", f, 2, R"({"id":2,"status":"draft","plan":"pro-1"})");  // dropped
  w.produce("subs", f, 3, R"({"id":3,"status":"live","plan":"pro-2"})");
  w.produce("subs", f, 4, R"({"id":4,"status":"live","plan":"basic"})");   // dropped
  auto res = w.run(4);
  REQUIRE_FALSE(res.error);
  CHECK(w.emu.rows("d", "subs") == std::vector<std::string>{R"({"id":1,"state":"live","plan":"pro-1"})",
                                                             R"({"id":3,"state":"live","plan":"pro-2"})"});
  w.produce("subs", f, 3, R"({"id":3,"status":"paused","plan":"pro-2"})", 'u');  // leaves the filter: deleted
  w.produce("subs", f, 2, "null", 'd');                                         // a filtered key: harmless
  w.produce("subs", f, 4, R"({"id":4,"status":"live","plan":"pro-3"})", 'u');   // enters the filter
  w.produce("subs", f, 1, "null", 'd');
  res = w.run(4);
  REQUIRE_FALSE(res.error);
  CHECK(w.emu.rows("d", "subs") == std::vector<std::string>{R"({"id":4,"state":"live","plan":"pro-3"})"});
  CHECK(w.metrics.skipped(pipeline::SkipReason::Filtered) == 3);
  CHECK(names(w.desc("subs")) == std::vector<std::string>{"id", "state", "plan"});
}

TEST_CASE("transforms: a filter naming a column the rows lack is a bad record under the policy",
          "[pipeline][transforms][filter]") {
  World w;
  w.topic("t");
  w.table("CREATE TABLE t (id BIGINT NOT NULL, v STRING NULL) UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1");
  decode::ColumnTransforms tf;
  tf.filter = decode::RowFilter::parse("vv = 'x'");
  w.set("t").transforms = tf;
  w.produce("t", {{"id", kInt64}, {"v", kString}}, 1, R"({"id":1,"v":"x"})");
  auto res = w.run(1);
  REQUIRE(res.error);
  CHECK(res.error->message().find("no column 'vv' in the row of d.t") != std::string::npos);
  CHECK(w.emu.rows("d", "t").empty());
}
