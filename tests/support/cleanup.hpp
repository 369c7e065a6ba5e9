#pragma once
// Cleanup registry for tests: child pids to SIGKILL and directories to remove
// when the test binary is interrupted (SIGINT/SIGTERM/SIGHUP) or exits
// abnormally. Normal RAII destructors unregister what they clean themselves.
#include <string>
#include <sys/types.h>

namespace cdc2doris::test::cleanup {
void add_pid(pid_t pid);
void remove_pid(pid_t pid);
void add_dir(const std::string& path);
void remove_dir(const std::string& path);
// Kills registered children and removes registered dirs. Async-signal-tolerant
// enough for our use: called from the signal handler right before _exit.
void run_all();
void install_signal_handlers();
}  // namespace cdc2doris::test::cleanup
