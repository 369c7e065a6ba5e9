#pragma once
// The command line of the cdc2doris binary: argument parsing, the usage
// texts, and the helpers every command shares (loading the configuration,
// opening the checkpoint state). Each command lives in its own cmd_*.cpp;
// main.cpp only dispatches.
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "config/config.hpp"
#include "state/rocksdb_store.hpp"

namespace cdc2doris::daemon {

struct Args {
  std::vector<std::string> raw;  // every argument after the command name, untouched
  std::vector<std::string> positional;
  std::map<std::string, std::string> options;  // --key value / --key=value / --flag ("")
  bool has(const std::string& k) const { return options.count(k) > 0; }
  std::string get(const std::string& k) const {
    auto it = options.find(k);
    return it == options.end() ? "" : it->second;
  }
};

struct Command {
  std::string_view name;
  std::string_view usage;         // printed by `cdc2doris NAME --help` and after a usage error
  std::set<std::string> flags;    // options without a value (--help is always one)
  std::set<std::string> options;  // options with a value
  size_t max_positional = 0;
  int (*handler)(const Args&) = nullptr;
  bool own_arguments = false;  // the handler parses Args::raw itself (decode)
};

// The arguments from argv[from] on, or why they are not what `command` takes
// (an unknown option, a missing value, too many positional arguments).
std::variant<Args, std::string> parse_args(const Command& command, int argc, char** argv, int from);

// The global usage text (`cdc2doris --help`) and each command's.
extern const char* const kUsage;
extern const char* const kRunUsage;
extern const char* const kCheckUsage;
extern const char* const kStateUsage;
extern const char* const kConfigReferenceUsage;
extern const char* const kVersionUsage;
extern const char* const kStatusUsage;

// Exits with kExitUsage (and the reason on stderr) when --config is missing or invalid.
config::Config load_config_or_exit(const Args& a);
// Exits with kExitState when the state directory cannot be opened.
std::unique_ptr<state::RocksCheckpointStore> open_state_or_exit(const config::Config& cfg);
// Config::keep_recorded_label_prefix with the store's recorded prefixes (logged when adopted).
void adopt_recorded_label_prefix(config::Config& cfg, state::CheckpointStore& store);

// "cdc2doris 0.1.0 (commit abc1234)": the `version` line and the first log line of `run`.
std::string version_line();

}  // namespace cdc2doris::daemon
