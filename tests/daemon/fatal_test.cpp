// A daemon that dies of something it did not choose (a fatal signal,
// std::terminate) says so in its log: the signal, who sent it, a backtrace,
// or the uncaught exception; and it still dies of it (exit status and core
// dump unchanged). Neither needs Kafka or Doris: the daemon is killed while
// it waits for them.
#include <catch2/catch.hpp>

#include <csignal>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include "daemon/fatal_report.hpp"
#include "tools/fixtures/process.hpp"
#include "tools/fixtures/temp_dir.hpp"

using namespace cdc2doris;
using namespace cdc2doris::test;
using namespace std::chrono_literals;

namespace {

std::string read(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

// A sanitizer build keeps the sanitizer's fault handlers instead (see
// fatal_report.hpp): a fault there ends in the sanitizer's report.
#if defined(CDC2DORIS_REPORTS_FATAL_SIGNALS)
TEST_CASE("daemon: a fatal signal is logged with its sender and a backtrace, and still ends the process",
          "[daemon][fatal]") {
  const int sig = GENERATE(SIGSEGV, SIGABRT, SIGBUS);
  const char* name = sig == SIGSEGV ? "SIGSEGV" : sig == SIGABRT ? "SIGABRT" : "SIGBUS";
  INFO(name);
  TempDir dir("fatal");
  // Nothing listens on these ports: the daemon runs and retries.
  const std::string kafka = "127.0.0.1:" + std::to_string(free_port());
  const std::string fe = "127.0.0.1:" + std::to_string(free_port());
  std::ofstream(dir / "cfg.yaml") << "kafka:\n  bootstrap_servers: \"" << kafka
                                  << "\"\n  group_id: fatal-test\n  topic_regex: \"^fatal\\\\..*\"\n"
                                  << "doris:\n  fe: [\"" << fe << "\"]\n  user: root\n  password: \"\"\n"
                                  << "delivery:\n  label_prefix: fatal\n"
                                  << "state:\n  dir: " << (dir / "state").string() << "\n"
                                  << "admin:\n  listen: \"127.0.0.1:" << free_port() << "\"\n";
  const auto log = (dir / "daemon.log").string();
  Process daemon(ProcessOptions{{CDC2DORIS_DAEMON_BIN, "run", "--config", (dir / "cfg.yaml").string()}, {}, log, log, ""});
  auto deadline = std::chrono::steady_clock::now() + 30s;
  while (read(log).find("admin endpoint on") == std::string::npos) {
    INFO(read(log));
    REQUIRE(daemon.running());
    REQUIRE(std::chrono::steady_clock::now() < deadline);
    std::this_thread::sleep_for(50ms);
  }

  daemon.signal(sig);
  const auto status = daemon.wait(30s);
  const std::string out = read(log);
  INFO(out);
  CHECK(status == std::optional<int>(128 + sig));
  CHECK_THAT(daemon.how_ended(), Catch::StartsWith("killed by signal " + std::to_string(sig)));
  CHECK_THAT(out, Catch::Contains("cdc2doris: fatal signal " + std::to_string(sig) + " (" + name + ") sent by pid " +
                                  std::to_string(::getpid())));
  CHECK_THAT(out, Catch::Contains("Backtrace:\n"));
  // The frames are the binary's and libc's (symbol names need -rdynamic; addresses are enough for addr2line).
  CHECK_THAT(out, Catch::Contains("cdc2doris("));
}
#endif

TEST_CASE("daemon: std::terminate logs the uncaught exception before the process aborts", "[daemon][fatal]") {
  TempDir dir("fatal");
  const auto out_file = dir / "out.log";
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    const int fd = ::open(out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    // The child inherited Catch's own SIGABRT handler, which allocates (TSan
    // then reports a signal-unsafe call and exits 66 instead of aborting).
    ::signal(SIGABRT, SIG_DFL);
    daemon::install_fatal_reporting();
    // An exception escaping a thread's function: std::terminate.
    std::thread([] { throw std::runtime_error("escaped from a worker thread"); }).join();
    ::_exit(0);  // not reached
  }
  int st = 0;
  REQUIRE(::waitpid(pid, &st, 0) == pid);
  const std::string out = read(out_file);
  INFO(out);
  CHECK(WIFSIGNALED(st));
  CHECK(WTERMSIG(st) == SIGABRT);
  CHECK_THAT(out, Catch::Contains("fatal: uncaught exception of type std::runtime_error: escaped from a worker thread; "
                                  "aborting"));
#if defined(CDC2DORIS_REPORTS_FATAL_SIGNALS)
  CHECK_THAT(out, Catch::Contains("fatal signal 6 (SIGABRT) raised by the process itself (abort)"));
#endif
}
