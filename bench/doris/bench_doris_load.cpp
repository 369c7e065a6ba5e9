// bench-doris-load [--seconds N] [--streams N] [--row-bytes N] [--no-count-only]
//
// 1. One stream's throughput of ~600-byte JSON rows into one emulator BE on
//    loopback (emulator in count-only mode so the client is what is measured),
//    writing row by row as the pipeline does; gzip off and on. The same into
//    a discard sink (a forked child that only reads the socket) shows the
//    client's own ceiling when the emulator is the bottleneck.
// 2. RSS per open stream with N (default 1000) table streams open at once
//    (each has sent its headers and one row, i.e. holds a BE connection and a
//    PREPARE txn), beyond the configured buffers.
// Prints human-readable lines and one JSON summary line at the end.
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstring>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "core/doris/client.hpp"
#include "tools/doris_emulator/launcher.hpp"

using namespace cdc2doris;
using namespace cdc2doris::doris;
using Clock = std::chrono::steady_clock;

namespace {

long rss_bytes() {
  std::ifstream f("/proc/self/statm");
  long size = 0, resident = 0;
  f >> size >> resident;
  return resident * sysconf(_SC_PAGESIZE);
}

std::vector<std::string> make_rows(size_t row_bytes, size_t count) {
  std::vector<std::string> rows;
  for (size_t i = 0; i < count; ++i) {
    std::string r = "{\"id\":" + std::to_string(i) + ",\"name\":\"customer-" + std::to_string(i * 7919) +
                    "\",\"amount\":" + std::to_string(i % 100000) + ".25,\"ts\":\"2026-01-01 12:00:00\",\"note\":\"";
    // Words drawn pseudo-randomly from a small vocabulary plus numbers: about
    // as compressible as real CDC text columns (gzip ~3-5x), unlike a repeated
    // filler that would flatter gzip.
    static const char* kWords[] = {"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel",
                                   "india", "juliet", "kilo", "lima", "mike", "november", "oscar", "papa"};
    uint64_t x = i * 6364136223846793005ull + 1442695040888963407ull;
    while (r.size() + 32 < row_bytes) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      r += kWords[(x >> 33) % 16];
      r += ' ';
      r += std::to_string((x >> 17) % 100000);
      r += ' ';
    }
    r += "\",\"__DORIS_DELETE_SIGN__\":0}\n";
    rows.push_back(std::move(r));
  }
  return rows;
}

// A BE that only reads: answers 100 Continue, discards the chunked body,
// answers Success. Runs in a forked child so its CPU is not the client's.
struct Sink {
  pid_t pid = -1;
  int port = 0;
  Sink() {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || listen(fd, 16) != 0) {
      std::perror("sink");
      std::exit(1);
    }
    socklen_t len = sizeof a;
    getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    port = ntohs(a.sin_port);
    pid = fork();
    if (pid != 0) {
      close(fd);
      return;
    }
    std::vector<char> buf(1 << 20);
    for (;;) {
      int c = accept(fd, nullptr, nullptr);
      if (c < 0) _exit(0);
      std::string head;
      std::string tail;
      bool in_body = false;
      for (;;) {
        ssize_t n = recv(c, buf.data(), buf.size(), 0);
        if (n <= 0) break;
        if (!in_body) {
          head.append(buf.data(), static_cast<size_t>(n));
          auto e = head.find("\r\n\r\n");
          if (e == std::string::npos) continue;
          in_body = true;
          static const char kContinue[] = "HTTP/1.1 100 Continue\r\n\r\n";
          send(c, kContinue, sizeof kContinue - 1, MSG_NOSIGNAL);
          std::string rest = head.substr(e + 4);
          std::memcpy(buf.data(), rest.data(), rest.size());
          n = static_cast<ssize_t>(rest.size());
        }
        // The body ends with "\r\n0\r\n\r\n" (JSON rows never contain CR).
        size_t take = std::min<size_t>(static_cast<size_t>(n), 7);
        tail.append(buf.data() + n - static_cast<ssize_t>(take), take);
        if (tail.size() > 7) tail.erase(0, tail.size() - 7);
        if (tail == "\r\n0\r\n\r\n") {
          std::string body = "{\"TxnId\": 1, \"Label\": \"x\", \"Status\": \"Success\", \"Message\": \"OK\", \"NumberLoadedRows\": -1}\n";
          std::string res = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
                            std::to_string(body.size()) + "\r\n\r\n" + body;
          send(c, res.data(), res.size(), MSG_NOSIGNAL);
          break;
        }
      }
      close(c);
    }
  }
  ~Sink() {
    if (pid > 0) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  }
};

double cpu_seconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

struct Throughput {
  double mb_per_s = 0;
  double raw_mb = 0;
  double wire_mb = 0;
  int64_t rows = 0;
  double seconds = 0;
  double cpu_s_per_gb = 0;  // client CPU (all threads) per GB of rows
};

Throughput one_stream(const std::string& fe, const std::string& be, bool gzip, double seconds,
                      const std::vector<std::string>& rows, int run) {
  const bool sink = fe.empty();
  ClientConfig cfg;
  cfg.fe_urls = {"http://" + (sink ? be : fe)};
  cfg.user = "root";
  cfg.route = Route::DirectBe;
  cfg.backends = {be};
  cfg.gzip = gzip;
  cfg.buffer_bytes = 4 << 20;
  cfg.chunk_bytes = 256 << 10;
  auto client = make_client(cfg);
  // One stream at a time, rotated well below Doris' 10 GB per-load body
  // limit (the emulator enforces it), as the pipeline's epoch_max_bytes does.
  constexpr uint64_t kLoadCap = 4ULL << 30;
  auto t0 = Clock::now();
  double cpu0 = cpu_seconds();
  auto deadline = t0 + std::chrono::duration<double>(seconds);
  uint64_t bytes = 0, wire = 0;
  int64_t n = 0;
  for (int part = 0; Clock::now() < deadline; ++part) {
    LoadSpec spec;
    spec.db = "bench";
    spec.table = "t";
    spec.label = std::string("tp_") + (gzip ? "gz_" : "plain_") + std::to_string(run) + "_" + std::to_string(part);
    spec.unique_key = true;
    auto stream = client->open_load(spec);
    uint64_t load_bytes = 0;
    int64_t load_rows = 0;
    while (Clock::now() < deadline && load_bytes < kLoadCap) {
      for (int k = 0; k < 4096; ++k) {  // check the clock every 4096 rows
        const std::string& r = rows[static_cast<size_t>(n) % rows.size()];
        if (auto e = stream->write(r); !e) {
          std::cerr << "write failed: " << e.error().what() << "\n";
          std::exit(1);
        }
        load_bytes += r.size();
        ++load_rows;
        ++n;
      }
    }
    auto res = stream->finish();
    if (!res) {
      auto& e = res.error();
      std::cerr << "finish failed: " << e.what() << "\n";
      std::exit(1);
    }
    auto& lr = *res;
    if (!sink && lr.loaded_rows != load_rows) {
      std::cerr << "emulator counted " << lr.loaded_rows << " rows, sent " << load_rows << "\n";
      std::exit(1);
    }
    if (!sink) (void)client->abort("bench", lr.txn_id);  // cleanup only
    bytes += load_bytes;
    wire += lr.body_bytes;
  }
  double secs = std::chrono::duration<double>(Clock::now() - t0).count();
  double cpu = cpu_seconds() - cpu0;
  Throughput t;
  t.rows = n;
  t.seconds = secs;
  t.raw_mb = static_cast<double>(bytes) / 1e6;
  t.wire_mb = static_cast<double>(wire) / 1e6;
  t.mb_per_s = t.raw_mb / secs;
  t.cpu_s_per_gb = cpu / (t.raw_mb / 1000);
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 5;
  int streams = 1000;
  size_t row_bytes = 600;
  bool count_only = true;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--seconds" && i + 1 < argc) seconds = std::stod(argv[++i]);
    else if (a == "--streams" && i + 1 < argc) streams = std::stoi(argv[++i]);
    else if (a == "--row-bytes" && i + 1 < argc) row_bytes = std::stoul(argv[++i]);
    else if (a == "--no-count-only") count_only = false;
    else {
      std::cerr << "usage: bench-doris-load [--seconds N] [--streams N] [--row-bytes N] [--no-count-only]\n";
      return 2;
    }
  }
  // 1,000 streams = 1,000 client sockets here and 1,000 in the emulator.
  rlimit rl{};
  getrlimit(RLIMIT_NOFILE, &rl);
  rl.rlim_cur = rl.rlim_max;
  setrlimit(RLIMIT_NOFILE, &rl);

  test::EmulatorOptions eo;
  eo.count_only = count_only;
  eo.extra_args = {"--no-fsync"};
  test::Emulator emu(eo);
  emu.sql("", "CREATE DATABASE bench");
  emu.sql("bench", "CREATE TABLE t (id INT, name STRING, amount DECIMAL(12,2), ts DATETIME, note STRING) "
                   "UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1");

  auto rows = make_rows(row_bytes, 4096);
  auto plain = one_stream(emu.fe(), emu.bes()[0], false, seconds, rows, 0);
  std::printf("emulator BE, gzip off: %.1f MB/s (%lld rows, %.0f MB in %.2f s, client %.2f CPU-s/GB)\n",
              plain.mb_per_s, static_cast<long long>(plain.rows), plain.raw_mb, plain.seconds, plain.cpu_s_per_gb);
  auto gz = one_stream(emu.fe(), emu.bes()[0], true, seconds, rows, 1);
  std::printf("emulator BE, gzip on:  %.1f MB/s of rows (%.1f MB/s on the wire, ratio %.2f, client %.2f CPU-s/GB)\n",
              gz.mb_per_s, gz.wire_mb / gz.seconds, gz.raw_mb / gz.wire_mb, gz.cpu_s_per_gb);
  Throughput sink_plain, sink_gz;
  {
    Sink sink;
    std::string be = "127.0.0.1:" + std::to_string(sink.port);
    sink_plain = one_stream("", be, false, seconds, rows, 2);
    sink_gz = one_stream("", be, true, seconds, rows, 3);
  }
  std::printf("discard sink, gzip off: %.1f MB/s (client %.2f CPU-s/GB)\n", sink_plain.mb_per_s,
              sink_plain.cpu_s_per_gb);
  std::printf("discard sink, gzip on:  %.1f MB/s (client %.2f CPU-s/GB)\n", sink_gz.mb_per_s, sink_gz.cpu_s_per_gb);

  // ---- memory per open stream
  ClientConfig cfg;
  cfg.fe_urls = {"http://" + emu.fe()};
  cfg.user = "root";
  cfg.route = Route::DirectBe;
  cfg.backends = {emu.bes()[0]};
  auto client = make_client(cfg);
  {
    // Warm-up: the first stream pays for one-off allocations (resolver, TLS-less
    // strand pool, logger), which are not per-stream costs.
    LoadSpec s;
    s.db = "bench";
    s.table = "t";
    s.label = "warm";
    auto st = client->open_load(s);
    (void)st->write(rows[0]);  // finish() reports a failure
    auto r = st->finish();
    if (r) (void)client->abort("bench", r->txn_id);
  }
  long before = rss_bytes();
  std::vector<std::unique_ptr<LoadStream>> open;
  open.reserve(static_cast<size_t>(streams));
  for (int i = 0; i < streams; ++i) {
    LoadSpec s;
    s.db = "bench";
    s.table = "t";
    s.label = "mem_" + std::to_string(i);
    s.unique_key = true;
    open.push_back(client->open_load(s));
    if (auto e = open.back()->write(rows[static_cast<size_t>(i) % rows.size()]); !e) {
      std::cerr << "write failed: " << e.error().what() << "\n";
      return 1;
    }
  }
  // Let every stream connect and get its 100 Continue.
  std::this_thread::sleep_for(std::chrono::seconds(2));
  long after = rss_bytes();
  double per_stream = static_cast<double>(after - before) / streams;
  std::printf("%d open streams: RSS +%.1f MiB, %.1f KiB per stream (configured buffer %zu KiB, lazily used)\n",
              streams, static_cast<double>(after - before) / (1 << 20), per_stream / 1024, cfg.buffer_bytes >> 10);
  auto t0 = Clock::now();
  int ok = 0;
  std::vector<int64_t> txns;
  for (auto& s : open) {
    auto r = s->finish();
    if (r) {
      ++ok;
      txns.push_back(r->txn_id);
    }
  }
  double finish_s = std::chrono::duration<double>(Clock::now() - t0).count();
  std::vector<std::future<TxnResult>> aborts;
  for (auto id : txns) aborts.push_back(client->abort_async("bench", id));
  for (auto& f : aborts) (void)f.get();  // cleanup only
  std::printf("finished %d/%d streams in %.2f s\n", ok, streams, finish_s);

  std::printf(
      "{\"bench\":\"doris-load\",\"row_bytes\":%zu,\"count_only\":%s,\"one_stream_mb_s\":%.1f,"
      "\"one_stream_gzip_mb_s\":%.1f,\"gzip_ratio\":%.2f,\"sink_mb_s\":%.1f,\"sink_gzip_mb_s\":%.1f,"
      "\"client_cpu_s_per_gb\":%.2f,\"client_gzip_cpu_s_per_gb\":%.2f,\"streams\":%d,"
      "\"rss_per_stream_kib\":%.1f,\"streams_finished\":%d,\"finish_all_s\":%.2f}\n",
      row_bytes, count_only ? "true" : "false", plain.mb_per_s, gz.mb_per_s, gz.raw_mb / gz.wire_mb,
      sink_plain.mb_per_s, sink_gz.mb_per_s, sink_plain.cpu_s_per_gb, sink_gz.cpu_s_per_gb, streams,
      per_stream / 1024, ok, finish_s);
  return ok == streams ? 0 : 1;
}
