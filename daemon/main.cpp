// cdc2doris: Debezium change events from Kafka into Apache Doris, exactly once.
// The command dispatcher; each command lives in its own cmd_*.cpp.
#include <csignal>
#include <iostream>
#include <set>
#include <string>
#include <string_view>

#include "config/config.hpp"
#include "daemon/cli.hpp"
#include "daemon/commands.hpp"
#include "daemon/exit_codes.hpp"

namespace cdc2doris::daemon {
namespace {

struct Command {
  std::string_view name;
  std::set<std::string> flags;  // options that take no value
  int (*handler)(const Args&);
};

// New commands (e.g. `status`, cmd_status.cpp) get one row here and a
// declaration in commands.hpp.
const Command kCommands[] = {
    {"run", {}, cmd_run},
    {"check", {"connect"}, cmd_check},
    {"state", {"yes"}, cmd_state},
    {"decode", {}, cmd_decode},
};

}  // namespace
}  // namespace cdc2doris::daemon

int main(int argc, char** argv) {
  using namespace cdc2doris::daemon;
  std::signal(SIGPIPE, SIG_IGN);
  if (argc < 2) {
    std::cerr << kUsage;
    return kExitUsage;
  }
  const std::string cmd = argv[1];
  const bool help = [&] {
    for (int i = 2; i < argc; ++i)
      if (std::string(argv[i]) == "--help" || std::string(argv[i]) == "-h") return true;
    return false;
  }();
  if (cmd == "--help" || cmd == "-h" || cmd == "help" || (help && cmd != "decode")) {
    std::cout << kUsage;
    return kExitOk;
  }
  if (cmd == "version" || cmd == "--version") {
    std::cout << "cdc2doris " << CDC2DORIS_VERSION << "\n";
    return kExitOk;
  }
  if (cmd == "config-reference") {
    std::cout << cdc2doris::config::reference_markdown();
    return kExitOk;
  }
  for (const auto& c : kCommands)
    if (c.name == cmd) return c.handler(parse_args(argc, argv, 2, c.flags));
  std::cerr << "cdc2doris: unknown command '" << cmd << "'\n\n" << kUsage;
  return kExitUsage;
}
