// The client against the Doris emulator on loopback: every branch listed in
// issue 5 (TLS is covered by fake_server_test.cpp, against our own
// TLS-terminating server).
#include <catch2/catch.hpp>
#include <set>
#include <thread>

#include "core/doris/client.hpp"
#include "tools/doris_emulator/launcher.hpp"

using namespace cdc2doris;
using namespace cdc2doris::doris;
using namespace cdc2doris::test;
using namespace std::chrono_literals;

namespace {

const char* kDb = "cdc";

Emulator& emu() {
  static Emulator* e = [] {
    EmulatorOptions o;
    o.be_count = 3;
    o.users = {"root:rootpw"};
    auto* em = new Emulator(o);  // lives for the whole test binary
    em->sql("", std::string("CREATE DATABASE ") + kDb);
    return em;
  }();
  return *e;
}

void create_table(const std::string& t, const std::string& cols = "id INT, v STRING",
                  const std::string& keys = "UNIQUE KEY(id)") {
  emu().sql(kDb, "CREATE TABLE " + t + " (" + cols + ") " + keys + " DISTRIBUTED BY HASH(id) BUCKETS 1");
}

ClientConfig config(Route route = Route::ViaFe) {
  ClientConfig c;
  c.fe_urls = {"http://" + emu().fe()};
  c.user = "root";
  c.password = "rootpw";
  c.route = route;
  c.timeouts.connect = 2s;
  c.timeouts.request = 10s;
  c.timeouts.expect_continue = 10s;
  c.timeouts.response = 20s;
  c.retry.backoff.base = 10ms;
  c.retry.backoff.cap = 100ms;
  c.endpoint_quarantine = 30s;
  return c;
}

LoadSpec spec(const std::string& table, const std::string& label, bool unique = true) {
  LoadSpec s;
  s.db = kDb;
  s.table = table;
  s.label = label;
  s.unique_key = unique;
  return s;
}

std::string rows(int from, int n, bool unique = true) {
  std::string out;
  for (int i = from; i < from + n; ++i) {
    out += "{\"id\":" + std::to_string(i) + ",\"v\":\"value-" + std::to_string(i) + "\"";
    if (unique) out += ",\"__DORIS_DELETE_SIGN__\":0";
    out += "}\n";
  }
  return out;
}

LoadResult load_ok(DorisClient& c, const LoadSpec& s, const std::string& body) {
  auto st = c.open_load(s);
  auto w = st->write(body);
  if (!w) FAIL(w.error().what());
  auto r = st->finish();
  if (!r) FAIL(r.error().what());
  return r.value();
}

DorisError load_err(DorisClient& c, const LoadSpec& s, const std::string& body) {
  auto st = c.open_load(s);
  if (auto w = st->write(body); !w) {
    st->cancel();
    return w.error();
  }
  auto r = st->finish();
  if (r.has_value()) FAIL("load unexpectedly succeeded");
  return r.error();
}

TxnOutcome outcome(const TxnResult& r) {
  if (!r) FAIL(r.error().what());
  return r.value();
}

DorisError error(const TxnResult& r) {
  if (r.has_value()) FAIL(std::string("unexpected outcome ") + to_string(r.value()));
  return r.error();
}

bool is_be(const std::string& ep) {
  for (auto& b : emu().bes())
    if (b == ep) return true;
  return false;
}

}  // namespace

TEST_CASE("emulator: load through the FE redirect, commit, rows visible", "[doris][emulator]") {
  create_table("t_redirect");
  auto client = make_client(config());
  auto r = load_ok(*client, spec("t_redirect", "redirect_1"), rows(0, 1000));
  CHECK(r.txn_id > 0);
  CHECK(r.loaded_rows == 1000);
  CHECK(is_be(r.endpoint));
  CHECK(emu().rows(kDb, "t_redirect").empty());  // PRECOMMITTED: invisible
  CHECK(outcome(client->commit(kDb, r.txn_id)) == TxnOutcome::Done);
  CHECK(emu().rows(kDb, "t_redirect").size() == 1000);
}

TEST_CASE("emulator: direct BE list, gzip body", "[doris][emulator]") {
  create_table("t_direct");
  auto cfg = config(Route::DirectBe);
  cfg.backends = {emu().bes()[1]};
  cfg.gzip = true;
  auto client = make_client(cfg);
  auto r = load_ok(*client, spec("t_direct", "direct_1"), rows(0, 5000));
  CHECK(r.endpoint == emu().bes()[1]);
  CHECK(r.loaded_rows == 5000);
  CHECK(r.body_bytes < r.raw_bytes / 3);
  CHECK(outcome(client->commit(kDb, r.txn_id)) == TxnOutcome::Done);
  auto got = emu().rows(kDb, "t_direct");
  REQUIRE(got.size() == 5000);
}

TEST_CASE("emulator: BE discovery and rotation away from an offline BE", "[doris][emulator]") {
  create_table("t_rotate");
  auto cfg = config(Route::DirectBe);
  cfg.discovery_interval = 600s;  // the cached list still names the BE that goes away
  auto client = make_client(cfg);
  // Discover all three, then take BE 0 offline.
  load_ok(*client, spec("t_rotate", "rotate_warm"), rows(0, 1));
  emu().fault(R"({"type":"be_offline","be":0})");
  std::set<std::string> used;
  for (int i = 0; i < 6; ++i) {
    auto r = load_ok(*client, spec("t_rotate", "rotate_" + std::to_string(i)), rows(i * 10, 10));
    used.insert(r.endpoint);
    CHECK(outcome(client->commit(kDb, r.txn_id)) == TxnOutcome::Done);
  }
  emu().fault(R"({"type":"be_online","be":0})");
  CHECK_FALSE(used.count(emu().bes()[0]));
  CHECK(used.size() == 2);  // rotation over the remaining BEs
  CHECK(emu().rows(kDb, "t_rotate").size() == 60);
}

TEST_CASE("emulator: connection reset after K bytes", "[doris][emulator]") {
  create_table("t_reset");
  auto client = make_client(config());
  emu().fault(R"({"type":"reset_after_bytes","bytes":200000,"table":"t_reset"})");
  auto e = load_err(*client, spec("t_reset", "reset_1"), rows(0, 20000));
  CHECK(e.kind() == ErrorKind::Transport);
  CHECK(e.disposition() == Disposition::Retry);
  CHECK(e.context().label == "reset_1");
  CHECK(is_be(e.context().endpoint));
  // The pipeline's reaction: abort by label, retry with the same label.
  auto a = client->abort_by_label(kDb, "reset_1");
  REQUIRE(a.has_value());
  auto r = load_ok(*client, spec("t_reset", "reset_1"), rows(0, 100));
  CHECK(outcome(client->commit(kDb, r.txn_id)) == TxnOutcome::Done);
  CHECK(emu().rows(kDb, "t_reset").size() == 100);
}

TEST_CASE("emulator: delayed 100-continue", "[doris][emulator]") {
  create_table("t_delay");
  auto client = make_client(config());
  emu().fault(R"({"type":"delay_continue","ms":800,"table":"t_delay"})");
  auto t0 = std::chrono::steady_clock::now();
  auto r = load_ok(*client, spec("t_delay", "delay_1"), rows(0, 100));
  CHECK(std::chrono::steady_clock::now() - t0 >= 800ms);
  CHECK(r.loaded_rows == 100);
}

TEST_CASE("emulator: label already exists RUNNING / PRECOMMITTED / FINISHED", "[doris][emulator]") {
  create_table("t_label");
  auto client = make_client(config());

  // RUNNING: a first stream holds the label in PREPARE.
  auto first = client->open_load(spec("t_label", "lbl_a"));
  REQUIRE(first->write(rows(0, 10)));
  std::this_thread::sleep_for(300ms);  // headers reached the BE: txn begun
  auto e = load_err(*client, spec("t_label", "lbl_a"), rows(0, 10));
  CHECK(e.kind() == ErrorKind::LabelExists);
  REQUIRE(e.existing_label);
  CHECK(e.existing_label->state == LabelState::Running);
  CHECK(e.existing_label->txn_id.has_value());
  CHECK(e.disposition() == Disposition::Retry);
  auto probe = client->probe_label(spec("t_label", "lbl_a"));
  REQUIRE(probe.has_value());
  CHECK(probe->state == LabelState::Running);
  // commit of a txn that is still PREPARE is retryable
  auto prep = client->commit(kDb, *e.existing_label->txn_id);
  CHECK(error(prep).kind() == ErrorKind::TxnNotPrecommitted);
  auto r1 = first->finish();
  REQUIRE(r1.has_value());
  const int64_t txn = r1->txn_id;
  CHECK(txn == *e.existing_label->txn_id);

  // PRECOMMITTED
  e = load_err(*client, spec("t_label", "lbl_a"), rows(0, 10));
  REQUIRE(e.existing_label);
  CHECK(e.existing_label->state == LabelState::Precommitted);
  CHECK(e.existing_label->txn_id == txn);
  CHECK(e.context().txn_id == txn);

  // FINISHED
  CHECK(outcome(client->commit(kDb, txn)) == TxnOutcome::Done);
  e = load_err(*client, spec("t_label", "lbl_a"), rows(0, 10));
  REQUIRE(e.existing_label);
  CHECK(e.existing_label->state == LabelState::Finished);
  CHECK(e.disposition() == Disposition::Fail);
  probe = client->probe_label(spec("t_label", "lbl_a"));
  REQUIRE(probe.has_value());
  CHECK(probe->state == LabelState::Finished);
  CHECK(probe->txn_id == txn);
}

TEST_CASE("emulator: label probe of an unused label aborts its own txn", "[doris][emulator]") {
  create_table("t_probe");
  auto client = make_client(config());
  auto p = client->probe_label(spec("t_probe", "probe_free"));
  REQUIRE(p.has_value());
  CHECK(p->state == LabelState::Unused);
  // Still unused afterwards: the probe's txn was aborted, the label is free.
  auto r = load_ok(*client, spec("t_probe", "probe_free"), rows(0, 3));
  CHECK(outcome(client->commit(kDb, r.txn_id)) == TxnOutcome::Done);
  CHECK(emu().rows(kDb, "t_probe").size() == 3);
}

TEST_CASE("emulator: publish timeout is success", "[doris][emulator]") {
  create_table("t_publish");
  auto client = make_client(config());
  emu().fault(R"({"type":"publish_timeout","table":"t_publish","visible_after_ms":300})");
  auto s = spec("t_publish", "publish_1");
  s.two_phase_commit = false;  // Doris reports it on the commit of a non-2PC load
  auto r = load_ok(*client, s, rows(0, 5));
  CHECK(r.publish_timeout);
  CHECK(r.status == "Publish Timeout");
}

TEST_CASE("emulator: data-quality failure carries the error log", "[doris][emulator]") {
  create_table("t_quality", "id INT, v INT NOT NULL");
  auto client = make_client(config());
  std::string body = "{\"id\":1,\"v\":1,\"__DORIS_DELETE_SIGN__\":0}\n{\"id\":2,\"v\":null,\"__DORIS_DELETE_SIGN__\":0}\n"
                     "{\"id\":3,\"v\":null,\"__DORIS_DELETE_SIGN__\":0}\n";
  auto e = load_err(*client, spec("t_quality", "quality_1"), body);
  CHECK(e.kind() == ErrorKind::DataQuality);
  CHECK(e.disposition() == Disposition::Fail);
  CHECK(e.context().doris_message.find("DATA_QUALITY_ERROR") != std::string::npos);
  CHECK_FALSE(e.error_url.empty());
  REQUIRE(e.error_log.size() == 2);
  // Doris' tablet sink names the column, not the row: an empty src line
  // (vtablet_block_convertor.cpp, _internal_validate_column).
  CHECK(e.error_log[0].find("column_name[v], null value for not null column") != std::string::npos);
  CHECK(e.error_log[0].find("src line []") != std::string::npos);
  // Within max_filter_ratio the load succeeds and reports the filtered rows.
  auto s = spec("t_quality", "quality_2");
  s.headers["max_filter_ratio"] = "0.9";
  auto r = load_ok(*client, s, body);
  CHECK(r.filtered_rows == 2);
  CHECK(r.loaded_rows == 1);
  CHECK_FALSE(r.error_url.empty());
}

TEST_CASE("emulator: auth failure and unknown table are fatal", "[doris][emulator]") {
  create_table("t_fatal");
  auto bad = config();
  bad.password = "wrong-password";
  auto client = make_client(bad);
  auto e = load_err(*client, spec("t_fatal", "fatal_1"), rows(0, 1));
  CHECK(e.kind() == ErrorKind::Auth);
  CHECK(e.disposition() == Disposition::Fatal);
  CHECK(e.what().find("wrong-password") == std::string::npos);
  auto direct = config(Route::DirectBe);
  direct.password = "wrong-password";
  direct.backends = {emu().bes()[0]};
  e = load_err(*make_client(direct), spec("t_fatal", "fatal_2"), rows(0, 1));
  CHECK(e.kind() == ErrorKind::Auth);
  CHECK(error(client->commit(kDb, 1)).kind() == ErrorKind::Auth);

  auto good = make_client(config());
  e = load_err(*good, spec("no_such_table", "fatal_3"), rows(0, 1));
  CHECK(e.kind() == ErrorKind::UnknownTable);
  CHECK(e.disposition() == Disposition::Fatal);
  auto db = spec("t_fatal", "fatal_4");
  db.db = "no_such_db";
  e = load_err(*good, db, rows(0, 1));
  CHECK(e.kind() == ErrorKind::UnknownTable);
  CHECK(error(good->commit("no_such_db", 1)).kind() == ErrorKind::UnknownTable);
}

TEST_CASE("emulator: every 2PC answer", "[doris][emulator]") {
  create_table("t_2pc");
  auto client = make_client(config());
  auto a = load_ok(*client, spec("t_2pc", "tpc_a"), rows(0, 1));
  auto b = load_ok(*client, spec("t_2pc", "tpc_b"), rows(1, 1));
  auto c = load_ok(*client, spec("t_2pc", "tpc_c"), rows(2, 1));
  auto d = load_ok(*client, spec("t_2pc", "tpc_d"), rows(3, 1));

  CHECK(outcome(client->commit(kDb, a.txn_id)) == TxnOutcome::Done);
  CHECK(outcome(client->commit(kDb, a.txn_id)) == TxnOutcome::AlreadyDone);  // already visible
  auto ac = client->abort(kDb, a.txn_id);                                      // committed: cannot abort
  CHECK(error(ac).kind() == ErrorKind::AlreadyCommitted);
  CHECK(error(ac).context().txn_id == a.txn_id);

  CHECK(outcome(client->abort(kDb, b.txn_id)) == TxnOutcome::Done);
  CHECK(outcome(client->abort(kDb, b.txn_id)) == TxnOutcome::AlreadyDone);         // already aborted
  CHECK(outcome(client->commit(kDb, b.txn_id)) == TxnOutcome::Aborted);  // aborted (known): replay

  CHECK(outcome(client->commit(kDb, 987654321)) == TxnOutcome::NotFoundOrAborted);  // unknown
  CHECK(outcome(client->abort(kDb, 987654321)) == TxnOutcome::NotFoundOrAborted);

  CHECK(outcome(client->commit_by_label(kDb, "tpc_c")) == TxnOutcome::Done);
  CHECK(error(client->commit_by_label(kDb, "tpc_c")).kind() == ErrorKind::LabelNotRunning);
  CHECK(outcome(client->commit_by_label(kDb, "never_used")) == TxnOutcome::NotFoundOrAborted);
  CHECK(outcome(client->abort_by_label(kDb, "never_used")) == TxnOutcome::NotFoundOrAborted);

  // Pre-commit expired while "the daemon was down" -> replay.
  emu().fault(R"({"type":"expire_precommitted"})");
  CHECK(outcome(client->commit(kDb, d.txn_id)) == TxnOutcome::Aborted);

  // An injected commit failure is retried inside the client.
  auto e = load_ok(*client, spec("t_2pc", "tpc_e"), rows(4, 1));
  emu().fault(R"({"type":"fail_commit","table":"t_2pc","status":"INTERNAL_ERROR","message":"rpc failed"})");
  CHECK(outcome(client->commit(kDb, e.txn_id)) == TxnOutcome::Done);
  // ... and a commit that was applied but whose answer was lost reads as already done.
  auto f = load_ok(*client, spec("t_2pc", "tpc_f"), rows(5, 1));
  emu().fault(R"({"type":"fail_commit","table":"t_2pc","apply":true,"reset":true})");
  CHECK(outcome(client->commit(kDb, f.txn_id)) == TxnOutcome::AlreadyDone);
  CHECK(emu().rows(kDb, "t_2pc").size() == 4);  // a, c, e, f
}

TEST_CASE("emulator: retryable load failures", "[doris][emulator]") {
  create_table("t_retry");
  auto client = make_client(config());
  emu().fault(R"({"type":"running_txn_limit","table":"t_retry"})");
  auto e = load_err(*client, spec("t_retry", "retry_1"), rows(0, 1));
  CHECK(e.kind() == ErrorKind::TxnLimit);
  CHECK(e.disposition() == Disposition::Retry);
  emu().fault(R"({"type":"too_many_versions","table":"t_retry"})");
  e = load_err(*client, spec("t_retry", "retry_2"), rows(0, 1));
  CHECK(e.kind() == ErrorKind::TooManyVersions);
  CHECK(e.disposition() == Disposition::Retry);
}

TEST_CASE("emulator: many streams open at once, commits in parallel", "[doris][emulator]") {
  create_table("t_many");
  auto client = make_client(config());
  std::vector<std::unique_ptr<LoadStream>> streams;
  for (int i = 0; i < 50; ++i) {
    streams.push_back(client->open_load(spec("t_many", "many_" + std::to_string(i))));
    REQUIRE(streams.back()->write(rows(i * 10, 10)));
  }
  std::vector<std::future<TxnResult>> commits;
  for (auto& s : streams) {
    auto r = s->finish();
    REQUIRE(r.has_value());
    commits.push_back(client->commit_async(kDb, r->txn_id));
  }
  for (auto& f : commits) CHECK(outcome(f.get()) == TxnOutcome::Done);
  CHECK(emu().rows(kDb, "t_many").size() == 500);
}

TEST_CASE("emulator: schema and SQL helpers", "[doris][emulator]") {
  create_table("t_meta", "id INT, v DECIMAL(10,2)");
  auto client = make_client(config());
  auto s = client->schema(kDb, "t_meta");
  if (!s) FAIL(s.error().what());
  auto& ts = *s;
  CHECK(ts.keys_type == "UNIQUE_KEYS");
  REQUIRE(ts.columns.size() == 2);
  CHECK(ts.columns[0].name == "id");
  auto missing = client->schema(kDb, "nope");
  REQUIRE(!missing.has_value());
  auto q = client->sql(kDb, "SHOW TABLES");
  if (!q) FAIL(q.error().what());
  bool found = false;
  for (auto& row : q->rows)
    for (auto& cell : row) found |= cell && *cell == "t_meta";
  CHECK(found);
}

TEST_CASE("emulator: response and request timeouts", "[doris][emulator]") {
  create_table("t_timeout");
  auto cfg = config();
  cfg.timeouts.response = 500ms;
  cfg.timeouts.request = 500ms;
  auto client = make_client(cfg);
  emu().fault(R"({"type":"delay_response","ms":2000,"table":"t_timeout"})");
  auto t0 = std::chrono::steady_clock::now();
  auto e = load_err(*client, spec("t_timeout", "timeout_1"), rows(0, 10));
  CHECK(e.kind() == ErrorKind::Timeout);
  CHECK(e.disposition() == Disposition::Retry);
  CHECK(std::chrono::steady_clock::now() - t0 < 1900ms);
  std::this_thread::sleep_for(2s);  // let the delayed load finish on the emulator side
  REQUIRE(client->abort_by_label(kDb, "timeout_1").has_value());

  // A commit whose answer is late: the attempt times out, the retry finds it
  // committed or commits it; either way the outcome is success.
  auto r = load_ok(*client, spec("t_timeout", "timeout_2"), rows(0, 10));
  emu().fault(std::string(R"({"type":"delay_commit","ms":1500,"db":")") + kDb + "\"}");
  auto c = outcome(client->commit(kDb, r.txn_id));
  CHECK((c == TxnOutcome::Done || c == TxnOutcome::AlreadyDone));
  std::this_thread::sleep_for(1600ms);
  CHECK(emu().rows(kDb, "t_timeout").size() == 10);
}
