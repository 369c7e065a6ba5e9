#include "daemon/allocator.hpp"

#include <malloc.h>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <string>
#include <string_view>

namespace cdc2doris::daemon {
namespace {

// librdkafka receives each fetch response (up to fetch.max.bytes, 8 MiB by
// default) into one buffer and frees it when the last record pointing into it
// is released. glibc's thresholds adapt to such blocks only partly: some still
// went back to the kernel (munmap, or a trim of the heap top beyond twice the
// adapted threshold) and the next response page-faulted and zeroed fresh pages
// (clear_page, page faults: ~7% of the daemon's CPU on the schema-envelope
// stream of bench/run). Fixed thresholds keep them: blocks below 32 MiB (the
// largest M_MMAP_THRESHOLD glibc accepts on 64-bit) come from the heap, and up
// to 64 MiB free at a heap's top is kept. Measured on bench/run --only schema
// (500k records), interleaved runs: 64-84k minor faults with glibc's defaults,
// 18-46k with a 64 MiB trim threshold and 23-47k with 256 MiB; CPU
// 4.4/3.0/4.0 s against 3.6/2.3/3.5 s (256 MiB) and 3.5/4.1 s (64 MiB); peak
// RSS not higher. The cost: up to 64 MiB free at the top of each heap stays
// mapped after a catch-up instead of being returned.
constexpr int kMmapThreshold = 32 << 20;
constexpr int kTrimThreshold = 64 << 20;

bool operator_set(std::string_view tunable) {
  const char* env = std::getenv("GLIBC_TUNABLES");
  return env != nullptr && std::string_view(env).find(tunable) != std::string_view::npos;
}

}  // namespace

void tune_allocator() {
  std::string set;
  // M_MMAP_THRESHOLD alone would also switch off glibc's adaptive trim
  // threshold (leaving it at 128 KiB), so the two go together.
  if (!operator_set("glibc.malloc.mmap_threshold") && !operator_set("glibc.malloc.trim_threshold")) {
    if (mallopt(M_MMAP_THRESHOLD, kMmapThreshold) == 1 && mallopt(M_TRIM_THRESHOLD, kTrimThreshold) == 1)
      set = "mmap_threshold 32 MiB, trim_threshold 64 MiB";
  }
  if (set.empty())
    spdlog::info("allocator: glibc malloc thresholds left as they are (GLIBC_TUNABLES or glibc refused)");
  else
    spdlog::info("allocator: glibc malloc {}", set);
}

}  // namespace cdc2doris::daemon
