// cdc2doris: Debezium change events from Kafka into Apache Doris, exactly once.
// The command dispatcher; each command lives in its own cmd_*.cpp.
#include <csignal>
#include <exception>
#include <iostream>
#include <string>
#include <string_view>

#include "config/config.hpp"
#include "core/common/redact.hpp"
#include "daemon/cli.hpp"
#include "daemon/commands.hpp"
#include "daemon/exit_codes.hpp"
#include "daemon/fatal_report.hpp"

namespace cdc2doris::daemon {
namespace {

// New commands (e.g. `status`, cmd_status.cpp) get one row here and a
// declaration in commands.hpp. Options not listed are usage errors.
const Command kCommands[] = {
    {"run", kRunUsage, {}, {"config"}, 0, cmd_run},
    {"check", kCheckUsage, {"connect"}, {"config", "timeout"}, 0, cmd_check},
    {"state", kStateUsage, {"yes", "force"}, {"config", "label-prefix", "from-epoch", "table"}, 1, cmd_state},
    {"decode", "", {}, {}, 0, cmd_decode, /*own_arguments=*/true},
    {"config-reference", kConfigReferenceUsage, {}, {}, 0, cmd_config_reference},
    {"version", kVersionUsage, {}, {}, 0, cmd_version},
    {"status", kStatusUsage, {}, {"config", "admin", "token-file"}, 0, cmd_status},
};

int dispatch(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << kUsage;
    return kExitUsage;
  }
  const std::string_view name = argv[1];
  if (name == "--help" || name == "-h" || name == "help") {
    std::cout << kUsage;
    return kExitOk;
  }
  if (name == "--version") return cmd_version(Args{});
  for (const auto& c : kCommands) {
    if (c.name != name) continue;
    if (c.own_arguments) return c.handler(Args{std::vector<std::string>(argv + 2, argv + argc), {}, {}});
    auto parsed = parse_args(c, argc, argv, 2);
    if (auto* usage_error = std::get_if<std::string>(&parsed)) {
      std::cerr << "cdc2doris " << c.name << ": " << *usage_error << "\n\n" << c.usage;
      return kExitUsage;
    }
    const Args& a = std::get<Args>(parsed);
    if (a.has("help")) {
      std::cout << c.usage;
      return kExitOk;
    }
    return c.handler(a);
  }
  std::cerr << "cdc2doris: unknown command '" << name << "'\n\n" << kUsage;
  return kExitUsage;
}

}  // namespace
}  // namespace cdc2doris::daemon

int main(int argc, char** argv) {
  std::signal(SIGPIPE, SIG_IGN);
  // A crash or std::terminate says so in the log instead of ending silently.
  cdc2doris::daemon::install_fatal_reporting();
  // Bad input is caught by validation and exits 2; anything that still
  // escapes ends with its message and exit 1, never with terminate()'s SIGABRT
  // (which systemd's RestartPreventExitStatus would not stop from looping).
  try {
    return cdc2doris::daemon::dispatch(argc, argv);
  } catch (const std::exception& e) {
    // No configuration is at hand here: URL userinfo is what can be cleaned.
    std::cerr << "cdc2doris: fatal: " << cdc2doris::redact_secrets(e.what()) << "\n";
    return cdc2doris::daemon::kExitFatal;
  }
}
