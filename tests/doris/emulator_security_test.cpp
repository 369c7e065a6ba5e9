// The client against the Doris emulator with HTTPS (a private CA made with
// openssl in the test's temp dir) and with a user lacking privileges: what
// the daemon meets when Doris runs with enable_https or a least-privilege
// account (issue 35 item 3).
#include <catch2/catch.hpp>

#include "core/doris/client.hpp"
#include "tests/support/test_pki.hpp"
#include "tools/doris_emulator/launcher.hpp"

using namespace cdc2doris;
using namespace cdc2doris::doris;
using namespace cdc2doris::test;
using namespace std::chrono_literals;

namespace {

const char* kDb = "sec";

TestPki& pki() {
  static TestPki p;
  static const bool issued = (p.issue("server", "DNS:localhost,IP:127.0.0.1"),
                              p.issue("wrongname", "DNS:doris.example.com"), true);
  (void)issued;
  return p;
}

std::unique_ptr<Emulator> start(const std::string& cert) {
  EmulatorOptions o;
  o.users = {"root:rootpw"};
  o.tls_cert = pki().file(cert + ".pem");
  o.tls_key = pki().file(cert + ".key");
  auto e = std::make_unique<Emulator>(o);
  e->sql("", std::string("CREATE DATABASE ") + kDb);
  e->sql(kDb, "CREATE TABLE t (id INT, v STRING) UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1");
  return e;
}

int port_of(const std::string& hp) { return std::stoi(hp.substr(hp.rfind(':') + 1)); }

ClientConfig config(const std::string& fe_url, const std::string& user = "root", const std::string& pw = "rootpw") {
  ClientConfig c;
  c.fe_urls = {fe_url};
  c.user = user;
  c.password = pw;
  c.timeouts.connect = 2s;
  c.timeouts.request = 10s;
  c.retry.max_attempts = 1;
  c.retry.backoff.base = 10ms;
  return c;
}

LoadSpec spec(const std::string& label) {
  LoadSpec s;
  s.db = kDb;
  s.table = "t";
  s.label = label;
  s.unique_key = true;
  return s;
}

const std::string kRows = "{\"id\":1,\"v\":\"a\",\"__DORIS_DELETE_SIGN__\":0}\n{\"id\":2,\"v\":\"b\",\"__DORIS_DELETE_SIGN__\":0}\n";

DorisResult<LoadResult> load(DorisClient& c, const std::string& label) {
  auto st = c.open_load(spec(label));
  if (auto w = st->write(kRows); !w) {
    st->cancel();
    return w.error();
  }
  return st->finish();
}

}  // namespace

TEST_CASE("emulator https: a load and its commit go to FE and BE over TLS with a private CA", "[doris][tls]") {
  auto emu = start("server");
  auto cfg = config("https://localhost:" + std::to_string(port_of(emu->fe())));
  cfg.tls.ca_file = pki().file("ca.pem");
  auto client = make_client(cfg);
  auto r = load(*client, "tls_ok_1");
  if (!r) FAIL(r.error().what());
  const auto& res = *r;
  // The FE's 307 named the BE by https on its http port (hostname 127.0.0.1,
  // matched against the certificate's IP SAN).
  CHECK(res.endpoint == emu->bes()[0]);
  auto c = client->commit(kDb, res.txn_id);
  REQUIRE(c.has_value());
  CHECK(c.value() == TxnOutcome::Done);
  CHECK(emu->rows(kDb, "t").size() == 2);
  // Plain HTTP is not served on the FE port any more (Doris: "if enabled,
  // http port will not be available").
  auto plain = make_client(config("http://" + emu->fe()));
  auto pr = load(*plain, "tls_plain_1");
  CHECK(!pr.has_value());
}

TEST_CASE("emulator https: an unknown CA fails naming the FE and the TLS reason", "[doris][tls]") {
  auto emu = start("server");
  auto cfg = config("https://localhost:" + std::to_string(port_of(emu->fe())));
  cfg.tls.ca_file = pki().file("other-ca.pem");
  auto r = load(*make_client(cfg), "tls_ca_1");
  REQUIRE(!r.has_value());
  const auto& e = r.error();
  INFO(e.what());
  CHECK(e.kind() == ErrorKind::Transport);
  CHECK_THAT(e.what(), Catch::Contains("localhost:" + std::to_string(port_of(emu->fe()))));
  CHECK_THAT(e.what(), Catch::Contains("tls handshake with localhost:" + std::to_string(port_of(emu->fe())) +
                                        " failed: unable to get local issuer certificate"));
  CHECK_THAT(e.what(), Catch::Contains("doris.tls.ca_file " + pki().file("other-ca.pem")));
  CHECK(emu->rows(kDb, "t").empty());
}

TEST_CASE("emulator https: a certificate for another name fails the hostname check", "[doris][tls]") {
  auto emu = start("wrongname");
  auto cfg = config("https://localhost:" + std::to_string(port_of(emu->fe())));
  cfg.tls.ca_file = pki().file("ca.pem");
  auto r = load(*make_client(cfg), "tls_name_1");
  REQUIRE(!r.has_value());
  const auto& e = r.error();
  INFO(e.what());
  CHECK_THAT(e.what(), Catch::Contains("localhost:" + std::to_string(port_of(emu->fe()))));
  CHECK_THAT(e.what(), Catch::Contains("tls handshake with localhost:" + std::to_string(port_of(emu->fe())) +
                                        " failed: hostname mismatch"));
  // The same certificate is accepted with the hostname check off (the
  // documented escape hatch), so the failure above was the name.
  cfg.tls.verify_hostname = false;
  auto client = make_client(cfg);
  auto ok = load(*client, "tls_name_2");
  if (!ok) FAIL(ok.error().what());
}

TEST_CASE("emulator privileges: LOAD_PRIV and ALTER_PRIV refusals are fatal and name the GRANT", "[doris][privileges]") {
  EmulatorOptions o;
  o.users = {"root:rootpw"};
  Emulator emu(o);
  emu.sql("", std::string("CREATE DATABASE ") + kDb);
  emu.sql(kDb, "CREATE TABLE t (id INT, v STRING) UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1");
  emu.sql("", "CREATE USER 'loader'@'%' IDENTIFIED BY 'lpw'");
  auto client = make_client(config("http://" + emu.fe(), "loader", "lpw"));

  // No LOAD_PRIV: the FE refuses before redirecting.
  auto r = load(*client, "priv_1");
  REQUIRE(!r.has_value());
  const auto& e = r.error();
  INFO(e.what());
  CHECK(e.kind() == ErrorKind::Auth);
  CHECK(e.disposition() == Disposition::Fatal);
  CHECK_THAT(e.what(), Catch::Contains("fix: GRANT LOAD_PRIV ON sec.t TO 'loader'@'%'"));
  CHECK_THAT(e.what(), Catch::Contains(
                           "Access denied; you need (at least one of) the Admin_priv,Load_priv privilege(s) for this operation"));

  // Granted on the table: the load goes through; SHOW GRANTS shows it.
  emu.sql("", "GRANT LOAD_PRIV ON sec.t TO loader");
  auto ok = load(*client, "priv_2");
  if (!ok) FAIL(ok.error().what());
  auto grants = client->sql("", "SHOW GRANTS");
  REQUIRE(grants.has_value());
  const auto& g = *grants;
  REQUIRE(g.rows.size() == 1);
  REQUIRE(g.columns.size() >= 8);
  CHECK(g.columns[7] == "TablePrivs");
  CHECK(g.rows[0][7].value_or("") == "internal.sec.t: Load_priv");

  // Revoked between the load and its commit: the BE's 2PC refuses it.
  emu.sql("", "REVOKE LOAD_PRIV ON sec.t FROM loader");
  auto c = client->commit(kDb, ok->txn_id);
  REQUIRE(!c.has_value());
  const auto& ce = c.error();
  INFO(ce.what());
  CHECK(ce.disposition() == Disposition::Fatal);
  CHECK_THAT(ce.what(), Catch::Contains("(LOAD) privilege(s) for this operation"));
  // A commit by txn id knows the database only: the fix names sec.*.
  CHECK_THAT(ce.what(), Catch::Contains("fix: GRANT LOAD_PRIV ON sec.* TO 'loader'@'%'"));
  CHECK(emu.rows(kDb, "t").empty());

  // A schema change without ALTER_PRIV, over the HTTP SQL API.
  emu.sql("", "GRANT LOAD_PRIV ON sec.* TO loader");
  auto alter = client->sql(kDb, "ALTER TABLE t ADD COLUMN x INT");
  REQUIRE(!alter.has_value());
  const auto& ae = alter.error();
  INFO(ae.what());
  CHECK(ae.disposition() == Disposition::Fatal);
  CHECK_THAT(ae.what(), Catch::Contains("ALTER TABLE command denied to user 'loader'@'127.0.0.1' for table 'sec: t'"));
  CHECK_THAT(ae.what(), Catch::Contains("fix: GRANT ALTER_PRIV ON sec.t TO 'loader'@'%'"));
  emu.sql("", "GRANT ALTER_PRIV ON sec.t TO loader");
  auto altered = client->sql(kDb, "ALTER TABLE t ADD COLUMN x INT");
  if (!altered) FAIL(altered.error().what());

  // A wrong password is Doris' 401 answer, not a privilege.
  auto wrong = make_client(config("http://" + emu.fe(), "loader", "nope"));
  auto w = load(*wrong, "priv_3");
  REQUIRE(!w.has_value());
  CHECK(w.error().kind() == ErrorKind::Auth);
  CHECK_THAT(w.error().what(), Catch::Contains("Access denied for user 'loader' (using password: YES)"));
  CHECK_THAT(w.error().what(), !Catch::Contains("GRANT"));
}
