// CREATE/ALTER statements (run against the emulator's SQL engine, which
// parses them as Doris does) and the difference between a record's schema
// and a table under each policy.
#include <catch2/catch.hpp>

#include <boost/json.hpp>

#include "core/decode/connect_schema.hpp"
#include "core/schema/ddl_sql.hpp"
#include "core/schema/types.hpp"
#include "tools/doris_emulator/engine.hpp"

using namespace cdc2doris;
using schema::Column;
using schema::OpKind;
using schema::Policy;
using schema::TableColumn;

namespace {

const char* kRow = R"({"type":"struct","name":"shop.orders.Value","optional":true,"fields":[
  {"type":"int64","optional":false,"field":"id"},
  {"type":"string","optional":true,"field":"note","parameters":{"__debezium.source.column.type":"VARCHAR","__debezium.source.column.length":"20"}},
  {"type":"bytes","optional":true,"name":"org.apache.kafka.connect.data.Decimal","parameters":{"scale":"2","connect.decimal.precision":"10"},"field":"amount"},
  {"type":"int32","optional":true,"default":5,"field":"qty"},
  {"type":"string","optional":true,"name":"io.debezium.time.ZonedTimestamp","field":"ts"},
  {"type":"string","optional":true,"name":"io.debezium.data.Json","field":"doc"}]})";

std::vector<TableColumn> desc(emu::Engine& e, const std::string& table) {
  auto res = boost::json::parse(e.query("d", "DESC " + table, false)).as_object();
  std::vector<TableColumn> out;
  for (const auto& r : res["data"].as_object()["data"].as_array()) {
    const auto& a = r.as_array();
    TableColumn c;
    c.name = a[0].as_string().c_str();
    c.type = schema::normalize_type(a[1].as_string().c_str());
    c.nullable = a[2].as_string() == "YES";
    c.key = a[3].as_string() == "true";
    out.push_back(c);
  }
  return out;
}

}  // namespace

TEST_CASE("CREATE TABLE from a row schema: keys first, NOT NULL, merge-on-write, BUCKETS AUTO", "[schema]") {
  auto row = decode::compile_schema(kRow);
  auto cols = schema::columns_from_schema(row, {"id"});
  schema::CreateOptions opt;
  opt.flexible_partial_updates = true;
  opt.properties["replication_num"] = "1";
  auto spec = schema::table_from_columns("d", "orders", cols, {"id"}, opt);
  const std::string sql = schema::create_table_sql(spec);
  CHECK(sql == "CREATE TABLE IF NOT EXISTS `d`.`orders` (\n"
               "  `id` BIGINT NOT NULL,\n"
               "  `note` VARCHAR(80) NULL,\n"
               "  `amount` DECIMAL(10,2) NULL,\n"
               "  `qty` INT NULL DEFAULT '5',\n"
               "  `ts` DATETIME(6) NULL,\n"
               "  `doc` JSON NULL\n"
               ")\n"
               "UNIQUE KEY(`id`)\n"
               "DISTRIBUTED BY HASH(`id`) BUCKETS AUTO\n"
               "PROPERTIES (\n"
               "  \"enable_unique_key_merge_on_write\" = \"true\",\n"
               "  \"enable_unique_key_skip_bitmap_column\" = \"true\",\n"
               "  \"light_schema_change\" = \"true\",\n"
               "  \"replication_num\" = \"1\"\n"
               ")");
  emu::Engine e(emu::Config{});
  e.execute_sql("", "CREATE DATABASE d");
  e.execute_sql("d", sql);
  auto t = desc(e, "orders");
  REQUIRE(t.size() == 6);
  CHECK(t[0].key);
  CHECK_FALSE(t[0].nullable);
  CHECK(t[1].type == "VARCHAR(80)");
  // Running it again changes nothing (IF NOT EXISTS).
  e.execute_sql("d", sql);
}

TEST_CASE("Key columns move to the front, a missing key or no key is refused", "[schema]") {
  auto row = decode::compile_schema(kRow);
  auto cols = schema::columns_from_schema(row, {"note", "id"});
  auto spec = schema::table_from_columns("d", "t", cols, {"note", "id"}, {});
  REQUIRE(spec.columns.size() == 6);
  CHECK(spec.columns[0].name == "note");
  CHECK(spec.columns[0].type == "VARCHAR(80)");
  CHECK(spec.columns[1].name == "id");
  CHECK_THROWS_AS(schema::table_from_columns("d", "t", cols, {"nope"}, {}), schema::SchemaError);
  CHECK_THROWS_AS(schema::table_from_columns("d", "t", cols, {}, {}), schema::SchemaError);
  schema::CreateOptions dup;
  dup.model = schema::KeyModel::Duplicate;
  auto d = schema::table_from_columns("d", "t", cols, {}, dup);
  CHECK(schema::create_table_sql(d).find("DUPLICATE KEY(`id`)") != std::string::npos);
  CHECK(schema::create_table_sql(d).find("merge_on_write") == std::string::npos);
}

TEST_CASE("A sequence column and extra columns are created with the table", "[schema]") {
  auto row = decode::compile_schema(kRow);
  schema::CreateOptions opt;
  opt.sequence_col = "_seq";
  opt.extra_columns.push_back({"_op", "VARCHAR(1)", true, std::nullopt, false, false});
  auto spec = schema::table_from_columns("d", "t", schema::columns_from_schema(row, {"id"}), {"id"}, opt);
  const std::string sql = schema::create_table_sql(spec);
  CHECK(sql.find("`_op` VARCHAR(1) NULL,\n  `_seq` BIGINT NULL\n") != std::string::npos);
  CHECK(sql.find("\"function_column.sequence_col\" = \"_seq\"") != std::string::npos);
  emu::Engine e(emu::Config{});
  e.execute_sql("", "CREATE DATABASE d");
  e.execute_sql("d", sql);
}

TEST_CASE("diff: off counts, add adds and widens, full also drops and renames", "[schema]") {
  std::vector<TableColumn> table{{"id", "BIGINT", true, false, {}},
                                 {"a", "INT", false, true, {}},
                                 {"b", "VARCHAR(20)", false, true, {}},
                                 {"_seq", "BIGINT", false, true, {}}};
  auto col = [](std::string n, std::string t) { return Column{std::move(n), std::move(t), true, std::nullopt, false, false}; };
  // c added, a widened to BIGINT, b gone.
  std::vector<Column> source{col("id", "BIGINT"), col("a", "BIGINT"), col("c", "STRING")};
  source[0].key = true;

  auto off = schema::diff(table, source, Policy::Off, {"_seq"});
  CHECK(off.ops.empty());
  CHECK(off.missing == std::vector<std::string>{"c"});
  CHECK(off.not_applied == std::vector<std::string>{"a: INT -> BIGINT"});

  auto add = schema::diff(table, source, Policy::Add, {"_seq"});
  REQUIRE(add.ops.size() == 2);
  CHECK(add.ops[0].kind == OpKind::AddColumn);
  CHECK(schema::alter_sql("d", "t", add.ops[0]) == "ALTER TABLE `d`.`t` ADD COLUMN `c` STRING NULL");
  CHECK(add.ops[1].kind == OpKind::ModifyColumn);
  CHECK(schema::alter_sql("d", "t", add.ops[1]) == "ALTER TABLE `d`.`t` MODIFY COLUMN `a` BIGINT NULL");
  CHECK(add.not_applied.empty());

  // b (VARCHAR(20)) out, c (STRING) in: not the same type, so drop + add.
  auto full = schema::diff(table, source, Policy::Full, {"_seq"});
  REQUIRE(full.ops.size() == 3);
  CHECK(full.ops[0].kind == OpKind::AddColumn);
  CHECK(full.ops[1].kind == OpKind::DropColumn);
  CHECK(full.ops[1].column.name == "b");
  CHECK(full.ops[2].kind == OpKind::ModifyColumn);
  CHECK(schema::alter_sql("d", "t", full.ops[2]) == "ALTER TABLE `d`.`t` MODIFY COLUMN `a` BIGINT NULL");
  CHECK(full.not_applied.empty());

  // Same type, same position: a rename.
  std::vector<Column> renamed{col("id", "BIGINT"), col("a", "INT"), col("b2", "VARCHAR(20)")};
  auto ren = schema::diff(table, renamed, Policy::Full, {"_seq"});
  REQUIRE(ren.ops.size() == 1);
  CHECK(ren.ops[0].kind == OpKind::RenameColumn);
  CHECK(schema::alter_sql("d", "t", ren.ops[0]) == "ALTER TABLE `d`.`t` RENAME COLUMN `b` `b2`");
  // Under add a rename is only an added column (the old one stays).
  auto ren_add = schema::diff(table, renamed, Policy::Add, {"_seq"});
  REQUIRE(ren_add.ops.size() == 1);
  CHECK(ren_add.ops[0].kind == OpKind::AddColumn);

  // A narrower source type needs nothing; an unrelated one is not applied.
  std::vector<Column> narrower{col("id", "BIGINT"), col("a", "SMALLINT"), col("b", "VARCHAR(8)")};
  CHECK(schema::diff(table, narrower, Policy::Full, {"_seq"}).empty());
  std::vector<Column> other{col("id", "BIGINT"), col("a", "DATE"), col("b", "VARCHAR(20)")};
  auto o = schema::diff(table, other, Policy::Full, {"_seq"});
  CHECK(o.ops.empty());
  CHECK(o.not_applied == std::vector<std::string>{"a: INT -> DATE"});
  // A loose type (no source type propagated) never asks for a MODIFY.
  auto loose = col("b", "STRING");
  loose.loose = true;
  CHECK(schema::diff(table, {col("id", "BIGINT"), col("a", "INT"), loose}, Policy::Full, {"_seq"}).empty());
}

TEST_CASE("ALTER statements run on the emulator as generated", "[schema]") {
  // The type MODIFY runs as a heavy schema-change job, as in Doris: the next
  // housekeeping round finishes it (alter_job_ms 0) before the next ALTER.
  emu::Config cfg;
  cfg.alter_job_ms = 0;
  emu::Engine e(cfg);
  e.execute_sql("", "CREATE DATABASE d");
  e.execute_sql("d", "CREATE TABLE t (id BIGINT NOT NULL, a INT NULL, b VARCHAR(20) NULL) UNIQUE KEY(id) "
                     "DISTRIBUTED BY HASH(id) BUCKETS AUTO PROPERTIES (\"replication_num\" = \"1\")");
  auto col = [](std::string n, std::string t) { return Column{std::move(n), std::move(t), true, std::nullopt, false, false}; };
  Column with_default = col("c", "INT");
  with_default.default_sql = "'5'";
  for (const auto& op : {schema::DdlOp{OpKind::AddColumn, with_default, {}},
                         schema::DdlOp{OpKind::ModifyColumn, col("a", "BIGINT"), {}},
                         schema::DdlOp{OpKind::ModifyColumn, col("b", "VARCHAR(200)"), {}},
                         schema::DdlOp{OpKind::RenameColumn, col("b", ""), "b2"},
                         schema::DdlOp{OpKind::DropColumn, col("c", ""), {}}})
  {
    e.execute_sql("d", schema::alter_sql("d", "t", op));
    e.tick(emu::now_ms());
  }
  auto t = desc(e, "t");
  REQUIRE(t.size() == 3);
  CHECK(t[1].type == "BIGINT");
  CHECK(t[2].name == "b2");
  CHECK(t[2].type == "VARCHAR(200)");
}
