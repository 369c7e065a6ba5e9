// In-process tests of the query port's pieces: protocol encoding and
// mysql_native_password, and statements run against an engine (typed WHERE
// and ORDER BY, LIMIT, COUNT(*), SHOW TRANSACTION, refusals).
#include "tools/doris_emulator/engine.hpp"
#include "tools/doris_emulator/mysql_protocol.hpp"
#include "tools/doris_emulator/query_exec.hpp"

#include <catch2/catch.hpp>

using namespace cdc2doris::emu;

namespace {

std::string unhex(std::string_view h) {
  std::string r;
  for (size_t i = 0; i + 1 < h.size(); i += 2) r.push_back(static_cast<char>(std::stoi(std::string(h.substr(i, 2)), nullptr, 16)));
  return r;
}

// Result rows as "a|b|NULL" lines.
std::string rows(const QueryResult& q) {
  std::string o;
  for (auto& r : q.rows) {
    for (size_t i = 0; i < r.size(); ++i) o += (i ? "|" : "") + (r[i] ? *r[i] : std::string("NULL"));
    o += "\n";
  }
  return o;
}

struct Fix {
  Engine e{Config{}};
  QuerySession s{e, "root", "127.0.0.1", 7};
  Fix() {
    e.execute_sql("", "CREATE DATABASE d");
    e.execute_sql("d", "CREATE TABLE t (id INT, price DECIMAL(10,2), name VARCHAR(10)) DUPLICATE KEY(id) "
                       "DISTRIBUTED BY HASH(id) BUCKETS 1");
    LoadRequest r;
    r.db = "d";
    r.table = "t";
    r.headers = {{"format", "csv"}, {"column_separator", ","}, {"label", "csv_1"}};
    r.authorization = "Basic cm9vdDo=";
    std::string body = "10,9.50,ten\n9,10.00,nine\n100,1.25,\\N\n2,100.10,two\n";
    r.content_length = static_cast<int64_t>(body.size());
    Reply early;
    auto l = e.start_load(r, &early);
    REQUIRE(l);
    l->feed(body.data(), body.size());
    REQUIRE(l->finish().body.find("\"Success\"") != std::string::npos);
    REQUIRE_FALSE(s.use("d").error);
  }
};

}  // namespace

TEST_CASE("mysql protocol: native password, framing, packets", "[emulator][query_port]") {
  const std::string scramble = "abcdefghij0123456789";
  CHECK(mysql::check_native_password(scramble, unhex("ef525f920b8b2ad9ca5eeb6c2b8dcc117baf54d4"), "s3cret"));
  CHECK_FALSE(mysql::check_native_password(scramble, unhex("ef525f920b8b2ad9ca5eeb6c2b8dcc117baf54d5"), "s3cret"));
  CHECK(mysql::check_native_password(scramble, "", ""));
  CHECK_FALSE(mysql::check_native_password(scramble, "x", ""));
  std::string wire;
  uint8_t seq = 3;
  mysql::frame(&wire, "abc", &seq);
  CHECK(wire == std::string("\x03\x00\x00\x03" "abc", 7));
  CHECK(seq == 4);
  std::string big(0xffffff, 'x');
  wire.clear();
  seq = 0;
  mysql::frame(&wire, big, &seq);
  CHECK(wire.size() == 4 + big.size() + 4);  // followed by an empty packet
  CHECK(seq == 2);
  std::string le;
  mysql::put_lenenc(&le, 250);
  mysql::put_lenenc(&le, 251);
  mysql::put_lenenc(&le, 70000);
  CHECK(le == std::string("\xfa\xfc\xfb\x00\xfd\x70\x11\x01", 8));
  CHECK(mysql::err_packet(1045, "28000", "no") == std::string("\xff\x15\x04#28000no", 11));
  CHECK(mysql::text_row({std::string("a"), std::nullopt}) == std::string("\x01" "a\xfb", 3));
}

TEST_CASE("query port statements: typed WHERE/ORDER BY, LIMIT, COUNT(*)", "[emulator][query_port]") {
  Fix f;
  // DECIMAL and INT compare as numbers, not text ("100.10" > "9.50").
  CHECK(rows(f.s.run("SELECT id, price FROM t WHERE price > 9.5 ORDER BY price DESC")) == "2|100.10\n9|10.00\n");
  CHECK(rows(f.s.run("SELECT id FROM t ORDER BY id LIMIT 2 OFFSET 1")) == "9\n10\n");
  CHECK(rows(f.s.run("SELECT name FROM t WHERE id IN (2, 100) ORDER BY id")) == "two\nNULL\n");
  CHECK(rows(f.s.run("SELECT id FROM t WHERE name LIKE 't%' AND id <= 10 ORDER BY 1")) == "2\n10\n");
  CHECK(rows(f.s.run("SELECT COUNT(*) AS n FROM d.t WHERE name IS NOT NULL")) == "3\n");
  CHECK(rows(f.s.run("SELECT id FROM t WHERE id = 'x'")).empty());  // does not convert: no match
  CHECK(rows(f.s.run("SELECT id FROM t WHERE name NOT IN ('two', NULL)")).empty());
  auto q = f.s.run("select * from t where id = 9");
  REQUIRE(q.cols.size() == 3);
  CHECK(q.cols[1].type == mysql::Type::NewDecimal);
  CHECK(rows(q) == "9|10.00|nine\n");
  CHECK(rows(f.s.run("SELECT @@session.auto_increment_increment AS a, @@character_set_client, DATABASE()")) ==
        "1|utf8mb4|d\n");
  CHECK(rows(f.s.run("SET time_zone = 'UTC'")).empty());
  CHECK(rows(f.s.run("SELECT @@time_zone")) == "UTC\n");
  CHECK(rows(f.s.run("SHOW TRANSACTION WHERE LABEL = 'csv_1'")).find("|csv_1|BE: 127.0.0.1|VISIBLE|") !=
        std::string::npos);
  auto missing = f.s.run("SHOW TRANSACTION WHERE ID = 42");
  CHECK(missing.error);
  CHECK(missing.message == "errCode = 2, detailMessage = transaction with id 42 does not exist");
}

TEST_CASE("query port statements: anything else is an error, never a guess", "[emulator][query_port]") {
  Fix f;
  for (const char* sql : {"SELECT id FROM t WHERE id = 1 OR id = 2", "SELECT id, COUNT(*) FROM t",
                          "SELECT id FROM t GROUP BY id", "SELECT MAX(id) FROM t", "INSERT INTO t VALUES (1, 1, 'a')",
                          "SELECT a.id FROM t a JOIN t b ON a.id = b.id", "SELECT * FROM information_schema.views",
                          "SELECT id FROM t WHERE (id = 1)", "SELECT NOW()"}) {
    INFO(sql);
    auto q = f.s.run(sql);
    CHECK(q.error);
    CHECK(q.code == 1105);
    CHECK(q.message.rfind("errCode = 2, detailMessage = Unsupported statement type", 0) == 0);
  }
  auto q = f.s.run("SELECT nope FROM t");
  CHECK(q.message == "errCode = 2, detailMessage = Unknown column 'nope' in 'table list'");
  q = f.s.use("nope");
  CHECK(q.code == 1049);
  CHECK(q.message == "errCode = 2, detailMessage = Unknown database 'nope'");
  q = f.s.run("SELECT @@no_such_var");
  CHECK(q.message == "errCode = 2, detailMessage = Unknown system variable 'no_such_var'");
}

TEST_CASE("query port: GRANT/SHOW GRANTS, and DDL checked against the session user's privileges",
          "[emulator][query_port][privileges]") {
  Fix f;
  REQUIRE_FALSE(f.s.run("CREATE USER 'u'@'%' IDENTIFIED BY 'p'").error);
  REQUIRE_FALSE(f.s.run("GRANT LOAD_PRIV ON d.* TO u").error);
  QuerySession u{f.e, "u", "10.1.2.3", 8};
  REQUIRE_FALSE(u.use("d").error);
  auto alter = u.run("ALTER TABLE t ADD COLUMN z INT");
  CHECK(alter.error);
  CHECK(alter.message ==
        "errCode = 2, detailMessage = ALTER TABLE command denied to user 'u'@'10.1.2.3' for table 'd: t'");
  auto grants = u.run("SHOW GRANTS");
  REQUIRE_FALSE(grants.error);
  CHECK_THAT(rows(grants), Catch::Contains("internal.d: Load_priv"));
  REQUIRE_FALSE(f.s.run("GRANT ALTER_PRIV ON d.t TO u").error);
  CHECK_FALSE(u.run("ALTER TABLE t ADD COLUMN z INT").error);
  CHECK(u.run("GRANT ALTER_PRIV ON d.t TO u").error);  // no GRANT_PRIV
}
