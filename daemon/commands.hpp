#pragma once
// One function per cdc2doris command, each in its own cmd_*.cpp. main.cpp's
// command table maps names to these.
#include "daemon/cli.hpp"

namespace cdc2doris::daemon {

int cmd_run(const Args& a);                 // cmd_run.cpp
int cmd_check(const Args& a);               // cmd_check.cpp
int cmd_state(const Args& a);               // cmd_state.cpp
int cmd_decode(const Args& a);              // cmd_decode.cpp: parses a.raw itself
int cmd_version(const Args& a);             // cmd_info.cpp
int cmd_config_reference(const Args& a);    // cmd_info.cpp
int cmd_status(const Args& a);              // cmd_status.cpp

}  // namespace cdc2doris::daemon
