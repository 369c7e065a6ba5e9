// doris-emulator: a local Doris FE + BEs for tests, the demo and benchmarks.
// See docs/doris-emulator.md. Prints one JSON line on stdout when ready,
// logs to stderr only.
#include "tools/doris_emulator/server.hpp"

#include <boost/asio/signal_set.hpp>

#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>

namespace {

const char* kUsage =
    "usage: doris-emulator [--fe-port N] [--be-count N | --be-ports a,b,c] [--user NAME:PASSWORD]...\n"
    "                      [--data-dir DIR] [--precommit-timeout-s N] [--label-retention-s N]\n"
    "                      [--max-running-txns N] [--streaming-load-max-mb N] [--streaming-load-json-max-mb N]\n"
    "                      [--load-timeout-s N] [--count-only] [--no-fsync] [--host ADDR] [--query-port N]\n"
    "                      [--label-num-threshold N] [--txn-clean-interval-s N] [--alter-job-ms N]\n"
    "                      [--tls-cert PEM --tls-key PEM] [--extra-fe-ports a,b]\n";

int64_t to_int(const std::string& flag, const std::string& v) {
  try {
    size_t used = 0;
    int64_t r = std::stoll(v, &used);
    if (used != v.size() || r < 0) throw std::invalid_argument("x");
    return r;
  } catch (const std::exception&) {
    throw std::invalid_argument(flag + " needs a non-negative integer, got '" + v + "'");
  }
}

}  // namespace

int main(int argc, char** argv) {
  using namespace cdc2doris::emu;
  keep_freed_heap();
  Config cfg;
  ServerOptions so;
  int be_count = 1;
  bool users_given = false;
  try {
    for (int i = 1; i < argc; ++i) {
      std::string a = argv[i];
      auto val = [&]() -> std::string {
        if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
        return argv[++i];
      };
      if (a == "--fe-port") so.fe_port = static_cast<int>(to_int(a, val()));
      else if (a == "--be-count") be_count = static_cast<int>(to_int(a, val()));
      else if (a == "--be-ports") {
        std::string v = val();
        size_t p = 0;
        while (p <= v.size()) {
          auto c = v.find(',', p);
          so.be_ports.push_back(static_cast<int>(to_int(a, v.substr(p, c == std::string::npos ? std::string::npos : c - p))));
          if (c == std::string::npos) break;
          p = c + 1;
        }
      } else if (a == "--extra-fe-ports") {
        std::string v = val();
        for (size_t p = 0; p <= v.size();) {
          auto c = v.find(',', p);
          so.extra_fe_ports.push_back(
              static_cast<int>(to_int(a, v.substr(p, c == std::string::npos ? std::string::npos : c - p))));
          if (c == std::string::npos) break;
          p = c + 1;
        }
      } else if (a == "--user") {
        std::string v = val();
        auto c = v.find(':');
        if (c == std::string::npos || c == 0) throw std::invalid_argument("--user needs NAME:PASSWORD, got '" + v + "'");
        if (!users_given) cfg.users.clear();
        users_given = true;
        cfg.users[v.substr(0, c)] = v.substr(c + 1);
      } else if (a == "--data-dir") cfg.data_dir = val();
      else if (a == "--precommit-timeout-s") cfg.precommit_timeout_s = to_int(a, val());
      else if (a == "--label-retention-s") cfg.label_retention_s = to_int(a, val());
      else if (a == "--max-running-txns") cfg.max_running_txns = to_int(a, val());
      else if (a == "--label-num-threshold") {
        std::string v = val();
        cfg.label_num_threshold = v == "-1" ? -1 : to_int(a, v);  // Doris: <= 0 forgets by age only
      }
      else if (a == "--alter-job-ms") cfg.alter_job_ms = to_int(a, val());
      else if (a == "--txn-clean-interval-s") {
        cfg.txn_clean_interval_s = to_int(a, val());
        if (cfg.txn_clean_interval_s < 1) throw std::invalid_argument("--txn-clean-interval-s must be at least 1");
      }
      else if (a == "--streaming-load-max-mb") cfg.streaming_load_max_mb = to_int(a, val());
      else if (a == "--streaming-load-json-max-mb") cfg.streaming_load_json_max_mb = to_int(a, val());
      else if (a == "--load-timeout-s") cfg.default_load_timeout_s = to_int(a, val());
      else if (a == "--count-only") cfg.count_only = true;
      else if (a == "--no-fsync") cfg.fsync = false;
      else if (a == "--host") so.host = val();
      else if (a == "--tls-cert") so.tls_cert = val();
      else if (a == "--tls-key") so.tls_key = val();
      else if (a == "--query-port") {
        std::string v = val();
        so.query_port = v == "-1" ? -1 : static_cast<int>(to_int(a, v));  // -1: no query port
      }
      else if (a == "--help" || a == "-h") {
        std::fputs(kUsage, stdout);
        return 0;
      } else throw std::invalid_argument("unknown option " + a);
    }
    if (so.tls_cert.empty() != so.tls_key.empty()) throw std::invalid_argument("--tls-cert and --tls-key go together");
    if (so.be_ports.empty()) {
      if (be_count < 1) throw std::invalid_argument("--be-count must be at least 1");
      // Ports follow the FE port when it is fixed (8030 -> 8031, ...).
      for (int i = 0; i < be_count; ++i) so.be_ports.push_back(so.fe_port ? so.fe_port + 1 + i : 0);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "doris-emulator: %s\n%s", e.what(), kUsage);
    return 2;
  }

  try {
    Engine engine(cfg);
    engine.recover();
    boost::asio::io_context ioc{1};
    Server server(ioc, engine, so);
    boost::asio::signal_set signals(ioc, SIGINT, SIGTERM);
    signals.async_wait([&](const boost::system::error_code& ec, int sig) {
      if (ec) return;
      std::fprintf(stderr, "doris-emulator: signal %d, shutting down\n", sig);
      server.stop();
      ioc.stop();
    });
    server.start();
    std::cout << server.ready_line() << std::endl;
    std::fprintf(stderr, "doris-emulator: ready %s\n", server.ready_line().c_str());
    ioc.run();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "doris-emulator: fatal: %s\n", e.what());
    return 1;
  }
  return 0;
}
