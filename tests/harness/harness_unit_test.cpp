#include <catch2/catch.hpp>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <vector>

#include "core/common/error.hpp"
#include "tools/fixtures/process.hpp"
#include "tools/fixtures/temp_dir.hpp"

using namespace cdc2doris::test;
using namespace std::chrono_literals;

TEST_CASE("Process: reads stdout lines and reports the exit code", "[harness]") {
  Process p({{"sh", "-c", "echo first; echo second; exit 7"}, {}, "", "", ""});
  CHECK(p.read_line(5s) == std::optional<std::string>("first"));
  CHECK(p.read_line(5s) == std::optional<std::string>("second"));
  CHECK(p.wait(5s) == std::optional<int>(7));
}

TEST_CASE("Process: environment overrides reach the child", "[harness]") {
  Process p({{"sh", "-c", "echo \"$CDC2DORIS_X\""}, {{"CDC2DORIS_X", "hello"}}, "", "", ""});
  CHECK(p.read_line(5s) == std::optional<std::string>("hello"));
}

TEST_CASE("Process: stop() escalates to SIGKILL when SIGTERM is ignored", "[harness]") {
  Process p({{"sh", "-c", "trap '' TERM; echo ready; while :; do sleep 0.05; done"}, {}, "", "", ""});
  REQUIRE(p.read_line(5s) == std::optional<std::string>("ready"));
  CHECK(p.stop(300ms) == 128 + SIGKILL);
  CHECK_FALSE(p.running());
}

TEST_CASE("Process: the destructor leaves no child behind", "[harness]") {
  pid_t pid;
  {
    Process p({{"sleep", "60"}, {}, "", "", ""});
    pid = p.pid();
    CHECK(::kill(pid, 0) == 0);
  }
  CHECK(::kill(pid, 0) == -1);
}

TEST_CASE("Process: the constructor returns once the program runs, with default signal handling",
          "[harness]") {
  // A signal right after the constructor reaches the program, not a forked
  // copy of the test that has not exec'd yet (which would run the test's
  // handlers: Catch's report and the cleanup that kills every fixture).
  // Here the test's SIGTERM handler exits 77, so a copy it ran in shows.
  struct sigaction mark {}, before {};
  mark.sa_handler = [](int) { ::_exit(77); };
  ::sigemptyset(&mark.sa_mask);
  ::sigaction(SIGTERM, &mark, &before);
  std::vector<int> statuses;
  for (int i = 0; i < 50; ++i) {
    Process p({{"sleep", "60"}, {}, "", "", ""});
    statuses.push_back(p.stop(5s));
  }
  ::sigaction(SIGTERM, &before, nullptr);
  CHECK(statuses == std::vector<int>(50, 128 + SIGTERM));
  // Nothing the test ignores (SIGPIPE) or blocks stays so in the program.
  sigset_t block, old;
  ::sigemptyset(&block);
  ::sigaddset(&block, SIGUSR2);
  ::pthread_sigmask(SIG_BLOCK, &block, &old);
  Process p({{"sh", "-c", "grep -E '^Sig(Ign|Blk):' /proc/self/status"}, {}, "", "", ""});
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  CHECK(p.read_line(5s) == std::optional<std::string>("SigBlk:\t0000000000000000"));
  CHECK(p.read_line(5s) == std::optional<std::string>("SigIgn:\t0000000000000000"));
  CHECK(p.wait(5s) == std::optional<int>(0));
}

TEST_CASE("Process: a program that cannot be run is an error naming it", "[harness]") {
  try {
    Process p({{"/nonexistent/cdc2doris-no-such-program"}, {}, "", "", ""});
    FAIL("the constructor returned");
  } catch (const std::runtime_error& e) {
    CHECK_THAT(e.what(), Catch::Contains("/nonexistent/cdc2doris-no-such-program") &&
                             Catch::Contains("No such file or directory"));
  }
}

TEST_CASE("TempDir: removed with its contents", "[harness]") {
  std::filesystem::path path;
  {
    TempDir d("harness");
    path = d.path();
    std::filesystem::create_directories(d / "a/b");
    std::ofstream(d / "a/b/f") << "x";
    CHECK(std::filesystem::exists(d / "a/b/f"));
  }
  CHECK_FALSE(std::filesystem::exists(path));
}

TEST_CASE("free_port: returns distinct usable ports", "[harness]") {
  int a = free_port();
  CHECK(a > 0);
  CHECK(a < 65536);
}

TEST_CASE("Error: what() names every context field and the disposition", "[harness][error]") {
  cdc2doris::ErrorContext ctx;
  ctx.table = "shop.orders";
  ctx.label = "cdc_shop_orders_7";
  ctx.txn_id = 42;
  ctx.http_status = 200;
  ctx.doris_status = "Fail";
  cdc2doris::Error e(cdc2doris::Disposition::Retry, "load failed", ctx);
  CHECK(e.what() ==
        "load failed (table=shop.orders label=cdc_shop_orders_7 txn_id=42 http_status=200 doris_status=Fail) [retry]");
  CHECK(cdc2doris::Error(cdc2doris::Disposition::Fatal, "x").what() == "x [fatal]");
}
