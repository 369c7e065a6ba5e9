// tune_allocator() keeps blocks the size of a fetch response in the heap and
// does not give them back to the kernel on free; a GLIBC_TUNABLES setting of
// the operator wins. Each case runs in a child process: the thresholds are
// process-wide and glibc adapts them to what was freed before.
#include <catch2/catch.hpp>

#include <malloc.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <functional>

#include "daemon/allocator.hpp"

namespace {

// Runs body in a fork; returns its exit status (0 = all its checks held).
int in_child(const std::function<int()>& body) {
  pid_t pid = fork();
  if (pid == 0) _exit(body());
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 100;
}

// Keeps the compiler from eliding a malloc/free pair it can see through.
void* escape(void* p) {
  asm volatile("" : : "g"(p) : "memory");
  return p;
}

// 1 if a block of `bytes` was mapped on its own, 0 if it came from the heap;
// 2 if it was from the heap and the heap shrank by it when freed.
int place_block(size_t bytes) {
  const auto before = mallinfo2();
  void* p = escape(std::malloc(bytes));
  std::memset(p, 1, bytes);
  const auto during = mallinfo2();
  std::free(p);
  const auto after = mallinfo2();
  if (during.hblks > before.hblks) return 1;
  return after.arena + bytes / 2 < during.arena ? 2 : 0;
}

// glibc's adaptive threshold is raised to the size of a freed mapped block:
// free a 4 MiB one first so that 24 MiB (above it, below 32 MiB) shows what
// the settings do.
void raise_adaptive_threshold() { std::free(escape(std::malloc(4 << 20))); }

}  // namespace

TEST_CASE("allocator: fetch-response-sized blocks come from the heap and stay there", "[daemon][allocator]") {
  int status = in_child([] {
    unsetenv("GLIBC_TUNABLES");
    raise_adaptive_threshold();
    cdc2doris::daemon::tune_allocator();
    return place_block(24 << 20);
  });
  CHECK(status == 0);
}

TEST_CASE("allocator: without tuning the same block is mapped on its own", "[daemon][allocator]") {
  // The baseline the case above is compared with.
  int status = in_child([] {
    raise_adaptive_threshold();
    return place_block(24 << 20);
  });
  CHECK(status == 1);
}

TEST_CASE("allocator: the operator's GLIBC_TUNABLES setting is left alone", "[daemon][allocator]") {
  int status = in_child([] {
    setenv("GLIBC_TUNABLES", "glibc.malloc.trim_threshold=131072", 1);
    raise_adaptive_threshold();
    cdc2doris::daemon::tune_allocator();
    return place_block(24 << 20);
  });
  CHECK(status == 1);
}
