#include "daemon/cli.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>

#include "core/common/build_info.hpp"
#include "daemon/exit_codes.hpp"

namespace cdc2doris::daemon {

const char* const kUsage = R"(cdc2doris — Debezium change events from Kafka into Apache Doris, exactly once.

Usage:
  cdc2doris run --config FILE              run the pipeline until SIGTERM/SIGINT
  cdc2doris check --config FILE [--connect [--timeout DURATION]]
                                           validate the configuration; with --connect also
                                           reach Kafka, the topics, the group, every Doris FE and the tables
  cdc2doris state show --config FILE       print the checkpoint state (JSON)
  cdc2doris state reset --config FILE --yes
                                           delete the checkpoint state
  cdc2doris state abort-lingering --config FILE --label-prefix P
                                           abort a retired instance's lingering Doris txns
  cdc2doris decode [--config FILE] [--framed] [options]
                                           decode Debezium JSON lines from stdin (dry run)
  cdc2doris status --config FILE | --admin HOST:PORT [--token-file FILE]
                                           the running daemon's health, epochs, lag, freshness
                                           and errors per table and partition (exit 1: not ready)
  cdc2doris config-reference               print the configuration reference (Markdown)
  cdc2doris version                        print the version and git commit
  cdc2doris COMMAND --help                 help for one command

Exit codes:
  0  success / clean shutdown
  1  the pipeline stopped on a fatal error (auth, unknown table, bad record under 'fail', ...)
  2  usage or configuration error
  3  the state directory is locked by another process, corrupt, or from a newer version
  4  shutdown incomplete: the deadline passed, or a second SIGTERM/SIGINT, before the last
     epoch committed (the log names it; the next start recovers it)
  5  check --connect found a problem
)";

const char* const kRunUsage = R"(Usage: cdc2doris run --config FILE

Runs the pipeline until SIGTERM/SIGINT: consumes the configured topics, loads
every table through Doris Stream Load 2PC and checkpoints each epoch in
state.dir. On SIGTERM the current epoch is finished and committed within
delivery.shutdown_deadline. The configuration is validated first, exactly as
`cdc2doris check` does.

Exit codes: 0 clean shutdown, 1 fatal error, 2 configuration error, 3 state
directory locked/corrupt/newer, 4 shutdown deadline passed.
)";

const char* const kCheckUsage = R"(Usage: cdc2doris check --config FILE [--connect [--timeout DURATION]]

Validates the configuration as `run` does (every rejected value is named with
file:line:column). With --connect it also
  - asks Kafka for metadata with the configured security settings (fails if no
    broker answers within --timeout, default 10s, or at once when Kafka refuses
    the login, the TLS handshake or the client certificate, saying which and
    the fix),
  - checks that every configured topic exists (a regex matching none is a warning),
  - reads the consumer group's committed offsets (fails without READ on the group),
  - calls every Doris FE with the configured user and password,
  - asks Doris for the schema of every target table known from the routing
    configuration or derived from the existing topics' names.
Every failure is printed; secrets never are.

Exit codes: 0 valid (and everything reached), 2 configuration error, 5 --connect found a problem.
)";

const char* const kStateUsage = R"(Usage: cdc2doris state show --config FILE
       cdc2doris state reset --config FILE --yes
       cdc2doris state abort-lingering --config FILE --label-prefix P
                 [--from-epoch N] [--table db.table] [--force]

show   prints the checkpoint state in state.dir as JSON (epochs, their
       transactions and offsets, committed offsets, label prefixes).
reset  deletes every checkpoint; the next run resumes from the consumer
       group's offsets. Needs --yes.
Neither creates state.dir: a path without checkpoint state is an error for
show and nothing to do for reset.
abort-lingering aborts the RUNNING/PRECOMMITTED Doris txns a retired instance
(label prefix P, e.g. a removed StatefulSet pod, or a lost state directory)
left behind: every epoch of P after the newest one the consumer group names
(or from --from-epoch), for the configuration's explicit targets and --table.
A pending epoch the group names is left to the owner of its partitions.

Exit codes: 0 done, 2 usage or configuration error, 3 no state there, or it is
locked by a running daemon, corrupt or from a newer version.
)";

const char* const kConfigReferenceUsage = R"(Usage: cdc2doris config-reference

Prints the configuration reference (docs/configuration.md) as Markdown.
)";

const char* const kStatusUsage = R"(Usage: cdc2doris status --config FILE [--token-file FILE]
       cdc2doris status --admin HOST:PORT [--token-file FILE]

Reads the running daemon's /status (at admin.listen of FILE, or HOST:PORT;
with admin.token set, presenting the token of FILE's config or --token-file) and
prints readiness with its reasons, the open and committing epochs, Kafka and
Doris state, per table rows, last commit, freshness and errors, per partition
position, committed offset, high watermark and lag, and the recent errors.
Exit 0 when ready, 1 when not ready or not reachable, 2 on a usage error.
)";

const char* const kVersionUsage = R"(Usage: cdc2doris version

Prints the version and the git commit the binary was built from.
)";

std::variant<Args, std::string> parse_args(const Command& command, int argc, char** argv, int from) {
  Args a;
  for (int i = from; i < argc; ++i) a.raw.emplace_back(argv[i]);
  for (int i = from; i < argc; ++i) {
    const std::string s = argv[i];
    if (s == "-h") {
      a.options["help"] = "";
      continue;
    }
    if (s.rfind("--", 0) != 0 || s == "--") {
      a.positional.push_back(s);
      continue;
    }
    std::string key = s.substr(2), val;
    const auto eq = key.find('=');
    if (eq != std::string::npos) {
      val = key.substr(eq + 1);
      key.resize(eq);
    }
    if (key == "help" || command.flags.count(key)) {
      if (eq != std::string::npos) return "option --" + key + " takes no value";
    } else if (command.options.count(key)) {
      if (eq == std::string::npos) {
        if (i + 1 >= argc) return "option --" + key + " needs a value";
        val = argv[++i];
      }
    } else {
      return "unknown option " + s.substr(0, eq == std::string::npos ? s.npos : eq + 2);
    }
    a.options[key] = val;
  }
  if (a.has("help")) return a;  // help wins over any other mistake
  if (a.positional.size() > command.max_positional)
    return "unexpected argument '" + a.positional[command.max_positional] + "'";
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

void adopt_recorded_label_prefix(config::Config& cfg, state::CheckpointStore& store) {
  std::vector<std::pair<std::string, uint64_t>> recorded;
  for (const auto& use : store.label_prefixes()) recorded.emplace_back(use.prefix, use.last_epoch);
  if (auto kept = cfg.keep_recorded_label_prefix(recorded))
    spdlog::info("label prefix '{}': the one this state recorded its epochs under (delivery.label_prefix is not set; "
                 "the default for a new state names the instance)",
                 *kept);
}

std::string version_line() {
  return "cdc2doris " + std::string(build_info::version()) + " (commit " + std::string(build_info::commit()) + ")";
}

}  // namespace cdc2doris::daemon
