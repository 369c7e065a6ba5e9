#pragma once
// Capped exponential backoff with full jitter (AWS architecture blog,
// fluent-bit's backoff_full_jitter): delay = uniform(0, min(cap, base * 2^n)).
// Full jitter spreads the retries of many tables/daemons hitting the same
// overloaded FE instead of having them retry in lock-step. The Doris client
// and the pipeline share it through RetryPolicy (retry.hpp).
#include <algorithm>
#include <chrono>
#include <random>

namespace cdc2doris {

struct Backoff {
  std::chrono::milliseconds base{100};
  std::chrono::milliseconds cap{5'000};

  // Upper bound of the delay before retry number `attempt` (0-based).
  std::chrono::milliseconds ceiling(int attempt) const {
    if (base.count() <= 0) return std::chrono::milliseconds{0};
    if (attempt < 0) attempt = 0;
    // Shift only while it cannot overflow; cap is reached long before.
    long long v = base.count();
    for (int i = 0; i < attempt && v < cap.count(); ++i) v *= 2;
    return std::chrono::milliseconds{std::min<long long>(v, cap.count())};
  }
  // u01 in [0, 1): the random draw, passed in so the function stays pure.
  std::chrono::milliseconds delay(int attempt, double u01) const {
    u01 = std::clamp(u01, 0.0, 1.0);
    return std::chrono::milliseconds{static_cast<long long>(static_cast<double>(ceiling(attempt).count()) * u01)};
  }
  std::chrono::milliseconds delay(int attempt) const {
    thread_local std::mt19937_64 rng{std::random_device{}()};
    return delay(attempt, std::uniform_real_distribution<double>(0.0, 1.0)(rng));
  }
};

}  // namespace cdc2doris
