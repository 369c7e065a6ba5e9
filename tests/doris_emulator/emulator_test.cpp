// End-to-end tests of the doris-emulator binary over HTTP, through the
// launcher: FE redirect and REST endpoints, BE framing rules, curl as a
// stock Doris client, runtime faults, persistence across kill -9, many
// concurrent streaming loads, garbage input.
#include "tools/doris_emulator/launcher.hpp"
#include "tools/fixtures/temp_dir.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <set>
#include <thread>

using cdc2doris::test::Emulator;
using cdc2doris::test::EmulatorOptions;
namespace json = boost::json;
namespace asio = boost::asio;

namespace {

json::object J(const std::string& s) { return json::parse(s).as_object(); }
std::string S(const json::object& o, const char* k) { return std::string(o.at(k).as_string()); }

// A raw TCP connection for what a well-behaved HTTP client library won't send.
struct Raw {
  asio::io_context ioc;
  asio::ip::tcp::socket sock{ioc};
  explicit Raw(const std::string& hp) {
    auto c = hp.rfind(':');
    sock.connect({asio::ip::make_address(hp.substr(0, c)), static_cast<unsigned short>(std::stoi(hp.substr(c + 1)))});
  }
  void send(const std::string& s) { asio::write(sock, asio::buffer(s)); }
  // Reads until the peer closes or `until` appears (then returns what was read).
  std::string recv(const std::string& until = "", int timeout_ms = 5000) {
    std::string out;
    sock.non_blocking(true);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (std::chrono::steady_clock::now() < deadline) {
      char b[4096];
      boost::system::error_code ec;
      size_t n = sock.read_some(asio::buffer(b), ec);
      if (ec == asio::error::would_block) {
        if (!until.empty() && out.find(until) != std::string::npos) return out;
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        continue;
      }
      if (ec) return out;
      out.append(b, n);
    }
    return out;
  }
};

std::string put_head(const std::string& path, const std::string& auth, const std::string& extra) {
  return "PUT " + path + " HTTP/1.1\r\nHost: x\r\nAuthorization: " + auth + "\r\n" + extra + "\r\n";
}

void make_table(Emulator& e, const std::string& ddl) {
  e.sql("", "CREATE DATABASE IF NOT EXISTS d");
  e.sql("d", ddl);
}

const char* kUnique = "CREATE TABLE t (id BIGINT, v STRING) UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1";

}  // namespace

TEST_CASE("curl drives a 2PC stream load exactly as the Doris docs do", "[emulator][curl]") {
  Emulator e;
  make_table(e, kUnique);
  cdc2doris::test::TempDir dir("emu-curl");
  std::string data = (dir / "data.json").string();
  std::ofstream(data) << "{\"id\":1,\"v\":\"a\"}\n{\"id\":2,\"v\":\"b\"}\n";
  auto run = [](const std::string& cmd) {
    std::string out;
    FILE* p = ::popen(cmd.c_str(), "r");
    REQUIRE(p);
    char b[4096];
    size_t n;
    while ((n = std::fread(b, 1, sizeof b, p)) > 0) out.append(b, n);
    CHECK(::pclose(p) == 0);
    return out;
  };
  auto load = J(run("curl -sS --location-trusted -u root: -H \"label:curl_1\" -H \"format:json\" "
                    "-H \"two_phase_commit:true\" -H \"Expect:100-continue\" -T " + data + " http://" + e.fe() +
                    "/api/d/t/_stream_load"));
  CHECK(S(load, "Status") == "Success");
  CHECK(S(load, "TwoPhaseCommit") == "true");
  CHECK(load.at("NumberLoadedRows").as_int64() == 2);
  CHECK(e.rows("d", "t").empty());
  auto txn_id = std::to_string(load.at("TxnId").as_int64());
  auto commit = J(run("curl -sS -X PUT --location-trusted -u root: -H \"txn_id:" + txn_id +
                      "\" -H \"txn_operation:commit\" http://" + e.fe() + "/api/d/_stream_load_2pc"));
  CHECK(S(commit, "status") == "Success");
  CHECK(S(commit, "msg") == "transaction [" + txn_id + "] commit successfully.");
  CHECK(e.rows("d", "t") == std::vector<std::string>{R"({"id":1,"v":"a"})", R"({"id":2,"v":"b"})"});
  // Commit by label through the FE as well (already visible now).
  auto again = J(run("curl -sS -X PUT --location-trusted -u root: -H \"label:curl_1\" -H \"txn_operation:commit\" "
                     "http://" + e.fe() + "/api/d/t/_stream_load_2pc"));
  CHECK(S(again, "msg") == "TStatus: errCode = 2, detailMessage = running transaction not found, label=curl_1");
}

TEST_CASE("FE endpoints: redirect, auth, Expect, backends, health, schema, query", "[emulator][fe]") {
  EmulatorOptions o;
  o.be_count = 3;
  o.users = {"admin:s3cret", "root:"};
  Emulator e(o);
  make_table(e, kUnique);
  std::string auth = e.auth();
  auto r = e.http("PUT", e.fe(), "/api/d/t/_stream_load?x=1", {{"Authorization", auth}, {"Expect", "100-continue"}});
  CHECK(r.status == 307);
  CHECK(r.headers["content-type"] == "text/html;charset=utf-8");
  auto loc = r.headers["location"];
  CHECK(loc.rfind("http://admin:s3cret@127.0.0.1:", 0) == 0);
  CHECK(loc.find("/api/d/t/_stream_load?x=1") != std::string::npos);
  // Round-robin over the BEs.
  std::set<std::string> targets;
  for (int i = 0; i < 3; ++i)
    targets.insert(e.http("PUT", e.fe(), "/api/d/t/_stream_load", {{"Authorization", auth}, {"Expect", "100-continue"}})
                       .headers["location"]);
  CHECK(targets.size() == 3);
  CHECK(e.http("PUT", e.fe(), "/api/d/t/_stream_load", {{"Authorization", auth}}).body ==
        R"({"status":"FAILED","msg":"There is no 100-continue header"})");
  auto unauth = e.http("PUT", e.fe(), "/api/d/t/_stream_load", {{"Expect", "100-continue"}});
  CHECK(unauth.status == 200);
  CHECK(unauth.body == R"({"msg":"Unauthorized","code":401,"data":"Need auth information.","count":0})");
  auto wrong = e.http("GET", e.fe(), "/api/backends", {{"Authorization", "Basic YWRtaW46eA=="}});
  CHECK(S(J(wrong.body), "msg") == "Unauthorized");
  auto p2 = e.http("PUT", e.fe(), "/api/d/_stream_load_2pc", {{"Authorization", auth}, {"txn_operation", "commit"}});
  CHECK(p2.body == R"({"status":"FAILED","msg":"No transaction id or label selected."})");
  auto p3 = e.http("PUT", e.fe(), "/api/d/_stream_load_2pc", {{"Authorization", auth}, {"txn_id", "1"}});
  CHECK(p3.body == R"({"status":"FAILED","msg":"No transaction operation('commit' or 'abort') selected."})");
  auto p4 = e.http("PUT", e.fe(), "/api/d/_stream_load_2pc",
                   {{"Authorization", auth}, {"txn_id", "1"}, {"txn_operation", "commit"}});
  CHECK(p4.status == 307);
  CHECK(p4.headers["location"].find("/api/d/_stream_load_2pc") != std::string::npos);
  auto be = J(e.http("GET", e.fe(), "/api/backends?is_alive=true", {{"Authorization", auth}}).body);
  CHECK(be.at("data").as_object().at("backends").as_array().size() == 3);
  CHECK(e.http("GET", e.fe(), "/api/health").body ==
        R"({"msg":"success","code":0,"data":{"total_backend_num":3,"online_backend_num":3},"count":0})");
  CHECK(e.http("GET", e.fe(), "/").status == 200);
  CHECK(e.http("GET", e.bes()[1], "/").status == 200);
  CHECK(e.http("GET", e.bes()[0], "/api/health").body == R"({"status": "OK","msg": "To Be Added"})");
  CHECK(e.http("GET", e.bes()[0], "/nope").status == 404);
  auto schema = J(e.http("GET", e.fe(), "/api/d/t/_schema", {{"Authorization", auth}}).body);
  CHECK(S(schema.at("data").as_object(), "keysType") == "UNIQUE_KEYS");
  auto missing = J(e.http("GET", e.fe(), "/api/d/zz/_schema", {{"Authorization", auth}}).body);
  CHECK(missing.at("code").as_int64() == 1);
  auto nostmt = e.http("POST", e.fe(), "/api/query/default_cluster/d", {{"Authorization", auth}}, "{}");
  CHECK(nostmt.body == R"({"msg":"Bad Request","code":403,"data":"Missing statement request body","count":0})");
  CHECK_THROWS_WITH(e.sql("d", "GRANT ALL ON *.* TO x"), Catch::Contains("user 'x'@'%' does not exist"));
  CHECK(e.query("d", "SHOW TABLES").find("[\"t\"]") != std::string::npos);
}

TEST_CASE("FE: concurrent SQL requests each get their own statement", "[emulator][fe][concurrency]") {
  // Every session's small body (SQL, 2PC, admin) is its own: two requests
  // whose bodies were read at the same time must not see each other's bytes
  // (a shared read buffer once handed one session another's statement, or
  // garbage: "Missing statement request body" for a well-formed DESC).
  Emulator e;
  const std::string auth = e.auth();
  for (int round = 0; round < 10; ++round) {
    std::vector<std::unique_ptr<Raw>> conns;
    std::vector<std::string> names;
    for (int i = 0; i < 12; ++i) {
      // Names of different lengths: a mixed-up body is truncated or padded.
      names.push_back("db_" + std::to_string(round) + "_" + std::string(static_cast<size_t>(i + 1), 'x'));
      conns.push_back(std::make_unique<Raw>(e.fe()));
    }
    for (size_t i = 0; i < conns.size(); ++i) {
      const std::string body = json::serialize(json::object{{"stmt", "CREATE DATABASE " + names[i]}});
      conns[i]->send("POST /api/query/default_cluster/information_schema HTTP/1.1\r\nHost: x\r\nAuthorization: " +
                     auth + "\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: " +
                     std::to_string(body.size()) + "\r\n\r\n" + body);
    }
    for (size_t i = 0; i < conns.size(); ++i) {
      const std::string resp = conns[i]->recv();
      INFO("round " << round << ", " << names[i] << ": " << resp);
      CHECK(resp.find("\"code\":0") != std::string::npos);
    }
    const std::string dbs = e.query("", "SHOW DATABASES");
    for (const auto& n : names) {
      INFO(dbs);
      CHECK(dbs.find("\"" + n + "\"") != std::string::npos);
    }
  }
}

TEST_CASE("BE framing: no 100-continue on header errors, chunked, both/neither, gzip reply", "[emulator][be]") {
  Emulator e;
  make_table(e, kUnique);
  std::string auth = e.auth();
  {
    // Label exists → final reply instead of 100 Continue.
    e.stream_load("d", "t", "1\ta\n", {{"label", "dupe"}});
    Raw c(e.bes()[0]);
    c.send(put_head("/api/d/t/_stream_load", auth, "label: dupe\r\nExpect: 100-continue\r\nContent-Length: 4\r\n"));
    std::string resp = c.recv("\n}\n");
    CHECK(resp.rfind("HTTP/1.1 200 OK", 0) == 0);
    CHECK(resp.find("100 Continue") == std::string::npos);
    CHECK(resp.find("\"Status\": \"Label Already Exists\"") != std::string::npos);
  }
  {
    // Good header → 100 Continue, then chunked body.
    Raw c(e.bes()[0]);
    c.send(put_head("/api/d/t/_stream_load", auth,
                    "label: chunky\r\nExpect: 100-continue\r\nTransfer-Encoding: chunked\r\nformat: json\r\n"));
    CHECK(c.recv("\r\n\r\n").rfind("HTTP/1.1 100 Continue", 0) == 0);
    c.send("c\r\n{\"id\":7,\"v\":\r\nb\r\n\"seven\"}\n{\"\r\n12\r\nid\":8,\"v\":\"eight\"}\r\n0\r\n\r\n");
    std::string resp = c.recv("\n}\n");
    CHECK(resp.find("\"NumberLoadedRows\": 2") != std::string::npos);
  }
  {
    Raw c(e.bes()[0]);
    c.send(put_head("/api/d/t/_stream_load", auth, "Content-Length: 4\r\nTransfer-Encoding: chunked\r\n"));
    CHECK(c.recv("\n}\n").find("please do not set both content_length and transfer-encoding") != std::string::npos);
  }
  {
    Raw c(e.bes()[0]);
    c.send(put_head("/api/d/t/_stream_load", auth, ""));
    CHECK(c.recv("\n}\n").find("content_length is empty and transfer-encoding!=chunked") != std::string::npos);
  }
  auto gz = e.http("PUT", e.bes()[0], "/api/d/_stream_load_2pc",
                   {{"Authorization", auth}, {"txn_id", "1"}, {"txn_operation", "abort"}, {"Accept-Encoding", "gzip"}});
  CHECK(gz.headers["content-encoding"] == "gzip");
  CHECK(gz.body.size() > 2);
  CHECK(static_cast<unsigned char>(gz.body[0]) == 0x1f);
  {
    // Garbage HTTP → 400 and close.
    Raw c(e.bes()[0]);
    c.send("THIS IS NOT HTTP\r\n\r\n");
    CHECK(c.recv().rfind("HTTP/1.1 400", 0) == 0);
    Raw f(e.fe());
    f.send("GET / HTTP/1.1\r\nHost: x\r\nContent-Length: zz\r\n\r\n");
    CHECK(f.recv().rfind("HTTP/1.1 400", 0) == 0);
  }
  CHECK(e.rows("d", "t").size() == 3);
}

TEST_CASE("BE body reader: chunk extensions, trailers, split chunk lines, keep-alive, bad chunks", "[emulator][be]") {
  Emulator e;
  make_table(e, kUnique);
  std::string auth = e.auth();
  {
    Raw c(e.bes()[0]);
    c.send(put_head("/api/d/t/_stream_load", auth, "label: ext\r\nTransfer-Encoding: chunked\r\nformat: json\r\n"));
    // A chunk-size line cut in the middle, an extension, a trailer field.
    c.send("1");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    c.send("0;name=value\r\n{\"id\":1,\"v\":\"a\"}\r\n");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    c.send("11\r\n\n{\"id\":2,\"v\":\"b\"}\r\n0\r\nX-Checksum: 1\r\n\r\n");
    std::string resp = c.recv("\n}\n");
    CHECK(resp.find("\"Status\": \"Success\"") != std::string::npos);
    CHECK(resp.find("\"NumberLoadedRows\": 2") != std::string::npos);
    CHECK(resp.find("\"LoadBytes\": 33") != std::string::npos);
  }
  {
    // Two Content-Length loads back to back on one connection, the second
    // sent together with the first body: the bytes after a body belong to
    // the next request.
    Raw c(e.bes()[0]);
    std::string b1 = "{\"id\":3,\"v\":\"c\"}\n", b2 = "{\"id\":4,\"v\":\"d\"}\n";
    c.send(put_head("/api/d/t/_stream_load", auth,
                    "label: ka1\r\nformat: json\r\nContent-Length: " + std::to_string(b1.size()) + "\r\n") +
           b1 +
           put_head("/api/d/t/_stream_load", auth,
                    "label: ka2\r\nformat: json\r\nContent-Length: " + std::to_string(b2.size()) + "\r\n") +
           b2);
    std::string resp = c.recv("\"Label\": \"ka2\"");
    resp += c.recv("\n}\n", 2000);
    CHECK(resp.find("\"Label\": \"ka1\"") != std::string::npos);
    CHECK(resp.find("\"Label\": \"ka2\"") != std::string::npos);
  }
  CHECK(e.rows("d", "t").size() == 4);
  {
    Raw c(e.bes()[0]);
    c.send(put_head("/api/d/t/_stream_load", auth, "label: badchunk\r\nTransfer-Encoding: chunked\r\nformat: json\r\n"));
    c.send("zz\r\n{}\r\n0\r\n\r\n");
    CHECK(c.recv().empty());  // connection closed without a reply
    auto txns = J(e.http("GET", e.fe(), "/_emulator/txns?db=d", {}).body).at("txns").as_array();
    bool aborted = false;
    for (auto& t : txns)
      if (t.at("label") == "badchunk")
        aborted = t.at("state") == "ABORTED" &&
                  std::string(t.at("abort_reason").as_string()).find("receive body failed: bad chunk") != std::string::npos;
    CHECK(aborted);
    // The freshness bench's ground truth: when a txn's rows became visible (wall clock), null when they never did.
    const int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::system_clock::now().time_since_epoch()).count();
    for (auto& t : txns) {
      if (t.at("state") == "VISIBLE") {
        CHECK(t.at("visible_unix_ms").to_number<int64_t>() <= now);
        CHECK(t.at("visible_unix_ms").to_number<int64_t>() > now - 600'000);
      } else if (t.at("state") == "ABORTED") {
        CHECK(t.at("visible_unix_ms").is_null());
      }
    }
  }
}

TEST_CASE("partial update with cdc2doris' client headers over HTTP, kept across kill -9", "[emulator][partial]") {
  cdc2doris::test::TempDir dir("emu-partial");
  EmulatorOptions o;
  o.data_dir = dir.path().string();
  Emulator e(o);
  make_table(e, "CREATE TABLE pt (id BIGINT, v STRING, w STRING) UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1");
  e.stream_load("d", "pt", "{\"id\":1,\"v\":\"a\",\"w\":\"keep\"}\n{\"id\":2,\"v\":\"b\",\"w\":\"gone\"}\n",
                {{"format", "json"}});
  // The header set core/doris/beast_client.cpp writes for LoadSpec::partial_columns = {id, v}.
  Raw c(e.bes()[0]);
  c.send(put_head("/api/d/pt/_stream_load", e.auth(),
                  "Expect: 100-continue\r\nformat: json\r\nread_json_by_line: true\r\npartial_columns: true\r\n"
                  "columns: id,v,__DORIS_DELETE_SIGN__\r\ntimeout: 600\r\nlabel: partial_1\r\n"
                  "two_phase_commit: true\r\nTransfer-Encoding: chunked\r\n"));
  CHECK(c.recv("\r\n\r\n").rfind("HTTP/1.1 100 Continue", 0) == 0);
  std::string body = "{\"id\":1,\"v\":\"a2\",\"__DORIS_DELETE_SIGN__\":0}\n{\"id\":2,\"v\":null,\"__DORIS_DELETE_SIGN__\":1}\n"
                     "{\"id\":3,\"v\":\"c\",\"__DORIS_DELETE_SIGN__\":0}\n";
  char size[16];
  std::snprintf(size, sizeof size, "%zx\r\n", body.size());
  c.send(size + body + "\r\n0\r\n\r\n");
  auto resp = c.recv("\n}\n");
  auto load = J(resp.substr(resp.find('{')));
  CHECK(S(load, "Status") == "Success");
  CHECK(load.at("NumberLoadedRows").as_int64() == 3);
  CHECK(S(J(e.txn("d", "commit", load.at("TxnId").as_int64()).body), "status") == "Success");
  const std::vector<std::string> want{R"({"id":1,"v":"a2","w":"keep"})", R"({"id":3,"v":"c","w":null})"};
  CHECK(e.rows("d", "pt") == want);
  e.restart(/*crash=*/true);
  CHECK(e.rows("d", "pt") == want);
}

TEST_CASE("oversized bodies get the limit error", "[emulator][be]") {
  EmulatorOptions o;
  o.extra_args = {"--streaming-load-max-mb", "1", "--streaming-load-json-max-mb", "1"};
  Emulator e(o);
  make_table(e, "CREATE TABLE t (id INT, v STRING) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1");
  std::string big;
  while (big.size() < (1u << 20) + 100) big += "1\tabcdefghijklmnopqrstuvwxyz\n";
  auto r = J(e.stream_load("d", "t", big).body);
  CHECK(S(r, "Message").rfind("[EXCEEDED_LIMIT]body size ", 0) == 0);
  CHECK(r.at("TxnId").as_int64() == -1);
  // Chunked: detected while receiving.
  Raw c(e.bes()[0]);
  c.send(put_head("/api/d/t/_stream_load", e.auth(), "Transfer-Encoding: chunked\r\n"));
  char hex[16];
  std::snprintf(hex, sizeof hex, "%zx\r\n", big.size());
  c.send(hex + big + "\r\n0\r\n\r\n");
  CHECK(c.recv("\n}\n").find("exceeds the limit 1048576") != std::string::npos);
  CHECK(e.rows("d", "t").empty());
}

TEST_CASE("runtime faults over the admin API", "[emulator][faults]") {
  EmulatorOptions o;
  o.be_count = 2;
  Emulator e(o);
  make_table(e, kUnique);
  // reset after K body bytes: the connection dies and the txn is aborted.
  e.fault(R"({"type":"reset_after_bytes","bytes":5,"db":"d","table":"t"})");
  CHECK_THROWS(e.stream_load("d", "t", "1\tabcdefghij\n", {{"label", "reset"}}));
  CHECK(e.txns("d").find("connection reset by fault injection") != std::string::npos);
  // delay_response / delay_continue
  e.fault(R"({"type":"delay_response","ms":300})");
  auto t0 = std::chrono::steady_clock::now();
  CHECK(S(J(e.stream_load("d", "t", "1\ta\n").body), "Status") == "Success");
  CHECK(std::chrono::steady_clock::now() - t0 >= std::chrono::milliseconds(290));
  e.fault(R"({"type":"delay_continue","ms":300})");
  {
    Raw c(e.bes()[0]);
    t0 = std::chrono::steady_clock::now();
    c.send(put_head("/api/d/t/_stream_load", e.auth(), "Expect: 100-continue\r\nContent-Length: 4\r\n"));
    CHECK(c.recv("\r\n\r\n").find("100 Continue") != std::string::npos);
    CHECK(std::chrono::steady_clock::now() - t0 >= std::chrono::milliseconds(290));
    c.send("2\tb\n");
    CHECK(c.recv("\n}\n").find("\"Status\": \"Success\"") != std::string::npos);
  }
  // BE offline: listener closed, FE stops redirecting there; back online.
  auto off = J(e.fault(R"({"type":"be_offline","be":1})"));
  CHECK(off.at("id").as_int64() > 0);
  CHECK_THROWS(e.http("GET", e.bes()[1], "/"));
  for (int i = 0; i < 4; ++i)
    CHECK(e.http("PUT", e.fe(), "/api/d/t/_stream_load", {{"Authorization", e.auth()}, {"Expect", "100-continue"}})
              .headers["location"]
              .find(e.bes()[0]) != std::string::npos);
  CHECK(e.http("GET", e.fe(), "/api/health").body.find("\"online_backend_num\":1") != std::string::npos);
  e.fault(R"({"type":"be_online","be":1})");
  CHECK(e.http("GET", e.bes()[1], "/").status == 200);
  // Publish timeout: Status set, rows visible later.
  e.fault(R"({"type":"publish_timeout","visible_after_ms":500})");
  auto pt = J(e.stream_load("d", "t", "9\tlate\n").body);
  CHECK(S(pt, "Status") == "Publish Timeout");
  CHECK(e.rows("d", "t").size() == 2);
  std::this_thread::sleep_for(std::chrono::milliseconds(800));
  CHECK(e.rows("d", "t").size() == 3);
  // fail_commit with reset after applying: client sees a dead connection, commit happened.
  auto pre = J(e.stream_load("d", "t", "10\tx\n", {{"two_phase_commit", "true"}, {"label", "fc"}}).body);
  int64_t id = pre.at("TxnId").as_int64();
  e.fault(R"({"type":"fail_commit","apply":true,"reset":true})");
  CHECK_THROWS(e.txn("d", "commit", id));
  CHECK(S(J(e.txn("d", "commit", id).body), "msg").find("is already visible") != std::string::npos);
  // delay_commit
  auto pre2 = J(e.stream_load("d", "t", "11\tx\n", {{"two_phase_commit", "true"}, {"label", "dc"}}).body);
  e.fault(R"({"type":"delay_commit","ms":300,"db":"d"})");
  t0 = std::chrono::steady_clock::now();
  CHECK(S(J(e.txn("d", "commit", pre2.at("TxnId").as_int64()).body), "status") == "Success");
  CHECK(std::chrono::steady_clock::now() - t0 >= std::chrono::milliseconds(290));
  // Listing, deleting and clearing faults.
  auto f = J(e.fault(R"({"type":"fail_load","count":-1,"be":1})"));
  CHECK(e.http("GET", e.fe(), "/_emulator/faults").body.find("\"fail_load\"") != std::string::npos);
  CHECK(e.http("DELETE", e.fe(), "/_emulator/faults/" + std::to_string(f.at("id").as_int64())).status == 200);
  CHECK(e.http("POST", e.fe(), "/_emulator/faults", {}, R"({"type":"bogus"})").status == 400);
  e.clear_faults();
  CHECK(e.http("GET", e.fe(), "/_emulator/faults").body == R"({"faults":[]})");
  auto stats = J(e.stats());
  CHECK(stats.at("commits").as_int64() >= 4);
  CHECK(stats.at("aborts").as_int64() >= 1);
  CHECK(stats.at("bytes").as_int64() > 0);
  auto tables = J(e.http("GET", e.fe(), "/_emulator/tables").body);
  CHECK(tables.at("tables").as_array().size() == 1);
}

TEST_CASE("persistence across kill -9 and graceful restarts", "[emulator][persistence]") {
  cdc2doris::test::TempDir dir("emu-persist");
  EmulatorOptions o;
  o.data_dir = dir.path().string();
  o.be_count = 2;
  Emulator e(o);
  make_table(e, kUnique);
  auto pre = J(e.stream_load("d", "t", "1\tpending\n", {{"two_phase_commit", "true"}, {"label", "p1"}}).body);
  e.stream_load("d", "t", "2\tvisible\n", {{"label", "v1"}});
  auto before = e.checksum("d", "t");
  auto fe = e.fe();
  auto bes = e.bes();
  e.restart(true);  // kill -9
  CHECK(e.fe() == fe);
  CHECK(e.bes() == bes);
  CHECK(e.checksum("d", "t") == before);
  CHECK(S(J(e.stream_load("d", "t", "", {{"label", "p1"}}).body), "ExistingJobStatus") == "PRECOMMITTED");
  CHECK(S(J(e.txn("d", "commit", pre.at("TxnId").as_int64(), 1).body), "status") == "Success");
  e.restart(false);  // SIGTERM
  CHECK(e.rows("d", "t") == std::vector<std::string>{R"({"id":1,"v":"pending"})", R"({"id":2,"v":"visible"})"});
  CHECK(S(J(e.txn("d", "commit", pre.at("TxnId").as_int64()).body), "msg").find("already visible") != std::string::npos);
}

TEST_CASE("precommit timeout and label retention with small values", "[emulator][txn]") {
  EmulatorOptions o;
  o.precommit_timeout_s = 1;
  o.label_retention_s = 1;
  o.txn_clean_interval_s = 1;
  Emulator e(o);
  make_table(e, kUnique);
  auto pre = J(e.stream_load("d", "t", "1\ta\n", {{"two_phase_commit", "true"}, {"label", "exp"}}).body);
  const int64_t txn = pre.at("TxnId").as_int64();
  // The emulator expires txns and labels in a scan (as Doris' txn manager
  // does periodically), so each state shows up to a second after its
  // deadline. Watch the txn list, which changes nothing (a commit sent
  // before the scan would commit the txn), bounded, instead of sleeping a
  // guessed time.
  auto state_within = [&](const std::string& want) {
    std::string state = "gone";
    for (int i = 0; i < 40; ++i) {
      state = "gone";
      const auto list = J(e.txns("d"));
      for (const auto& t : list.at("txns").as_array())
        if (t.at("txn_id").as_int64() == txn) state = std::string(t.at("state").as_string());
      if (state == want) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return state;
  };
  REQUIRE(state_within("ABORTED") == "ABORTED");
  CHECK_THAT(S(J(e.txn("d", "commit", txn).body), "msg"),
             Catch::Matchers::Contains("abort reason: timeout by txn manager"));
  REQUIRE(state_within("gone") == "gone");
  CHECK_THAT(S(J(e.txn("d", "commit", txn).body), "msg"), Catch::Matchers::Contains("not found"));
}

TEST_CASE("hundreds of concurrent streaming loads", "[emulator][concurrency]") {
  Emulator e;
  make_table(e, "CREATE TABLE t (id INT, v STRING) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1");
  constexpr int kConns = 300;
  std::vector<std::unique_ptr<Raw>> conns;
  for (int i = 0; i < kConns; ++i) {
    conns.push_back(std::make_unique<Raw>(e.bes()[0]));
    conns.back()->send(put_head("/api/d/t/_stream_load", e.auth(),
                                "label: c" + std::to_string(i) + "\r\ntwo_phase_commit: true\r\nTransfer-Encoding: chunked\r\n"));
    conns.back()->send("4\r\n" + std::to_string(1000 + i) + "\r\n");
  }
  // Headers are processed asynchronously; wait until every txn has begun.
  int64_t running = 0;
  for (int i = 0; i < 500 && running < kConns; ++i) {
    running = J(e.stats()).at("running_txns").as_int64();
    if (running < kConns) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  CHECK(running == kConns);
  int ok = 0;
  for (int i = 0; i < kConns; ++i) {
    conns[static_cast<size_t>(i)]->send("2\r\n\tx\r\n2\r\n\n\n\r\n0\r\n\r\n");
  }
  for (auto& c : conns) ok += c->recv("\n}\n").find("\"Status\": \"Success\"") != std::string::npos;
  CHECK(ok == kConns);
  CHECK(J(e.stats()).at("precommits").as_int64() == kConns);
}

TEST_CASE("users and privileges: CREATE USER, GRANT, REVOKE, SHOW GRANTS and the refusals", "[emulator][privileges]") {
  EmulatorOptions o;
  o.users = {"root:rpw"};
  Emulator e(o);
  make_table(e, kUnique);
  e.sql("", "CREATE USER 'u'@'%' IDENTIFIED BY 'p'");
  CHECK_THROWS_WITH(e.sql("", "CREATE USER 'u'@'%' IDENTIFIED BY 'p'"), Catch::Contains("User 'u'@'%' already exist"));
  e.sql("", "CREATE USER IF NOT EXISTS u IDENTIFIED BY 'other'");
  const std::string u_auth = "Basic dTpw";  // u:p
  // A wrong password is the FE's 401 body.
  auto wrong = e.http("PUT", e.fe(), "/api/d/t/_stream_load", {{"Authorization", "Basic dTp4"}, {"Expect", "100-continue"}});
  CHECK(wrong.body == R"x({"msg":"Unauthorized","code":401,"data":"Access denied for user 'u' (using password: YES)","count":0})x");
  // No LOAD_PRIV: the FE refuses (RestBaseResult), and so does a BE reached directly.
  auto fe = e.http("PUT", e.fe(), "/api/d/t/_stream_load", {{"Authorization", u_auth}, {"Expect", "100-continue"}});
  CHECK(fe.body ==
        R"({"status":"FAILED","msg":"Access denied; you need (at least one of) the Admin_priv,Load_priv privilege(s) for this operation"})");
  auto be = e.stream_load("d", "t", "{\"id\":1,\"v\":\"a\"}\n", {{"Authorization", u_auth}, {"format", "json"}});
  CHECK(S(J(be.body), "Status") == "Fail");
  CHECK(S(J(be.body), "Message") == "[ANALYSIS_ERROR]TStatus: errCode = 2, detailMessage = Access denied; you need (at "
                                    "least one of) the (LOAD) privilege(s) for this operation");
  // The user's own SHOW GRANTS; root holds everything.
  auto own = [&](const std::string& auth) {
    auto r = e.http("POST", e.fe(), "/api/query/default_cluster/d", {{"Authorization", auth}}, R"({"stmt":"SHOW GRANTS"})");
    return J(r.body).at("data").as_object().at("data").as_array().at(0).as_array();
  };
  CHECK(own(e.auth()).at(4).as_string() == "Node_priv,Admin_priv");
  e.sql("", "GRANT LOAD_PRIV, SELECT_PRIV ON d.* TO u");
  e.sql("", "GRANT ALTER_PRIV ON internal.d.t TO 'u'@'%'");
  auto g = own(u_auth);
  CHECK(g.at(0).as_string() == "'u'@'%'");
  CHECK(g.at(6).as_string() == "internal.information_schema: Select_priv; internal.d: Select_priv,Load_priv");
  CHECK(g.at(7).as_string() == "internal.d.t: Alter_priv");
  auto ok = e.stream_load("d", "t", "{\"id\":1,\"v\":\"a\"}\n", {{"Authorization", u_auth}, {"format", "json"}});
  CHECK(S(J(ok.body), "Status") == "Success");
  e.sql("", "REVOKE ALTER_PRIV ON d.t FROM u");
  CHECK(own(u_auth).at(7).as_string() == "\\N");
  // DDL as the user: ERR_TABLEACCESS_DENIED_ERROR over the HTTP SQL API.
  auto alter = e.http("POST", e.fe(), "/api/query/default_cluster/d", {{"Authorization", u_auth}},
                      R"({"stmt":"ALTER TABLE t ADD COLUMN z INT"})");
  CHECK(S(J(alter.body), "data") == "Failed to execute sql: errCode = 2, detailMessage = ALTER TABLE command denied to "
                                    "user 'u'@'127.0.0.1' for table 'd: t'");
  auto grant = e.http("POST", e.fe(), "/api/query/default_cluster/d", {{"Authorization", u_auth}},
                      R"({"stmt":"GRANT LOAD_PRIV ON d.* TO u"})");
  CHECK_THAT(S(J(grant.body), "data"), Catch::Contains("you need (at least one of) the (GRANT) privilege(s)"));
  e.sql("", "DROP USER u");
  CHECK(e.http("PUT", e.fe(), "/api/d/t/_stream_load", {{"Authorization", u_auth}, {"Expect", "100-continue"}})
            .body.find("Unauthorized") != std::string::npos);
}

TEST_CASE("extra FEs share the engine; one taken offline stops listening, the others go on", "[emulator][fe]") {
  EmulatorOptions o;
  o.extra_fes = 1;
  Emulator e(o);
  REQUIRE(e.fes().size() == 2);
  CHECK(e.fes()[0] == e.fe());
  make_table(e, kUnique);
  auto via = [&](const std::string& fe) {
    return e.http("PUT", fe, "/api/d/t/_stream_load", {{"Authorization", e.auth()}, {"Expect", "100-continue"}});
  };
  CHECK(via(e.fes()[1]).status == 307);
  e.set_fe_online(0, false);
  CHECK_THROWS(via(e.fes()[0]));
  CHECK(via(e.fes()[1]).status == 307);
  CHECK(e.query("d", "SHOW TABLES").find("[\"t\"]") != std::string::npos);  // admin moved to FE 1
  e.set_fe_online(0, true);
  CHECK(via(e.fes()[0]).status == 307);
}
