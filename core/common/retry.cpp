#include "core/common/retry.hpp"

#include <thread>

namespace cdc2doris {

const char* to_string(RetryVerdict v) {
  switch (v) {
    case RetryVerdict::Retry: return "retry";
    case RetryVerdict::NotRetryable: return "not-retryable";
    case RetryVerdict::OutOfAttempts: return "out-of-attempts";
    case RetryVerdict::OutOfTime: return "out-of-time";
    case RetryVerdict::Stopped: return "stopped";
  }
  return "?";
}

RetryVerdict decide(const RetryPolicy& p, int attempt, Disposition d, bool stopped,
                    std::chrono::steady_clock::duration elapsed) {
  if (static_cast<int>(d) > static_cast<int>(p.retry_up_to)) return RetryVerdict::NotRetryable;
  if (p.max_attempts > 0 && attempt + 1 >= p.max_attempts) return RetryVerdict::OutOfAttempts;
  if (p.give_up_after.count() > 0 && elapsed >= p.give_up_after) return RetryVerdict::OutOfTime;
  if (stopped) return RetryVerdict::Stopped;
  return RetryVerdict::Retry;
}

void sleep_in_slices(std::chrono::milliseconds d, const std::atomic<bool>& stop, const std::function<void()>& beat,
                     std::chrono::milliseconds slice) {
  const auto until = std::chrono::steady_clock::now() + d;
  while (!stop.load() && std::chrono::steady_clock::now() < until) {
    if (beat) beat();
    std::this_thread::sleep_for(slice);
  }
}

}  // namespace cdc2doris
