// Catch2 main shared by every test binary: adds the cleanup hooks so an
// interrupted run (Ctrl-C, ctest timeout) leaves no broker JVM, emulator or
// temp directory behind.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <csignal>

#include "tools/fixtures/cleanup.hpp"

int main(int argc, char* argv[]) {
  // A peer closing a socket mid-write must surface as an error, not kill us.
  std::signal(SIGPIPE, SIG_IGN);
  cdc2doris::test::cleanup::install_signal_handlers();
  int rc = Catch::Session().run(argc, argv);
  cdc2doris::test::cleanup::run_all();
  return rc;
}
