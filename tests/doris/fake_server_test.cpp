// The client against a scriptable local server: TLS, exact wire behaviour
// (early answers, delayed 100-continue, resets, slow readers), credentials
// handling, keep-alive, failover, discovery, shutdown. The emulator-based
// suite (emulator_test.cpp) covers Doris semantics end to end.
#include <catch2/catch.hpp>
#include <condition_variable>
#include <future>
#include <mutex>
#include <thread>

#include "core/doris/client.hpp"
#include "core/doris/gzip.hpp"
#include "tests/doris/fake_server.hpp"
#include "tools/fixtures/temp_dir.hpp"

using namespace cdc2doris;
using namespace cdc2doris::doris;
using namespace cdc2doris::test;
using namespace std::chrono_literals;

namespace {

const std::string kPassword = "s3cret-pw";

std::string load_json(const std::string& status, const std::string& msg, long txn, const std::string& extra = "") {
  return "{\n    \"TxnId\": " + std::to_string(txn) + ",\n    \"Label\": \"l1\",\n    \"TwoPhaseCommit\": \"true\",\n" +
         "    \"Status\": \"" + status + "\",\n" + extra + "    \"Message\": \"" + msg +
         "\",\n    \"NumberTotalRows\": 2,\n    \"NumberLoadedRows\": 2,\n    \"NumberFilteredRows\": 0,\n"
         "    \"LoadBytes\": 10\n}\n";
}
std::string twopc_json(const std::string& status, const std::string& msg) {
  return "{\"status\": \"" + status + "\", \"msg\": \"" + msg + "\"}";
}
FakeReply ok(std::string body) { return FakeReply{200, std::move(body), {}, false}; }

ClientConfig config(std::vector<std::string> fes) {
  ClientConfig c;
  c.fe_urls = std::move(fes);
  c.user = "root";
  c.password = kPassword;
  c.timeouts.connect = 2s;
  c.timeouts.request = 5s;
  c.timeouts.expect_continue = 5s;
  c.timeouts.response = 10s;
  c.retry.max_attempts = 2;
  c.retry.backoff.base = 10ms;
  c.retry.backoff.cap = 50ms;
  c.endpoint_quarantine = 200ms;
  return c;
}

// Streams straight to `be` (no FE redirect) with a small buffer and chunk,
// so backpressure is reached quickly.
std::unique_ptr<DorisClient> direct_be_client(const FakeServer& be, size_t buffer_bytes, size_t chunk_bytes) {
  auto cfg = config({"http://127.0.0.1:1"});
  cfg.route = Route::DirectBe;
  cfg.backends = {be.host_port()};
  cfg.buffer_bytes = buffer_bytes;
  cfg.chunk_bytes = chunk_bytes;
  return make_client(cfg);
}

LoadSpec spec(const std::string& label = "l1") {
  LoadSpec s;
  s.db = "db1";
  s.table = "t1";
  s.label = label;
  s.unique_key = true;
  return s;
}

std::string rows(size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) out += "{\"id\":" + std::to_string(i) + ",\"v\":\"some value\",\"__DORIS_DELETE_SIGN__\":0}\n";
  return out;
}

std::string basic_auth() {
  // base64("root:s3cret-pw")
  return "Basic cm9vdDpzM2NyZXQtcHc=";
}

}  // namespace

TEST_CASE("TLS FE: CA file verifies, unknown CA is refused, verification can be switched off", "[doris][tls]") {
  TempDir dir;
  auto files = make_self_signed(dir.path());
  FakeScript fs;
  fs.on_request = [](const FakeRequest& r) {
    if (r.target == "/api/db1/_stream_load_2pc" && r.header("txn_operation") == "commit" &&
        r.header("authorization") == basic_auth())
      return ok(twopc_json("Success", "transaction [" + r.header("txn_id") + "] commit successfully."));
    return ok(twopc_json("FAILED", "unexpected"));
  };
  FakeServer fe(fs, files);

  SECTION("verified with the CA file (IP SAN)") {
    auto cfg = config({fe.url()});
    cfg.tls.ca_file = files.cert.string();
    auto client = make_client(cfg);
    auto r = client->commit("db1", 5);
    REQUIRE(r.has_value());
    CHECK(r.value() == TxnOutcome::Done);
  }
  SECTION("verified by host name") {
    auto cfg = config({"https://localhost:" + std::to_string(fe.port())});
    cfg.tls.ca_file = files.cert.string();
    auto r = make_client(cfg)->commit("db1", 6);
    REQUIRE(r.has_value());
  }
  SECTION("unknown CA is a retryable transport error") {
    auto cfg = config({fe.url()});
    cfg.retry.max_attempts = 1;
    auto r = make_client(cfg)->commit("db1", 5);
    REQUIRE(!r.has_value());
    auto& e = r.error();
    CHECK(e.kind() == ErrorKind::Transport);
    CHECK(e.disposition() == Disposition::Retry);
    CHECK(e.context().endpoint == fe.host_port());
  }
  SECTION("verify_peer=false accepts it") {
    auto cfg = config({fe.url()});
    cfg.tls.verify_peer = false;
    auto r = make_client(cfg)->commit("db1", 5);
    REQUIRE(r.has_value());
  }
}

TEST_CASE("TLS FE redirects the load to a plain BE, data-quality error carries the error log, no password leaks",
          "[doris][tls][redirect]") {
  TempDir dir;
  auto files = make_self_signed(dir.path());
  std::string be_addr;
  FakeScript bs;
  bs.on_header = [&](const FakeRequest& r) -> std::optional<FakeReply> {
    if (r.header("authorization") != basic_auth()) return ok(load_json("Fail", "[NOT_AUTHORIZED]no valid Basic authorization", -1));
    return std::nullopt;
  };
  bs.on_request = [&](const FakeRequest& r) {
    if (r.method == "GET" && r.target.starts_with("/api/_load_error_log"))
      return ok("Reason: column(v) value is incorrect. src line [{\"id\":1}]\nReason: null in not null column. "
                "src line [{\"id\":2}]\nthird\n");
    return ok(load_json("Fail", "[DATA_QUALITY_ERROR]too many filtered rows", 42,
                        "    \"ErrorURL\": \"http://" + be_addr + "/api/_load_error_log?file=__shard_1/error_log_x\",\n"));
  };
  FakeServer be(bs);
  be_addr = be.host_port();
  FakeScript fs;
  fs.on_header = [&](const FakeRequest& r) -> std::optional<FakeReply> {
    FakeReply rep{307, "", {{"Location", "http://root:" + kPassword + "@" + be_addr + r.target + "?"}}, false};
    return rep;
  };
  FakeServer fe(fs, files);

  auto cfg = config({fe.url()});
  cfg.tls.ca_file = files.cert.string();
  cfg.error_log_lines = 2;
  auto client = make_client(cfg);
  auto stream = client->open_load(spec());
  REQUIRE(stream->write(rows(100)));
  auto r = stream->finish();
  REQUIRE(!r.has_value());
  auto& e = r.error();
  CHECK(e.kind() == ErrorKind::DataQuality);
  CHECK(e.disposition() == Disposition::Fail);
  CHECK(e.context().txn_id == 42);
  CHECK(e.context().endpoint == be_addr);
  CHECK(e.context().table == "db1.t1");
  REQUIRE(e.error_log.size() == 2);
  CHECK(e.error_log[0].find("column(v) value is incorrect") != std::string::npos);
  // Quoted in the message too, so copies of the error (log, /status, the fatal stop) show them.
  INFO(e.what());
  CHECK(e.what().find("; Doris rejected (first lines behind ErrorURL): "
                      "[Reason: column(v) value is incorrect. src line [{\"id\":1}]] "
                      "[Reason: null in not null column. src line [{\"id\":2}]]") != std::string::npos);
  const Error copy = e;  // sliced, as the pipeline keeps it
  CHECK(copy.what().find("null in not null column") != std::string::npos);
  CHECK(e.what().find(kPassword) == std::string::npos);
  CHECK(e.error_url.find(kPassword) == std::string::npos);
  // The BE got the whole body, the FE none of it; the credentials were re-sent.
  auto reqs = be.requests();
  REQUIRE(reqs.size() >= 1);
  CHECK(reqs[0].body == rows(100));
  CHECK(reqs[0].header("label") == "l1");
  CHECK(reqs[0].header("two_phase_commit") == "true");
  CHECK(reqs[0].header("hidden_columns") == "__DORIS_DELETE_SIGN__");
  CHECK(reqs[0].header("format") == "json");
  CHECK(reqs[0].header("read_json_by_line") == "true");
  CHECK(reqs[0].header("transfer-encoding") == "chunked");
  CHECK(reqs[0].target == "/api/db1/t1/_stream_load?");
  CHECK_FALSE(fe.requests().at(0).body_read);
}

TEST_CASE("early final answer: label exists, the body is never sent", "[doris][expect]") {
  FakeScript bs;
  bs.on_header = [](const FakeRequest&) -> std::optional<FakeReply> {
    return ok(load_json("Label Already Exists",
                        "[LABEL_ALREADY_EXISTS]TStatus: errCode = 2, detailMessage = Label [l1] has already been used, "
                        "relate to txn [31]",
                        -1, "    \"ExistingJobStatus\": \"PRECOMMITTED\",\n"));
  };
  FakeServer be(bs);
  auto cfg = config({"http://127.0.0.1:1"});  // FE unused
  cfg.route = Route::DirectBe;
  cfg.backends = {be.host_port()};
  auto client = make_client(cfg);
  auto stream = client->open_load(spec());
  std::optional<DorisError> err;
  // Keep writing until the early answer surfaces through write().
  for (int i = 0; i < 200 && !err; ++i) {
    if (auto w = stream->write(rows(1000)); !w) err = w.error();
    if (!err) std::this_thread::sleep_for(5ms);
  }
  REQUIRE(err);
  CHECK(err->kind() == ErrorKind::LabelExists);
  REQUIRE(err->existing_label);
  CHECK(err->existing_label->state == LabelState::Precommitted);
  CHECK(err->existing_label->txn_id == 31);
  CHECK(err->disposition() == Disposition::Retry);
  auto r = stream->finish();
  REQUIRE(!r.has_value());
  CHECK(r.error().kind() == ErrorKind::LabelExists);
  auto reqs = be.requests();
  REQUIRE(reqs.size() == 1);
  CHECK_FALSE(reqs[0].body_read);
}

TEST_CASE("delayed 100-continue, gzip body, result fields", "[doris][expect][gzip]") {
  std::string expected = rows(20000);
  std::string got;
  FakeScript bs;
  bs.continue_delay = 700ms;
  bs.on_request = [&](const FakeRequest& r) {
    auto plain = gunzip(r.body);
    got = plain ? *plain : "<corrupt>";
    if (r.header("compress_type") != "gz") got = "<no compress_type>";
    return ok(load_json("Success", "OK", 77));
  };
  FakeServer be(bs);
  auto cfg = config({"http://127.0.0.1:1"});
  cfg.route = Route::DirectBe;
  cfg.backends = {be.host_port()};
  cfg.gzip = true;
  auto client = make_client(cfg);
  auto stream = client->open_load(spec());
  auto t0 = std::chrono::steady_clock::now();
  for (size_t off = 0; off < expected.size(); off += 4096)
    REQUIRE(stream->write(std::string_view(expected).substr(off, 4096)));
  auto r = stream->finish();
  REQUIRE(r.has_value());
  auto& res = *r;
  CHECK(std::chrono::steady_clock::now() - t0 >= 700ms);
  CHECK(res.txn_id == 77);
  CHECK(res.status == "Success");
  CHECK(res.loaded_rows == 2);
  CHECK(res.raw_bytes == expected.size());
  CHECK(res.body_bytes < res.raw_bytes / 3);
  CHECK(res.endpoint == be.host_port());
  CHECK(got == expected);
}

TEST_CASE("connection reset after K bytes is a retryable transport error", "[doris][reset]") {
  FakeScript bs;
  bs.reset_after = 256 * 1024;
  bs.on_request = [](const FakeRequest&) { return ok(load_json("Success", "OK", 1)); };
  FakeServer be(bs);
  auto cfg = config({"http://127.0.0.1:1"});
  cfg.route = Route::DirectBe;
  cfg.backends = {be.host_port()};
  auto client = make_client(cfg);
  auto stream = client->open_load(spec());
  std::optional<DorisError> err;
  std::string chunk = rows(2000);
  for (int i = 0; i < 500 && !err; ++i)
    if (auto w = stream->write(chunk); !w) err = w.error();
  if (!err) {
    auto r = stream->finish();
    REQUIRE(!r.has_value());
    err = r.error();
  }
  CHECK(err->kind() == ErrorKind::Transport);
  CHECK(err->disposition() == Disposition::Retry);
  CHECK(err->context().endpoint == be.host_port());
  CHECK(err->context().label == "l1");
}

TEST_CASE("backpressure: write blocks while the buffer is full", "[doris][backpressure]") {
  FakeScript bs;
  bs.read_delay = 5ms;
  bs.on_request = [](const FakeRequest& r) { return ok(load_json("Success", "OK", 2, "")); (void)r; };
  FakeServer be(bs);
  auto client = direct_be_client(be, 128 * 1024, 32 * 1024);
  auto stream = client->open_load(spec());
  std::string piece = rows(50);
  size_t max_buffered = 0, total = 0;
  auto t0 = std::chrono::steady_clock::now();
  // More than loopback socket buffers can absorb (several MiB each way).
  while (total < 24 * 1024 * 1024) {
    REQUIRE(stream->write(piece));
    total += piece.size();
    max_buffered = std::max(max_buffered, stream->buffered_bytes());
  }
  auto elapsed = std::chrono::steady_clock::now() - t0;
  auto r = stream->finish();
  REQUIRE(r.has_value());
  CHECK(max_buffered <= 128 * 1024);
  // 24 MiB at ~64 KiB per 5 ms takes ~1.9 s; kernel buffers hide at most ~half of it.
  CHECK(elapsed >= 500ms);
  CHECK(be.requests().at(0).body.size() == total);
}

TEST_CASE("the body waits in the buffer until a quarter of it is queued, then goes out before finish",
          "[doris][backpressure]") {
  // Each wake of the I/O thread costs the writer a post, a reactor interrupt
  // and, on a busy machine, a preemption; so it is woken per quarter buffer,
  // not per chunk (issue 18). Nothing may wait for finish() beyond that.
  FakeScript bs;
  bs.on_request = [](const FakeRequest&) { return ok(load_json("Success", "OK", 2, "")); };
  FakeServer be(bs);
  auto client = direct_be_client(be, 1024 * 1024, 16 * 1024);  // wakes at 256 KiB queued
  auto stream = client->open_load(spec());
  const std::string piece(8 * 1024, 'x');
  std::string expected;
  auto write = [&](size_t bytes) {
    for (size_t n = 0; n < bytes; n += piece.size()) {
      REQUIRE(stream->write(piece));
      expected += piece;
    }
  };
  write(8 * 1024);  // opens the load; no chunk is full yet
  std::this_thread::sleep_for(300ms);  // the I/O coroutine has sent the header and sleeps
  write(120 * 1024);  // 8 chunks queued: under a quarter
  std::this_thread::sleep_for(300ms);
  CHECK(be.body_bytes_read() == 0);  // the fake counts per 64 KiB read: a chunk-wise wake shows here
  write(128 * 1024);  // 16 chunks: a quarter, the I/O coroutine is woken
  auto deadline = std::chrono::steady_clock::now() + 10s;
  // All 256 KiB are sent; the fake has counted all but its last 64 KiB read.
  while (be.body_bytes_read() < 192 * 1024 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(5ms);
  CHECK(be.body_bytes_read() >= 192 * 1024);
  auto r = stream->finish();  // sends the rest, also what is under the threshold
  REQUIRE(r.has_value());
  CHECK(be.requests().at(0).body == expected);
}

TEST_CASE("end_body on every stream, then finish on each: the answers are awaited together", "[doris][end_body]") {
  // Each BE answer waits until all five bodies have arrived: finishing the
  // loads one by one (body end, answer, next) would never get there.
  constexpr int kStreams = 5;
  std::mutex m;
  std::condition_variable cv;
  int arrived = 0;
  FakeScript bs;
  bs.on_request = [&](const FakeRequest&) {
    std::unique_lock lk(m);
    ++arrived;
    cv.notify_all();
    if (!cv.wait_for(lk, 10s, [&] { return arrived >= kStreams; }))
      return FakeReply{500, "only " + std::to_string(arrived) + " bodies arrived together", {}, true};
    return ok(load_json("Success", "OK", 2, ""));
  };
  FakeServer be(bs);
  auto client = direct_be_client(be, 1024 * 1024, 64 * 1024);
  std::vector<std::unique_ptr<LoadStream>> streams;
  for (int i = 0; i < kStreams; ++i) {
    streams.push_back(client->open_load(spec("l" + std::to_string(i))));
    REQUIRE(streams.back()->write(rows(2)));
  }
  for (auto& s : streams) REQUIRE(s->end_body());
  for (auto& s : streams) {
    auto r = s->finish();
    REQUIRE(r.has_value());
  }
  REQUIRE(be.requests().size() == kStreams);
  for (const auto& r : be.requests()) CHECK(r.body == rows(2));

  // After end_body: a second call changes nothing, a write is refused.
  auto extra = client->open_load(spec("extra"));
  REQUIRE(extra->write(rows(2)));
  REQUIRE(extra->end_body());
  CHECK(extra->end_body());
  auto refused = extra->write(rows(1));
  REQUIRE_FALSE(refused);
  CHECK_THAT(refused.error().what(), Catch::Matchers::Contains("write after the body ended"));
  REQUIRE(extra->finish().has_value());
  CHECK(be.requests().back().body == rows(2));
}

TEST_CASE("cancel abandons the load and closes the connection", "[doris][cancel]") {
  FakeScript bs;
  bs.on_request = [](const FakeRequest&) { return ok(load_json("Success", "OK", 3)); };
  FakeServer be(bs);
  auto cfg = config({"http://127.0.0.1:1"});
  cfg.route = Route::DirectBe;
  cfg.backends = {be.host_port()};
  auto client = make_client(cfg);
  auto stream = client->open_load(spec());
  REQUIRE(stream->write(rows(5000)));
  std::this_thread::sleep_for(100ms);
  stream->cancel();
  auto e = stream->write("x\n");
  REQUIRE_FALSE(e);
  CHECK(e.error().kind() == ErrorKind::Cancelled);
  auto r = stream->finish();
  REQUIRE(!r.has_value());
  // The BE saw the body end without a final chunk: no completed request.
  for (int i = 0; i < 50 && !be.requests().empty(); ++i) std::this_thread::sleep_for(10ms);
  CHECK(be.requests().empty());
}

TEST_CASE("destroying the client fails a blocked finish with Shutdown", "[doris][shutdown]") {
  std::promise<void> release;
  auto released = release.get_future().share();
  FakeScript bs;
  bs.on_request = [released](const FakeRequest&) {
    released.wait_for(5s);  // a BE stuck in pre-commit
    return ok(load_json("Success", "OK", 4));
  };
  FakeServer be(bs);
  auto cfg = config({"http://127.0.0.1:1"});
  cfg.route = Route::DirectBe;
  cfg.backends = {be.host_port()};
  auto client = make_client(cfg);
  auto stream = client->open_load(spec());
  REQUIRE(stream->write(rows(10)));
  auto fut = std::async(std::launch::async, [&] { return stream->finish(); });
  std::this_thread::sleep_for(300ms);
  auto t0 = std::chrono::steady_clock::now();
  client.reset();
  REQUIRE(fut.wait_for(3s) == std::future_status::ready);
  auto r = fut.get();
  CHECK(std::chrono::steady_clock::now() - t0 < 2s);
  REQUIRE(!r.has_value());
  CHECK(r.error().kind() == ErrorKind::Shutdown);
  // The stream outlives its client safely.
  CHECK_FALSE(stream->write("x\n"));
  CHECK(stream->buffered_bytes() == 0);
  release.set_value();
}

TEST_CASE("2PC through the FE redirect: idempotent outcomes, keep-alive reuse", "[doris][2pc]") {
  std::string be_addr;
  FakeScript bs;
  bs.on_request = [](const FakeRequest& r) {
    const std::string op = r.header("txn_operation"), id = r.header("txn_id"), label = r.header("label");
    const std::string p = "TStatus: errCode = 2, detailMessage = ";
    if (op == "commit" && id == "1") return ok(twopc_json("Success", "transaction [1] commit successfully."));
    if (op == "commit" && id == "2") return ok(twopc_json("ANALYSIS_ERROR", p + "transaction [2] is already visible, not pre-committed."));
    if (op == "commit" && id == "3") return ok(twopc_json("ANALYSIS_ERROR", p + "transaction [3] is already aborted. abort reason: timeout by txn manager"));
    if (op == "abort" && id == "4") return ok(twopc_json("ANALYSIS_ERROR", p + "transaction [4] is already aborted, abort reason: User Abort"));
    if (op == "abort" && id == "5") return ok(twopc_json("ANALYSIS_ERROR", p + "transaction [5] is already COMMITTED, could not abort."));
    if (op == "abort" && label == "gone") return ok(twopc_json("ANALYSIS_ERROR", p + "transaction not found, label=gone"));
    if (op == "commit" && label == "lbl") return ok(twopc_json("Success", "label [lbl] commit successfully."));
    return ok(twopc_json("INTERNAL_ERROR", "unexpected"));
  };
  FakeServer be(bs);
  be_addr = be.host_port();
  FakeScript fs;
  fs.on_header = [&](const FakeRequest& r) -> std::optional<FakeReply> {
    if (r.header("expect").empty()) return ok(twopc_json("FAILED", "There is no 100-continue header"));
    return FakeReply{307, "", {{"Location", "http://root:" + kPassword + "@" + be_addr + r.target}}, false};
  };
  FakeServer fe(fs);
  auto client = make_client(config({fe.url()}));
  auto outcome = [](const TxnResult& r) {
    REQUIRE(r.has_value());
    return r.value();
  };
  CHECK(outcome(client->commit("db1", 1)) == TxnOutcome::Done);
  CHECK(outcome(client->commit("db1", 2)) == TxnOutcome::AlreadyDone);
  // "already aborted" proves the txn never became visible (issue 31: its own outcome).
  CHECK(outcome(client->commit("db1", 3)) == TxnOutcome::Aborted);
  CHECK(outcome(client->abort("db1", 4)) == TxnOutcome::AlreadyDone);
  CHECK(outcome(client->abort_by_label("db1", "gone")) == TxnOutcome::NotFoundOrAborted);
  CHECK(outcome(client->commit_by_label("db1", "lbl")) == TxnOutcome::Done);
  auto r5 = client->abort("db1", 5);
  REQUIRE(!r5.has_value());
  CHECK(r5.error().kind() == ErrorKind::AlreadyCommitted);
  CHECK(r5.error().context().txn_id == 5);
  // Seven sequential operations over one FE and one BE connection.
  CHECK(fe.connections() == 1);
  CHECK(be.connections() == 1);
  CHECK(be.requests().at(0).header("authorization") == basic_auth());
}

TEST_CASE("commits run in parallel", "[doris][2pc]") {
  FakeScript fs;
  fs.on_request = [](const FakeRequest& r) {
    std::this_thread::sleep_for(200ms);
    return ok(twopc_json("Success", "transaction [" + r.header("txn_id") + "] commit successfully."));
  };
  FakeServer fe(fs);
  auto client = make_client(config({fe.url()}));
  std::vector<std::future<TxnResult>> futs;
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 20; ++i) futs.push_back(client->commit_async("db1", 100 + i));
  for (auto& f : futs) {
    auto r = f.get();
    REQUIRE(r.has_value());
  }
  CHECK(std::chrono::steady_clock::now() - t0 < 2s);  // serial would take 4 s
}

TEST_CASE("FE failover: a dead FE is skipped", "[doris][failover]") {
  FakeScript fs;
  fs.on_request = [](const FakeRequest&) { return ok(twopc_json("Success", "transaction [9] abort successfully.")); };
  FakeServer fe(fs);
  int dead_port;
  {
    FakeServer tmp(FakeScript{});
    dead_port = tmp.port();
  }
  auto cfg = config({"http://127.0.0.1:" + std::to_string(dead_port), fe.url()});
  cfg.retry.max_attempts = 3;
  auto client = make_client(cfg);
  auto r = client->abort("db1", 9);
  REQUIRE(r.has_value());
  // The dead FE is quarantined: the next call goes straight to the live one.
  auto r2 = client->abort("db1", 9);
  REQUIRE(r2.has_value());
  CHECK(fe.requests().size() == 2);
}

TEST_CASE("direct BE: discovery, address rewrite, rotation off a dead BE", "[doris][discovery]") {
  FakeScript bs;
  bs.on_request = [](const FakeRequest&) { return ok(load_json("Success", "OK", 11)); };
  FakeServer be(bs);
  int dead_port;
  {
    FakeServer tmp(FakeScript{});
    dead_port = tmp.port();
  }
  FakeScript fs;
  fs.on_request = [](const FakeRequest& r) {
    if (r.target == "/api/backends?is_alive=true" && r.header("authorization") == basic_auth())
      return ok(R"({"msg":"success","code":0,"data":{"backends":[)"
                R"({"ip":"10.254.0.1","http_port":8040,"is_alive":true},)"
                R"({"ip":"10.254.0.2","http_port":8040,"is_alive":true},)"
                R"({"ip":"10.254.0.3","http_port":8040,"is_alive":false}]},"count":0})");
    return FakeReply{404, "Not Found", {}, false};
  };
  FakeServer fe(fs);
  auto cfg = config({fe.url()});
  cfg.route = Route::DirectBe;
  cfg.address_rewrite = {{"10.254.0.1:8040", be.host_port()}, {"10.254.0.2", "127.0.0.1:" + std::to_string(dead_port)}};
  cfg.endpoint_quarantine = 10s;
  cfg.retry.max_attempts = 3;
  auto client = make_client(cfg);
  for (int i = 0; i < 4; ++i) {
    auto s = client->open_load(spec("l" + std::to_string(i)));
    REQUIRE(s->write(rows(10)));
    auto r = s->finish();
    REQUIRE(r.has_value());
    CHECK(r->endpoint == be.host_port());
  }
  CHECK(be.requests().size() == 4);
  CHECK(be.requests().at(0).target == "/api/db1/t1/_stream_load");
  CHECK(fe.requests().size() == 1);  // one discovery, cached
}

TEST_CASE("label probe: unused label's fresh txn is aborted, used label reports state", "[doris][probe]") {
  std::vector<std::string> aborted;
  std::mutex m;
  FakeScript bs;
  bs.on_header = [](const FakeRequest& r) -> std::optional<FakeReply> {
    if (r.header("label") == "used")
      return ok(load_json("Label Already Exists",
                          "[LABEL_ALREADY_EXISTS]TStatus: errCode = 2, detailMessage = Label [used] has already been "
                          "used, relate to txn [501]",
                          -1, "    \"ExistingJobStatus\": \"RUNNING\",\n"));
    return std::nullopt;
  };
  bs.on_request = [&](const FakeRequest& r) {
    if (r.target.ends_with("_stream_load_2pc")) {
      std::lock_guard lk(m);
      aborted.push_back(r.header("txn_operation") + ":" + r.header("txn_id"));
      return ok(twopc_json("Success", "transaction [900] abort successfully."));
    }
    return ok(load_json("Success", "OK", 900));
  };
  FakeServer be(bs);
  auto cfg = config({be.url()});  // the BE plays FE too: 2PC goes to the "FE"
  cfg.route = Route::DirectBe;
  cfg.backends = {be.host_port()};
  auto client = make_client(cfg);
  auto used = client->probe_label(spec("used"));
  REQUIRE(used.has_value());
  CHECK(used->state == LabelState::Running);
  CHECK(used->txn_id == 501);
  auto fresh = client->probe_label(spec("fresh"));
  REQUIRE(fresh.has_value());
  CHECK(fresh->state == LabelState::Unused);
  std::lock_guard lk(m);
  CHECK(aborted == std::vector<std::string>{"abort:900"});
  auto reqs = be.requests();
  CHECK(reqs.at(1).header("content-length") == "0");
  CHECK(reqs.at(1).header("two_phase_commit") == "true");
}

TEST_CASE("label probe: a BE answering 5xx is quarantined and the retry rotates off it", "[doris][probe]") {
  FakeScript down;
  down.on_request = [](const FakeRequest&) { return FakeReply{503, "Service Unavailable", {}, false}; };
  FakeServer bad(down);
  FakeScript up;
  up.on_request = [](const FakeRequest&) {
    return ok(load_json("Label Already Exists",
                        "[LABEL_ALREADY_EXISTS]TStatus: errCode = 2, detailMessage = Label [l1] has already been "
                        "used, relate to txn [77]",
                        -1, "    \"ExistingJobStatus\": \"FINISHED\",\n"));
  };
  FakeServer good(up);
  auto cfg = config({"http://127.0.0.1:1"});
  cfg.route = Route::DirectBe;
  cfg.backends = {bad.host_port(), good.host_port()};
  cfg.retry.max_attempts = 3;
  cfg.endpoint_quarantine = 10s;
  auto client = make_client(cfg);
  for (int i = 0; i < 4; ++i) {
    auto r = client->probe_label(spec());
    REQUIRE(r.has_value());
    CHECK(r->txn_id == 77);
  }
  // Round-robin alone would have sent every other probe to it.
  CHECK(bad.requests().size() <= 1);
  CHECK(good.requests().size() == 4);
}

TEST_CASE("schema and SQL helpers", "[doris][metadata]") {
  FakeScript fs;
  fs.on_request = [](const FakeRequest& r) {
    if (r.target == "/api/db1/t1/_schema")
      return ok(R"({"msg":"success","code":0,"data":{"properties":[{"name":"k","type":"INT","comment":"","aggregation_type":""},)"
                R"({"name":"v","type":"DECIMALV3","precision":"10","scale":"2","comment":"","aggregation_type":"REPLACE"}],)"
                R"("keysType":"UNIQUE_KEYS","status":200},"count":0})");
    if (r.target == "/api/db1/nope/_schema")
      return ok(R"({"msg":"Error","code":1,"data":"table not found, tableName=nope","count":0})");
    if (r.target == "/api/query/default_cluster/db1" && r.method == "POST" && r.body.find("SHOW") != std::string::npos)
      return ok(R"({"data":{"type":"result_set","meta":[{"name":"c","type":"INT"},{"name":"d","type":"DATE"}],)"
                R"("data":[[1,"2024-01-01"],[null,"x"]],"time":10},"msg":"success","code":0})");
    return ok(R"({"msg":"Error","code":1,"data":"Failed to execute sql: nope","count":0})");
  };
  FakeServer fe(fs);
  auto client = make_client(config({fe.url()}));
  auto s = client->schema("db1", "t1");
  REQUIRE(s.has_value());
  auto& ts = *s;
  CHECK(ts.keys_type == "UNIQUE_KEYS");
  REQUIRE(ts.columns.size() == 2);
  CHECK(ts.columns[1].name == "v");
  CHECK(ts.columns[1].precision == 10);
  CHECK(ts.columns[1].scale == 2);
  auto missing = client->schema("db1", "nope");
  REQUIRE(!missing.has_value());
  CHECK(missing.error().kind() == ErrorKind::UnknownTable);
  auto q = client->sql("db1", "SHOW TABLES");
  REQUIRE(q.has_value());
  auto& res = *q;
  CHECK(res.columns == std::vector<std::string>{"c", "d"});
  REQUIRE(res.rows.size() == 2);
  CHECK(res.rows[0][0] == "1");
  CHECK(res.rows[0][1] == "2024-01-01");
  CHECK_FALSE(res.rows[1][0]);
}

TEST_CASE("write_from: the caller's buffer becomes a body chunk, bytes, order and the buffer cap as with write",
          "[doris][backpressure]") {
  FakeScript bs;
  bs.read_delay = 2ms;  // a slow reader: write_from must wait for room like write
  bs.on_request = [](const FakeRequest&) { return ok(load_json("Success", "OK", 2, "")); };
  FakeServer be(bs);
  auto client = direct_be_client(be, 128 * 1024, 16 * 1024);
  auto stream = client->open_load(spec());
  // Sizes below, at, between one and two, and above two chunks, in an order
  // that takes both the handed-over and the copying path.
  const std::vector<size_t> sizes{3, 800, 1000, 3, 1600, 700, 1, 900, 2400, 850, 1200};  // rows of ~21 bytes
  std::string expected, buf;
  size_t max_buffered = 0, id = 0;
  for (int round = 0; round < 20; ++round)
    for (size_t n : sizes) {
      for (size_t i = 0; i < n; ++i) buf += "{\"id\":" + std::to_string(id++) + ",\"v\":\"x\"}\n";
      expected += buf;
      REQUIRE(stream->write_from(buf));
      CHECK(buf.empty());
      max_buffered = std::max(max_buffered, stream->buffered_bytes());
    }
  auto r = stream->finish();
  REQUIRE(r.has_value());
  CHECK(r->raw_bytes == expected.size());
  CHECK(max_buffered <= 128 * 1024);
  CHECK(be.requests().at(0).body == expected);
}
