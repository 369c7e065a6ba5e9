#include "daemon/cli.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>

#include "daemon/exit_codes.hpp"

namespace cdc2doris::daemon {

const char* const kUsage = R"(cdc2doris — Debezium change events from Kafka into Apache Doris, exactly once.

Usage:
  cdc2doris run --config FILE              run the pipeline until SIGTERM/SIGINT
  cdc2doris check --config FILE [--connect]
                                           validate the configuration; with --connect also
                                           reach Kafka and every Doris FE and check the tables
  cdc2doris state show --config FILE       print the checkpoint state (JSON)
  cdc2doris state reset --config FILE --yes
                                           delete the checkpoint state
  cdc2doris decode [--config FILE] [--framed] [options]
                                           decode Debezium JSON lines from stdin (dry run)
  cdc2doris config-reference               print the configuration reference (Markdown)
  cdc2doris version                        print the version
  cdc2doris COMMAND --help                 help for one command

Exit codes:
  0  success / clean shutdown
  1  the pipeline stopped on a fatal error (auth, unknown table, bad record under 'fail', ...)
  2  usage or configuration error
  3  the state directory is locked by another process, corrupt, or from a newer version
  4  shutdown deadline passed before the last epoch committed (the next start recovers it)
  5  check --connect found a problem
)";

Args parse_args(int argc, char** argv, int from, const std::set<std::string>& flags) {
  Args a;
  for (int i = from; i < argc; ++i) a.raw.emplace_back(argv[i]);
  for (int i = from; i < argc; ++i) {
    std::string s = argv[i];
    if (s.rfind("--", 0) == 0) {
      std::string key = s.substr(2), val;
      if (auto eq = key.find('='); eq != std::string::npos) {
        val = key.substr(eq + 1);
        key.resize(eq);
      } else if (!flags.count(key) && i + 1 < argc) {
        val = argv[++i];
      }
      a.options[key] = val;
    } else {
      a.positional.push_back(s);
    }
  }
  return a;
}

config::Config load_config_or_exit(const Args& a) {
  if (!a.has("config") || a.get("config").empty()) {
    std::cerr << "cdc2doris: --config FILE is required\n";
    std::exit(kExitUsage);
  }
  try {
    return config::load_file(a.get("config"));
  } catch (const config::ConfigError& e) {
    std::cerr << "cdc2doris: configuration error: " << e.what() << "\n";
    std::exit(kExitUsage);
  }
}

std::unique_ptr<state::RocksCheckpointStore> open_state_or_exit(const config::Config& cfg) {
  try {
    state::RocksStoreOptions o;
    o.path = cfg.state_dir;
    o.retain_epochs = static_cast<size_t>(std::max(1, cfg.state_retention_epochs));
    return std::make_unique<state::RocksCheckpointStore>(o);
  } catch (const state::StateError& e) {
    spdlog::error("checkpoint state: {}", e.what());
    std::cerr << "cdc2doris: checkpoint state: " << e.what() << "\n";
    std::exit(kExitState);
  }
}

}  // namespace cdc2doris::daemon
