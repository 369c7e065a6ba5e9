#pragma once
// The command line of the cdc2doris binary: argument parsing, the usage
// texts, and the helpers every command shares (loading the configuration,
// opening the checkpoint state). Each command lives in its own cmd_*.cpp;
// main.cpp only dispatches.
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "state/rocksdb_store.hpp"

#ifndef CDC2DORIS_VERSION
#define CDC2DORIS_VERSION "0.0.0-dev"
#endif

namespace cdc2doris::daemon {

struct Args {
  std::vector<std::string> raw;  // every argument after the command name, untouched
  std::vector<std::string> positional;
  std::map<std::string, std::string> options;  // --key value / --flag ("")
  bool has(const std::string& k) const { return options.count(k) > 0; }
  std::string get(const std::string& k) const {
    auto it = options.find(k);
    return it == options.end() ? "" : it->second;
  }
};

// `flags` are the options that take no value.
Args parse_args(int argc, char** argv, int from, const std::set<std::string>& flags);

// The global usage text (`cdc2doris --help`).
extern const char* const kUsage;

// Exits with kExitUsage (and the reason on stderr) when --config is missing or invalid.
config::Config load_config_or_exit(const Args& a);
// Exits with kExitState when the state directory cannot be opened.
std::unique_ptr<state::RocksCheckpointStore> open_state_or_exit(const config::Config& cfg);

}  // namespace cdc2doris::daemon
