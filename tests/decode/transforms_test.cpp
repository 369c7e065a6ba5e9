// Column transforms in the decoder (issue 33 item 3): rename, exclude, case
// mapping, computed columns from metadata, and the row filter with its rules
// for updates that leave it, deletes, TOAST partial rows and missing columns.
#include <catch2/catch.hpp>

#include <string>

#include "core/decode/decoder.hpp"
#include "tests/decode/decode_run.hpp"

using namespace cdc2doris::decode;

namespace {

struct Run : test::DecodeRun {
  explicit Run(DecoderOptions o = {}) : DecodeRun(std::move(o), "dbserver1.inventory.customers", 3) {}
  std::optional<DecodeError> operator()(std::string_view value, std::optional<std::string_view> key,
                                        int64_t offset = 1) {
    return DecodeRun::operator()(value, key, {}, offset);
  }
  std::optional<DecodeError> tombstone(std::string_view key, int64_t offset) {
    return DecodeRun::operator()(std::nullopt, key, {}, offset);
  }
};

const std::string kMysql =
    R"("source":{"connector":"mysql","ts_ms":1700000000000,"db":"inventory","table":"customers","file":"b.1","pos":4,"row":0})";
const std::string kPg =
    R"("source":{"connector":"postgresql","ts_ms":1700000000123,"db":"shop","schema":"public","table":"customers","lsn":7})";

std::string rec(std::string_view op, std::string_view before, std::string_view after, const std::string& source = kMysql) {
  return std::string(R"({"before":)") + std::string(before) + R"(,"after":)" + std::string(after) + "," + source +
         R"(,"op":")" + std::string(op) + R"("})";
}

DecoderOptions with(ColumnTransforms tf) {
  DecoderOptions o;
  o.transforms = std::move(tf);
  return o;
}

ColumnTransforms filtered(const std::string& expr) {
  ColumnTransforms tf;
  tf.filter = RowFilter::parse(expr);
  return tf;
}

}  // namespace

TEST_CASE("Transforms rename, exclude and map the case of column names", "[decode][transforms]") {
  ColumnTransforms tf;
  tf.rename = {{"Name", "full_name"}};
  tf.exclude = {"Secret"};
  tf.name_case = NameCase::Lower;
  Run run(with(tf));
  REQUIRE_FALSE(run(rec("c", "null", R"({"ID":1,"Name":"a","Secret":"s","Email":"e"})"), R"({"ID":1})"));
  CHECK(run.row() == R"({"id":1,"full_name":"a","email":"e","__DORIS_DELETE_SIGN__":0})");
  SECTION("a TOAST partial row lists the Doris names") {
    REQUIRE_FALSE(run(rec("u", "null", R"({"ID":1,"Name":"__debezium_unavailable_value","Secret":"s","Email":"f"})", kPg),
                      R"({"ID":1})"));
    CHECK(run.row() == R"({"id":1,"email":"f","__DORIS_DELETE_SIGN__":0})");
    CHECK(run.change.rows[0].partial_columns == std::vector<std::string>{"id", "email", "__DORIS_DELETE_SIGN__"});
  }
  SECTION("a key-only delete from a tombstone") {
    REQUIRE_FALSE(run.tombstone(R"({"ID":1})", 2));
    CHECK(run.row() == R"({"id":1,"__DORIS_DELETE_SIGN__":1})");
    CHECK(run.change.rows[0].partial_columns == std::vector<std::string>{"id", "__DORIS_DELETE_SIGN__"});
  }
  SECTION("a primary-key change deletes the old key under its Doris name") {
    REQUIRE_FALSE(run(rec("u", R"({"ID":1,"Name":"a","Secret":"s","Email":"e"})", R"({"ID":2,"Name":"a","Secret":"s","Email":"e"})"),
                      R"({"ID":2})"));
    REQUIRE(run.change.rows.size() == 2);
    CHECK(run.row(0) == R"({"id":1,"full_name":"a","email":"e","__DORIS_DELETE_SIGN__":1})");
    CHECK(run.row(1) == R"({"id":2,"full_name":"a","email":"e","__DORIS_DELETE_SIGN__":0})");
  }
  SECTION("upper case") {
    ColumnTransforms up;
    up.name_case = NameCase::Upper;
    Run u(with(up));
    REQUIRE_FALSE(u(rec("c", "null", R"({"id":1,"näme":"a"})"), R"({"id":1})"));
    CHECK(u.row() == R"({"ID":1,"NäME":"a","__DORIS_DELETE_SIGN__":0})");  // ASCII letters only
  }
}

TEST_CASE("Transforms refuse rows they would break", "[decode][transforms]") {
  SECTION("two source columns that become one Doris column") {
    ColumnTransforms tf;
    tf.name_case = NameCase::Lower;
    Run run(with(tf));
    auto err = run(rec("c", "null", R"({"id":1,"Code":"a","CODE":"b"})"), R"({"id":1})");
    REQUIRE(err);
    CHECK(err->code == DecodeErrorCode::Unsupported);
    CHECK(err->message().find("'Code' and 'CODE' both become 'code'") != std::string::npos);
  }
  SECTION("an excluded key column") {
    ColumnTransforms tf;
    tf.exclude = {"id"};
    Run run(with(tf));
    auto err = run(rec("c", "null", R"({"id":1,"v":"a"})"), R"({"id":1})");
    REQUIRE(err);
    CHECK(err->message().find("exclude names a key column") != std::string::npos);
  }
}

TEST_CASE("Computed columns take the record's metadata", "[decode][transforms]") {
  ColumnTransforms tf;
  tf.computed = {{"op", Meta::Op},          {"ts", Meta::SourceTs},   {"src_db", Meta::SourceDb},
                 {"src_schema", Meta::SourceSchema}, {"src_table", Meta::SourceTable}, {"conn", Meta::Connector},
                 {"snap", Meta::Snapshot},  {"topic", Meta::Topic},   {"part", Meta::Partition},
                 {"off", Meta::Offset},     {"seq", Meta::Sequence}};
  Run run(with(tf));
  REQUIRE_FALSE(run(rec("c", "null", R"({"id":1})"), R"({"id":1})", 17));
  CHECK(run.row() ==
        R"({"id":1,"op":"c","ts":1700000000000,"src_db":"inventory","src_schema":null,"src_table":"customers",)"
        R"("conn":"mysql","snap":null,"topic":"dbserver1.inventory.customers","part":3,"off":17,)"
        R"("seq":)" + std::to_string((int64_t{1} << 43) | (int64_t{4} << 11)) + R"(,"__DORIS_DELETE_SIGN__":0})");
  SECTION("partial rows list them") {
    REQUIRE_FALSE(run(rec("u", "null", R"({"id":1,"v":"__debezium_unavailable_value"})", kPg), R"({"id":1})", 18));
    const auto& cols = run.change.rows[0].partial_columns;
    CHECK(std::find(cols.begin(), cols.end(), "off") != cols.end());
    CHECK(std::find(cols.begin(), cols.end(), "v") == cols.end());
  }
  SECTION("with the extra columns of decoding.extra_columns") {
    DecoderOptions o = with(ColumnTransforms{{}, {}, NameCase::AsIs, nullptr, {{"tbl", Meta::SourceTable}}});
    o.extra_columns.op = "__op";
    Run both(o);
    REQUIRE_FALSE(both(rec("c", "null", R"({"id":1})"), R"({"id":1})"));
    CHECK(both.row() == R"({"id":1,"__op":"c","tbl":"customers","__DORIS_DELETE_SIGN__":0})");
  }
}

TEST_CASE("A filter drops creates that do not match and counts them", "[decode][transforms][filter]") {
  Run run(with(filtered("status != 'draft' AND amount >= 10")));
  REQUIRE_FALSE(run(rec("c", "null", R"({"id":1,"status":"paid","amount":"10.00"})"), R"({"id":1})"));
  CHECK(run.change.rows.size() == 1);
  CHECK(run.change.rows_filtered == 0);
  REQUIRE_FALSE(run(rec("c", "null", R"({"id":2,"status":"draft","amount":"50"})"), R"({"id":2})"));
  CHECK(run.change.rows.empty());
  CHECK(run.change.rows_filtered == 1);
  REQUIRE_FALSE(run(rec("r", "null", R"({"id":3,"status":"paid","amount":9.99})"), R"({"id":3})"));
  CHECK(run.change.rows.empty());
  CHECK(run.dec.stats().rows_filtered == 2);
}

TEST_CASE("A filter turns an update that leaves it into a key-only delete", "[decode][transforms][filter]") {
  ColumnTransforms tf = filtered("status = 'live'");
  tf.rename = {{"id", "order_id"}};
  Run run(with(tf));
  REQUIRE_FALSE(run(rec("u", R"({"id":1,"status":"live"})", R"({"id":1,"status":"gone"})"), R"({"id":1})"));
  REQUIRE(run.change.rows.size() == 1);
  CHECK(run.row() == R"({"order_id":1,"__DORIS_DELETE_SIGN__":1})");
  CHECK(run.change.rows[0].is_delete());
  CHECK(run.change.rows[0].partial_columns == std::vector<std::string>{"order_id", "__DORIS_DELETE_SIGN__"});
  CHECK(run.change.rows_filtered == 1);
  SECTION("deletes always pass, whatever the before-image holds") {
    REQUIRE_FALSE(run(rec("d", R"({"id":2,"status":"gone"})", "null"), R"({"id":2})"));
    CHECK(run.row() == R"({"order_id":2,"status":"gone","__DORIS_DELETE_SIGN__":1})");
    REQUIRE_FALSE(run.tombstone(R"({"id":3})", 9));
    CHECK(run.row() == R"({"order_id":3,"__DORIS_DELETE_SIGN__":1})");
    CHECK(run.change.rows_filtered == 0);
  }
  SECTION("under delete_mode ignore the update's delete is ignored too") {
    DecoderOptions o = with(tf);
    o.deletes.mode = DeleteMode::Ignore;
    Run ign(o);
    REQUIRE_FALSE(ign(rec("u", "null", R"({"id":1,"status":"gone"})"), R"({"id":1})"));
    CHECK(ign.change.rows.empty());
    CHECK(ign.change.rows_filtered == 1);
    CHECK(ign.change.deletes_ignored == 1);
  }
  SECTION("a soft delete of a whole MySQL before-image that never matched writes nothing") {
    DecoderOptions o = with(tf);
    o.deletes.mode = DeleteMode::Soft;
    Run soft(o);
    REQUIRE_FALSE(soft(rec("d", R"({"id":4,"status":"gone"})", "null"), R"({"id":4})"));
    CHECK(soft.change.rows.empty());
    CHECK(soft.change.rows_filtered == 1);
    REQUIRE_FALSE(soft(rec("d", R"({"id":5,"status":"live"})", "null"), R"({"id":5})"));
    CHECK(soft.row() == R"({"order_id":5,"status":"live","__deleted":true,"__DORIS_DELETE_SIGN__":0})");
  }
}

TEST_CASE("A filter over a TOAST-unavailable value or a missing column is a bad record", "[decode][transforms][filter]") {
  SECTION("the outcome depends on the unavailable value") {
    Run run(with(filtered("note IS NOT NULL")));
    auto err = run(rec("u", "null", R"({"id":1,"note":"__debezium_unavailable_value"})", kPg), R"({"id":1})");
    REQUIRE(err);
    CHECK(err->code == DecodeErrorCode::Unsupported);
    CHECK(err->message().find("the value of 'note', which the table's filter needs") != std::string::npos);
    CHECK(err->message().find("REPLICA IDENTITY FULL") != std::string::npos);
  }
  SECTION("another column decides: the partial row loads or is dropped") {
    Run run(with(filtered("id > 1 AND note IS NOT NULL")));
    REQUIRE_FALSE(run(rec("u", "null", R"({"id":1,"note":"__debezium_unavailable_value"})", kPg), R"({"id":1})"));
    CHECK(run.row() == R"({"id":1,"__DORIS_DELETE_SIGN__":1})");  // left the filter: deleted
    CHECK(run.change.rows_filtered == 1);
  }
  SECTION("a column the row does not have") {
    Run run(with(filtered("id = 1 OR stauts = 'x'")));
    auto err = run(rec("c", "null", R"({"id":1,"status":"x"})"), R"({"id":1})");
    REQUIRE(err);
    CHECK(err->message().find("no column 'stauts' in the row of inventory.customers") != std::string::npos);
  }
}

TEST_CASE("A filter reads string values unescaped and metadata", "[decode][transforms][filter]") {
  Run run(with(filtered(R"(name = 'a"b\c' AND @source.table = 'customers' AND @op IN ('c', 'r'))")));
  REQUIRE_FALSE(run(rec("c", "null", R"({"id":1,"name":"a\"b\\c"})"), R"({"id":1})"));
  CHECK(run.change.rows.size() == 1);
  REQUIRE_FALSE(run(rec("c", "null", R"({"id":2,"name":"a\u0022b\\c"})"), R"({"id":2})"));
  CHECK(run.change.rows.size() == 1);
  REQUIRE_FALSE(run(rec("u", "null", R"({"id":2,"name":"a\"b\\c"})"), R"({"id":2})"));
  CHECK(run.row() == R"({"id":2,"__DORIS_DELETE_SIGN__":1})");
}

TEST_CASE("Transforms per table through TableOptions", "[decode][transforms]") {
  TableOptions orders;
  orders.transforms = ColumnTransforms{};
  orders.transforms->exclude = {"v"};
  DecoderOptions o;
  o.transforms.name_case = NameCase::Upper;  // the default of every other table
  Run run(o);
  run.context = [&](const Change& c) { return TableContext{c.table == "orders" ? &orders : nullptr, nullptr}; };
  REQUIRE_FALSE(run(rec("c", "null", R"({"id":1,"v":"a"})"), R"({"id":1})"));
  CHECK(run.row() == R"({"ID":1,"V":"a","__DORIS_DELETE_SIGN__":0})");
  const std::string orders_source =
      R"("source":{"connector":"mysql","ts_ms":1,"db":"inventory","table":"orders","file":"b.1","pos":4,"row":0})";
  REQUIRE_FALSE(run(rec("c", "null", R"({"id":1,"v":"a"})", orders_source), R"({"id":1})"));
  CHECK(run.row() == R"({"id":1,"__DORIS_DELETE_SIGN__":0})");
}

TEST_CASE("ColumnTransforms names a source column's Doris column and back", "[decode][transforms]") {
  ColumnTransforms tf;
  tf.rename = {{"a", "Alpha"}};
  tf.exclude = {"x"};
  tf.name_case = NameCase::Lower;
  CHECK(tf.target_name("a") == "Alpha");  // a rename is taken verbatim
  CHECK(tf.target_name("B") == "b");
  CHECK_FALSE(tf.target_name("x").has_value());
  CHECK(tf.source_name("Alpha") == "a");
  CHECK(tf.source_name("b") == "b");
  CHECK(std::string(doris_type(Meta::Offset)) == "BIGINT");
}
