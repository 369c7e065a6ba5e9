// `cdc2doris version` and `cdc2doris config-reference`.
#include <iostream>

#include "config/config.hpp"
#include "daemon/commands.hpp"
#include "daemon/exit_codes.hpp"

namespace cdc2doris::daemon {

int cmd_version(const Args&) {
  std::cout << version_line() << "\n";
  return kExitOk;
}

int cmd_config_reference(const Args&) {
  std::cout << config::reference_markdown();
  return kExitOk;
}

}  // namespace cdc2doris::daemon
