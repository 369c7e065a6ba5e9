// Measures how fast the Doris emulator ingests a UNIQUE KEY table with
// ~500-byte JSON rows (issue 3 §9, target >= 300 MB/s on one core):
//  1. in-process: the stream-load path (parse, convert, stage, 2PC commit)
//     fed from memory, single thread;
//  2. loopback HTTP: the same load through the BE listener, server on one
//     io_context thread, client on another.
// Each also prints MB per CPU-second of the ingesting thread (the engine's
// thread, resp. the server's io_context thread): on the shared 2-core VM
// wall-clock figures swing with other work, CPU time much less.
// Usage: bench_emulator_ingest [rows=200000] [loads=3]
#include "tools/doris_emulator/server.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <pthread.h>
#include <time.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

using namespace cdc2doris::emu;
using Clock = std::chrono::steady_clock;

namespace {

const char* kDdl =
    "CREATE TABLE t (id BIGINT NOT NULL, customer VARCHAR(64), email VARCHAR(128), amount DECIMAL(18,4), "
    "qty INT, status VARCHAR(16), created_at DATETIME(6), updated_at DATETIME(6), note STRING, flag BOOLEAN) "
    "UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 8";

double thread_cpu_s(clockid_t clk) {
  timespec ts{};
  clock_gettime(clk, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

struct Rate {
  double wall_mb_s = 0, cpu_mb_s = 0;
};

std::string make_body(int64_t first, int64_t rows) {
  std::string body;
  body.reserve(static_cast<size_t>(rows) * 520);
  char buf[1024];
  for (int64_t i = first; i < first + rows; ++i) {
    int n = std::snprintf(
        buf, sizeof buf,
        "{\"id\":%lld,\"customer\":\"customer-%08lld\",\"email\":\"user%lld@example.com\",\"amount\":%lld.%04lld,"
        "\"qty\":%lld,\"status\":\"SHIPPED\",\"created_at\":\"2024-05-01 12:34:56.123456\","
        "\"updated_at\":\"2024-05-02 01:02:03.000001\",\"note\":\"Lorem ipsum dolor sit amet, consectetur adipiscing "
        "elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua. Ut enim ad minim veniam, quis nostrud "
        "exercitation ullamco laboris nisi ut aliquip ex ea commodo consequat. Duis aute irure dolor in reprehenderit "
        "in voluptate velit esse.\",\"flag\":%s,\"__DORIS_DELETE_SIGN__\":0}\n",
        static_cast<long long>(i), static_cast<long long>(i), static_cast<long long>(i),
        static_cast<long long>(i % 100000), static_cast<long long>(i % 10000), static_cast<long long>(i % 50),
        i % 2 ? "true" : "false");
    body.append(buf, static_cast<size_t>(n));
  }
  return body;
}

const std::map<std::string, std::string> kHeaders{{"format", "json"},
                                                  {"read_json_by_line", "true"},
                                                  {"hidden_columns", "__DORIS_DELETE_SIGN__"},
                                                  {"two_phase_commit", "true"}};

Rate in_process(const std::string& body, int loads, int64_t rows) {
  Engine e(Config{});
  e.execute_sql("", "CREATE DATABASE d");
  e.execute_sql("d", kDdl);
  double secs = 0, cpu = 0;
  for (int i = 0; i < loads; ++i) {
    LoadRequest r;
    r.db = "d";
    r.table = "t";
    r.headers = kHeaders;
    r.headers["label"] = "bench_" + std::to_string(i);
    r.authorization = "Basic cm9vdDo=";
    r.content_length = static_cast<int64_t>(body.size());
    auto t0 = Clock::now();
    double c0 = thread_cpu_s(CLOCK_THREAD_CPUTIME_ID);
    Reply early;
    auto l = e.start_load(r, &early);
    if (!l) throw std::runtime_error("load refused: " + early.body);
    for (size_t p = 0; p < body.size(); p += 256 * 1024) l->feed(body.data() + p, std::min<size_t>(256 * 1024, body.size() - p));
    Reply rep = l->finish();
    if (rep.body.find("\"Success\"") == std::string::npos) throw std::runtime_error("load failed: " + rep.body);
    auto c = e.txn_2pc("d", {{"txn_operation", "commit"}, {"txn_id", std::to_string(l->txn_id())}}, "Basic cm9vdDo=", 0);
    if (c.body.find("Success") == std::string::npos) throw std::runtime_error("commit failed: " + c.body);
    secs += std::chrono::duration<double>(Clock::now() - t0).count();
    cpu += thread_cpu_s(CLOCK_THREAD_CPUTIME_ID) - c0;
  }
  auto cs = e.checksum("d", "t");
  if (!cs || cs->second != rows) throw std::runtime_error("unexpected row count");
  double mb = static_cast<double>(body.size()) * loads / 1e6;
  return Rate{mb / secs, mb / cpu};
}

Rate over_http(const std::string& body, int loads) {
  namespace beast = boost::beast;
  namespace http = beast::http;
  Engine e(Config{});
  e.execute_sql("", "CREATE DATABASE d");
  e.execute_sql("d", kDdl);
  boost::asio::io_context ioc{1};
  ServerOptions so;
  so.be_ports = {0};
  Server srv(ioc, e, so);
  srv.start();
  std::thread server_thread([&] { ioc.run(); });
  clockid_t server_clk;
  pthread_getcpuclockid(server_thread.native_handle(), &server_clk);
  double secs = 0, cpu = 0;
  std::string error;
  try {
    for (int i = 0; i < loads; ++i) {
      boost::asio::io_context cio;
      boost::asio::ip::tcp::socket sock(cio);
      sock.connect({boost::asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(srv.be_ports()[0])});
      http::request<http::string_body> req{http::verb::put, "/api/d/t/_stream_load", 11};
      for (auto& [k, v] : kHeaders) req.set(k, v);
      req.set("label", "http_" + std::to_string(i));
      req.set(http::field::authorization, "Basic cm9vdDo=");
      req.body() = body;
      req.prepare_payload();
      auto t0 = Clock::now();
      double c0 = thread_cpu_s(server_clk);
      http::write(sock, req);
      beast::flat_buffer buf;
      http::response<http::string_body> res;
      http::read(sock, buf, res);
      secs += std::chrono::duration<double>(Clock::now() - t0).count();
      cpu += thread_cpu_s(server_clk) - c0;
      if (res.body().find("\"Success\"") == std::string::npos) throw std::runtime_error("load failed: " + res.body());
    }
  } catch (const std::exception& ex) {
    error = ex.what();
  }
  boost::asio::post(ioc, [&] {
    srv.stop();
    ioc.stop();
  });
  server_thread.join();
  if (!error.empty()) throw std::runtime_error(error);
  double mb = static_cast<double>(body.size()) * loads / 1e6;
  return Rate{mb / secs, mb / cpu};
}

}  // namespace

int main(int argc, char** argv) {
  keep_freed_heap();  // as doris-emulator's main() does
  int64_t rows = argc > 1 ? std::atoll(argv[1]) : 200000;
  int loads = argc > 2 ? std::atoi(argv[2]) : 3;
  std::string body = make_body(0, rows);
  std::printf("rows=%lld bytes=%zu avg_row_bytes=%.0f loads=%d\n", static_cast<long long>(rows), body.size(),
              static_cast<double>(body.size()) / static_cast<double>(rows), loads);
  try {
    Rate ip = in_process(body, loads, rows);
    std::printf("in_process_ingest_MBps=%.1f\nin_process_ingest_MB_per_cpu_s=%.1f\n", ip.wall_mb_s, ip.cpu_mb_s);
    Rate hp = over_http(body, loads);
    std::printf("loopback_http_ingest_MBps=%.1f\nloopback_http_server_MB_per_cpu_s=%.1f\n", hp.wall_mb_s, hp.cpu_mb_s);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench failed: %s\n", e.what());
    return 1;
  }
  return 0;
}
