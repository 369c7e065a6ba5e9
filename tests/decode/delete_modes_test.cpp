// Delete modes (issue 33 item 2): what a source delete becomes under
// hard / soft / ignore, for full rows, partial (TOAST) rows, key changes and
// tombstones.
#include <catch2/catch.hpp>

#include <string>

#include "core/decode/decoder.hpp"
#include "tests/decode/decode_run.hpp"

using namespace cdc2doris::decode;

namespace {

struct Run : test::DecodeRun {
  explicit Run(DecoderOptions o = {}) : DecodeRun(std::move(o), "", 0) {}
};

// 2023-11-14 22:13:20.000 UTC
const std::string kMysqlSource =
    R"("source":{"connector":"mysql","ts_ms":1700000000000,"db":"inventory","table":"customers","file":"b.1","pos":4,"row":0})";
const std::string kPgSource =
    R"("source":{"connector":"postgresql","ts_ms":1700000000123,"db":"shop","schema":"public","table":"orders","lsn":7})";

std::string rec(const std::string& source, std::string_view op, std::string_view before, std::string_view after) {
  return std::string(R"({"before":)") + std::string(before) + R"(,"after":)" + std::string(after) + "," + source +
         R"(,"op":")" + std::string(op) + R"("})";
}

DecoderOptions with(DeleteMode m, std::string deleted_at = {}) {
  DecoderOptions o;
  o.deletes.mode = m;
  o.deletes.deleted_at_column = std::move(deleted_at);
  return o;
}

constexpr std::string_view kMysqlTopic = "dbserver1.inventory.customers";
constexpr std::string_view kPgTopic = "pg.public.orders";

}  // namespace

TEST_CASE("Delete mode hard keeps the delete sign", "[decode][delete_modes]") {
  Run run(with(DeleteMode::Hard));
  REQUIRE_FALSE(run(rec(kMysqlSource, "d", R"({"id":1,"name":"a"})", "null"), R"({"id":1})", kMysqlTopic, 1));
  REQUIRE(run.change.rows.size() == 1);
  CHECK(run.row() == R"({"id":1,"name":"a","__DORIS_DELETE_SIGN__":1})");
  CHECK(run.change.rows[0].is_delete());
  CHECK_FALSE(run.change.rows[0].soft_delete);
  CHECK(run.change.deletes_ignored == 0);
}

TEST_CASE("Delete mode soft flags the row instead of deleting it", "[decode][delete_modes]") {
  SECTION("MySQL: the whole before-image with the flag true and deleted_at from source.ts_ms") {
    Run run(with(DeleteMode::Soft, "deleted_at"));
    REQUIRE_FALSE(run(rec(kMysqlSource, "c", "null", R"({"id":1,"name":"a"})"), R"({"id":1})", kMysqlTopic, 1));
    CHECK(run.row() == R"({"id":1,"name":"a","__deleted":false,"deleted_at":null,"__DORIS_DELETE_SIGN__":0})");
    REQUIRE_FALSE(run(rec(kMysqlSource, "d", R"({"id":1,"name":"a"})", "null"), R"({"id":1})", kMysqlTopic, 2));
    REQUIRE(run.change.rows.size() == 1);
    CHECK(run.row() ==
          R"({"id":1,"name":"a","__deleted":true,"deleted_at":"2023-11-14 22:13:20","__DORIS_DELETE_SIGN__":0})");
    CHECK(run.change.rows[0].partial_columns.empty());
    CHECK(run.change.rows[0].soft_delete);
    CHECK_FALSE(run.change.rows[0].is_delete());
    CHECK(run.dec.stats().soft_deletes == 1);
    CHECK(run.dec.stats().deletes == 0);
    // A re-insert of the key clears the flag.
    REQUIRE_FALSE(run(rec(kMysqlSource, "c", "null", R"({"id":1,"name":"b"})"), R"({"id":1})", kMysqlTopic, 3));
    CHECK(run.row() == R"({"id":1,"name":"b","__deleted":false,"deleted_at":null,"__DORIS_DELETE_SIGN__":0})");
  }
  SECTION("deleted_at is the wall clock of decoding.time_zone; the flag column name is configurable") {
    DecoderOptions o = with(DeleteMode::Soft, "del_at");
    o.deletes.soft_column = "is_deleted";
    o.time_zone = "Asia/Shanghai";
    Run run(o);
    REQUIRE_FALSE(run(rec(kPgSource, "d", R"({"id":5,"v":"x"})", "null"), R"({"id":5})", kPgTopic, 1));
    CHECK(run.row() == R"({"id":5,"is_deleted":true,"del_at":"2023-11-15 06:13:20.123000","__DORIS_DELETE_SIGN__":0})");
  }
  SECTION("PostgreSQL: key-only partial row (the before-image's non-key values may be type defaults)") {
    Run run(with(DeleteMode::Soft));
    REQUIRE_FALSE(run(rec(kPgSource, "d", R"({"id":5,"qty":0,"note":null})", "null"), R"({"id":5})", kPgTopic, 1));
    REQUIRE(run.change.rows.size() == 1);
    CHECK(run.row() == R"({"id":5,"__deleted":true,"__DORIS_DELETE_SIGN__":0})");
    CHECK(run.change.rows[0].partial_columns == std::vector<std::string>{"id", "__deleted", "__DORIS_DELETE_SIGN__"});
    CHECK(run.change.rows[0].soft_delete);
  }
  SECTION("a partial (TOAST) update carries the flag false among its columns") {
    Run run(with(DeleteMode::Soft, "deleted_at"));
    REQUIRE_FALSE(run(rec(kPgSource, "u", "null", R"({"id":5,"body":"__debezium_unavailable_value","v":"y"})"),
                      R"({"id":5})", kPgTopic, 1));
    REQUIRE(run.change.rows.size() == 1);
    CHECK(run.row() == R"({"id":5,"v":"y","__deleted":false,"deleted_at":null,"__DORIS_DELETE_SIGN__":0})");
    CHECK(run.change.rows[0].partial_columns ==
          std::vector<std::string>{"id", "v", "__deleted", "deleted_at", "__DORIS_DELETE_SIGN__"});
    CHECK_FALSE(run.change.rows[0].soft_delete);
  }
  SECTION("a primary-key change flags the old key and writes the new one unflagged") {
    Run run(with(DeleteMode::Soft));
    REQUIRE_FALSE(run(rec(kMysqlSource, "u", R"({"id":1,"name":"a"})", R"({"id":2,"name":"a"})"), R"({"id":2})",
                      kMysqlTopic, 1));
    CHECK(run.change.primary_key_changed);
    REQUIRE(run.change.rows.size() == 2);
    CHECK(run.row(0) == R"({"id":1,"name":"a","__deleted":true,"__DORIS_DELETE_SIGN__":0})");
    CHECK(run.change.rows[0].soft_delete);
    CHECK(run.row(1) == R"({"id":2,"name":"a","__deleted":false,"__DORIS_DELETE_SIGN__":0})");
  }
  SECTION("a tombstone marks its key deleted; without a source time deleted_at is left as stored") {
    Run run(with(DeleteMode::Soft, "deleted_at"));
    REQUIRE_FALSE(run(std::nullopt, R"({"id":9})", kMysqlTopic, 5));
    CHECK(run.change.op == 'd');
    REQUIRE(run.change.rows.size() == 1);
    CHECK(run.row() == R"({"id":9,"__deleted":true,"__DORIS_DELETE_SIGN__":0})");
    CHECK(run.change.rows[0].partial_columns == std::vector<std::string>{"id", "__deleted", "__DORIS_DELETE_SIGN__"});
  }
  SECTION("extra columns come before the flag; a delete without before-image is key-only") {
    DecoderOptions o = with(DeleteMode::Soft);
    o.extra_columns.op = "_op";
    Run run(o);
    REQUIRE_FALSE(run(rec(kMysqlSource, "d", "null", "null"), R"({"id":3})", kMysqlTopic, 1));
    CHECK(run.row() == R"({"id":3,"_op":"d","__deleted":true,"__DORIS_DELETE_SIGN__":0})");
    CHECK(run.change.rows[0].partial_columns ==
          std::vector<std::string>{"id", "_op", "__deleted", "__DORIS_DELETE_SIGN__"});
  }
  SECTION("a source column named like the flag is refused, not written twice") {
    Run run(with(DeleteMode::Soft));
    auto err = run(rec(kMysqlSource, "c", "null", R"({"id":1,"__deleted":"x"})"), R"({"id":1})", kMysqlTopic, 1);
    REQUIRE(err);
    CHECK(err->code == DecodeErrorCode::Unsupported);
    CHECK(err->message().find("__deleted") != std::string::npos);
  }
}

TEST_CASE("Delete mode ignore drops deletes and counts them", "[decode][delete_modes]") {
  Run run(with(DeleteMode::Ignore));
  REQUIRE_FALSE(run(rec(kMysqlSource, "c", "null", R"({"id":1,"name":"a"})"), R"({"id":1})", kMysqlTopic, 1));
  CHECK(run.row() == R"({"id":1,"name":"a","__DORIS_DELETE_SIGN__":0})");  // no flag column
  REQUIRE_FALSE(run(rec(kMysqlSource, "d", R"({"id":1,"name":"a"})", "null"), R"({"id":1})", kMysqlTopic, 2));
  CHECK(run.change.kind == Kind::Change);
  CHECK(run.change.rows.empty());
  CHECK(run.change.deletes_ignored == 1);
  // A primary-key change keeps the old key's row and writes the new one.
  REQUIRE_FALSE(run(rec(kMysqlSource, "u", R"({"id":1,"name":"a"})", R"({"id":2,"name":"a"})"), R"({"id":2})",
                    kMysqlTopic, 3));
  REQUIRE(run.change.rows.size() == 1);
  CHECK(run.row() == R"({"id":2,"name":"a","__DORIS_DELETE_SIGN__":0})");
  CHECK(run.change.deletes_ignored == 1);
  // A tombstone that is the key's only delete: dropped too.
  REQUIRE_FALSE(run(std::nullopt, R"({"id":2})", kMysqlTopic, 9));
  CHECK(run.change.rows.empty());
  CHECK(run.change.deletes_ignored == 1);
  // The next record starts from zero.
  REQUIRE_FALSE(run(rec(kMysqlSource, "c", "null", R"({"id":4})"), R"({"id":4})", kMysqlTopic, 10));
  CHECK(run.change.deletes_ignored == 0);
  CHECK(run.dec.stats().deletes_ignored == 3);
  CHECK(run.dec.stats().deletes == 0);
}

TEST_CASE("Delete modes per table through TableOptions", "[decode][delete_modes]") {
  TableOptions soft;
  soft.deletes = DeleteOptions{DeleteMode::Soft, "gone", ""};
  Run run;
  run.context = [&](const Change& c) { return TableContext{c.table == "orders" ? &soft : nullptr, nullptr}; };
  REQUIRE_FALSE(run(rec(kPgSource, "d", R"({"id":5,"v":"x"})", "null"), R"({"id":5})", kPgTopic, 1));
  CHECK(run.row() == R"({"id":5,"gone":true,"__DORIS_DELETE_SIGN__":0})");
  REQUIRE_FALSE(run(rec(kMysqlSource, "d", R"({"id":1})", "null"), R"({"id":1})", kMysqlTopic, 1));
  CHECK(run.row() == R"({"id":1,"__DORIS_DELETE_SIGN__":1})");
}

TEST_CASE("Delete mode names parse", "[decode][delete_modes]") {
  CHECK(parse_delete_mode("soft") == DeleteMode::Soft);
  CHECK(parse_delete_mode("hard") == DeleteMode::Hard);
  CHECK(parse_delete_mode("ignore") == DeleteMode::Ignore);
  CHECK_FALSE(parse_delete_mode("Soft"));
  CHECK(std::string(to_string(DeleteMode::Ignore)) == "ignore");
}
