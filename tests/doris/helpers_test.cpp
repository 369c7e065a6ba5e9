// URL/redirect parsing, address rewriting and labels.
#include <catch2/catch.hpp>
#include <set>

#include "core/doris/grants.hpp"
#include "core/doris/gzip.hpp"
#include "core/doris/label.hpp"
#include "core/doris/url.hpp"

using namespace cdc2doris::doris;

TEST_CASE("parse_url: FE addresses and Location variants", "[doris][url]") {
  struct Row {
    const char* in;
    const char* scheme;
    const char* userinfo;
    const char* host;
    uint16_t port;
    const char* target;
  };
  const Row rows[] = {
      {"http://fe1:8030", "http", "", "fe1", 8030, "/"},
      {"https://fe1:8443/", "https", "", "fe1", 8443, "/"},
      {"fe2:8030", "http", "", "fe2", 8030, "/"},
      {"HTTP://fe3", "http", "", "fe3", 80, "/"},
      {"https://fe3", "https", "", "fe3", 443, "/"},
      // newest FE: ?query only if present
      {"http://root:pw@10.0.0.5:8040/api/db/t/_stream_load", "http", "root:pw", "10.0.0.5", 8040,
       "/api/db/t/_stream_load"},
      {"http://root:pw@10.0.0.5:8040/api/db/t/_stream_load?a=1", "http", "root:pw", "10.0.0.5", 8040,
       "/api/db/t/_stream_load?a=1"},
      // older FE: trailing '?' always, query appended without separator
      {"http://root:pw@be:8040/api/db/t/_stream_load?", "http", "root:pw", "be", 8040, "/api/db/t/_stream_load?"},
      // Doris <= 1.2: user@default_cluster:password
      {"http://root@default_cluster:p%40ss@be:8040/api/db/t/_stream_load", "http", "root@default_cluster:p%40ss", "be",
       8040, "/api/db/t/_stream_load"},
      // empty password
      {"http://root:@be:8040/x", "http", "root:", "be", 8040, "/x"},
      {"http://[::1]:8040/api/x", "http", "", "::1", 8040, "/api/x"},
      {"http://u:p@[fe80::1]:8040/api/x", "http", "u:p", "fe80::1", 8040, "/api/x"},
      {"http://be:8040?file=x", "http", "", "be", 8040, "/?file=x"},
  };
  for (auto& r : rows) {
    INFO(r.in);
    auto u = parse_url(r.in);
    REQUIRE(u);
    CHECK(u->scheme == r.scheme);
    CHECK(u->userinfo == r.userinfo);
    CHECK(u->host == r.host);
    CHECK(u->port == r.port);
    CHECK(u->target == r.target);
  }
  CHECK_FALSE(parse_url("ftp://x:1"));
  CHECK_FALSE(parse_url("http://:8030"));
  CHECK_FALSE(parse_url("http://host:notaport"));
  CHECK_FALSE(parse_url("http://host:70000"));
  CHECK(parse_url("http://[::1]:8040")->host_port() == "[::1]:8040");
}

TEST_CASE("redact_url never shows the password", "[doris][url]") {
  CHECK(redact_url("http://root:secret@be:8040/api/db/t/_stream_load?") == "http://***@be:8040/api/db/t/_stream_load?");
  CHECK(redact_url("http://root@default_cluster:secret@be:8040/a") == "http://***@be:8040/a");
  CHECK(redact_url("http://be:8040/api/_load_error_log?file=a@b") == "http://be:8040/api/_load_error_log?file=a@b");
  CHECK(redact_url("root:secret@be:8040") == "***@be:8040");
  CHECK(redact_url("http://fe:8030") == "http://fe:8030");
}

TEST_CASE("rewrite_address: host:port beats host", "[doris][url]") {
  std::map<std::string, std::string> m{{"172.17.0.2:8040", "127.0.0.1:18040"},
                                       {"172.17.0.2", "127.0.0.1"},
                                       {"be-0.be.svc", "10.1.1.1:9040"}};
  std::string h = "172.17.0.2";
  uint16_t p = 8040;
  CHECK(rewrite_address(m, h, p));
  CHECK(h == "127.0.0.1");
  CHECK(p == 18040);
  h = "172.17.0.2";
  p = 8041;
  CHECK(rewrite_address(m, h, p));
  CHECK(h == "127.0.0.1");
  CHECK(p == 8041);  // host-only rule keeps the port
  h = "be-0.be.svc";
  p = 8040;
  CHECK(rewrite_address(m, h, p));
  CHECK(h == "10.1.1.1");
  CHECK(p == 9040);
  h = "other";
  CHECK_FALSE(rewrite_address(m, h, p));
  CHECK(h == "other");
}

TEST_CASE("split_host_port", "[doris][url]") {
  CHECK(split_host_port("be1:8040") == std::make_pair(std::string("be1"), uint16_t{8040}));
  CHECK(split_host_port("[::1]:8040") == std::make_pair(std::string("::1"), uint16_t{8040}));
  CHECK_FALSE(split_host_port("be1"));
  CHECK_FALSE(split_host_port(":8040"));
}

TEST_CASE("labels: validity, sanitising, stable hashing", "[doris][label]") {
  CHECK(is_valid_label("cdc_db_t_1"));
  CHECK(is_valid_label("a-b:c_D9"));
  CHECK_FALSE(is_valid_label(""));
  CHECK_FALSE(is_valid_label("a.b"));
  CHECK_FALSE(is_valid_label(std::string(129, 'a')));
  CHECK(is_valid_label(std::string(128, 'a')));
  CHECK(sanitize_label_part("db.tbl-1 x") == "db_tbl-1_x");
  CHECK(stable_hash_hex("") == "cbf29ce484222325");  // FNV-1a offset basis: stable forever
  CHECK(stable_hash_hex("abc") == stable_hash_hex("abc"));
  CHECK(stable_hash_hex("abc") != stable_hash_hex("abd"));

  CHECK(make_label("cdc", "shop", "orders", 42) == "cdc_shop_orders_42");
  // Lossy sanitising gets a hash so "a.b" and "a_b" cannot collide.
  auto l1 = make_label("cdc", "db", "a.b", 1);
  auto l2 = make_label("cdc", "db", "a_b", 1);
  CHECK(l1 != l2);
  CHECK(is_valid_label(l1));
  CHECK(l1.ends_with("_1"));
  // Long names are shortened but stay valid, distinct and deterministic.
  std::string long_t(200, 't');
  auto a = make_label("cdc", "db", long_t, 7);
  auto b = make_label("cdc", "db", long_t + "x", 7);
  CHECK(a.size() <= 128);
  CHECK(is_valid_label(a));
  CHECK(a != b);
  CHECK(a == make_label("cdc", "db", long_t, 7));
  CHECK(a.ends_with("_7"));
  CHECK(a.starts_with("cdc_db_"));
  auto huge = make_label(std::string(300, 'p'), "db", "t", 123456789);
  CHECK(is_valid_label(huge));
  CHECK(huge.ends_with("_123456789"));
  // Epochs of one table stay distinct.
  std::set<std::string> seen;
  for (uint64_t e = 0; e < 1000; ++e) seen.insert(make_label("p", "db", long_t, e));
  CHECK(seen.size() == 1000);
  // Several loads of one table in one epoch: part 0 keeps the old label.
  CHECK(make_label("cdc", "shop", "orders", 42, 0) == "cdc_shop_orders_42");
  CHECK(make_label("cdc", "shop", "orders", 42, 3) == "cdc_shop_orders_42-3");
  CHECK(make_label("cdc", "db", "t", 5, 1) != make_label("cdc", "db", "t_5", 1, 0));
  CHECK(make_label("cdc", "db", "t", 51, 0) != make_label("cdc", "db", "t", 5, 1));
  auto lp = make_label("cdc", "db", long_t, 7, 12);
  CHECK(is_valid_label(lp));
  CHECK(lp.ends_with("_7-12"));
  CHECK(is_valid_label(make_label(std::string(300, 'p'), "db", "t", 123456789, 99)));
}

TEST_CASE("label and transaction ids parse from messages", "[doris][label]") {
  CHECK(parse_label_txn_id("[LABEL_ALREADY_EXISTS]TStatus: errCode = 2, detailMessage = Label [x] has already been "
                           "used, relate to txn [12345]") == 12345);
  CHECK(parse_label_txn_id("Label [x] has already been used, relate to txn [5], status=[TXN_STATUS_VISIBLE]") == 5);
  CHECK_FALSE(parse_label_txn_id("Label [x] has already been used."));
  CHECK_FALSE(parse_label_txn_id("relate to txn [abc]"));
  CHECK(parse_transaction_id("TStatus: errCode = 2, detailMessage = transaction [18036] not found") == 18036);
  CHECK_FALSE(parse_transaction_id("transaction not found, label=x"));
}

TEST_CASE("gzip round trip", "[doris][gzip]") {
  std::string input;
  for (int i = 0; i < 5000; ++i) input += "{\"id\":" + std::to_string(i) + ",\"v\":\"row\"}\n";
  GzipEncoder enc(1);
  std::string out;
  enc.write(std::string_view(input).substr(0, 1000), out);
  enc.write(std::string_view(input).substr(1000), out);
  enc.finish(out);
  CHECK(out.size() < input.size() / 4);
  CHECK(static_cast<unsigned char>(out[0]) == 0x1f);
  auto back = gunzip(out);
  REQUIRE(back);
  CHECK(*back == input);
  CHECK_FALSE(gunzip(out.substr(0, out.size() / 2)));
  CHECK_FALSE(gunzip("not gzip"));
}

TEST_CASE("grants: SHOW GRANTS cells of 2.x and 1.x read as privileges per object", "[doris][grants]") {
  SqlResult r;
  r.columns = {"UserIdentity", "Comment", "Password", "Roles", "GlobalPrivs", "CatalogPrivs", "DatabasePrivs", "TablePrivs"};
  r.rows = {{"'loader'@'%'", "", "Yes", "", "\\N", "\\N",
             "internal.information_schema: Select_priv; internal.shop: Select_priv,Load_priv",
             "internal.crm.people: Load_priv,Alter_priv"}};
  auto g = parse_grants(r);
  REQUIRE(g);
  CHECK(g->holds("LOAD_PRIV", "shop", "orders"));
  CHECK_FALSE(g->holds("ALTER_PRIV", "shop", "orders"));
  CHECK(g->holds("ALTER_PRIV", "crm", "people"));
  CHECK_FALSE(g->holds("LOAD_PRIV", "crm", "other"));
  CHECK_FALSE(g->holds("LOAD_PRIV", "information_schema", "tables"));

  r.rows = {{"'root'@'%'", "", "No", "operator", "Node_priv,Admin_priv", "\\N", "\\N", "\\N"}};
  g = parse_grants(r);
  REQUIRE(g);
  CHECK(g->holds("ALTER_PRIV", "any", "table"));  // ADMIN_PRIV covers everything

  // 1.x: space-separated privileges with "(false)", cluster-prefixed names.
  r.columns = {"UserIdentity", "Password", "GlobalPrivs", "DatabasePrivs", "TablePrivs", "ResourcePrivs"};
  r.rows = {{"'default_cluster:u'@'%'", "Yes", "Select_priv  (false)",
             "default_cluster:shop: Load_priv Alter_priv  (false)", "N/A", "N/A"}};
  g = parse_grants(r);
  REQUIRE(g);
  CHECK(g->holds("LOAD_PRIV", "shop", "t"));
  CHECK(g->holds("ALTER_PRIV", "shop", "t"));
  CHECK_FALSE(g->holds("CREATE_PRIV", "shop", "t"));
  CHECK(g->holds("SELECT_PRIV", "x", "y"));

  SqlResult ddl;  // not a SHOW GRANTS answer
  CHECK_FALSE(parse_grants(ddl));
}
