#pragma once
// retry_blocking()'s loop (retry.hpp) for Asio coroutines: the same
// decide(), the backoff awaited instead of slept.
#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <utility>

#include "core/common/retry.hpp"

namespace cdc2doris {

// attempt(n) -> awaitable<R>; sleep(delay) -> awaitable<void>; stopped() ->
// bool. Returns the last attempt's result. `attempt` and `sleep` are kept in
// this coroutine's frame, so lambdas capturing the caller's locals by
// reference are safe while the caller awaits this.
template <class Attempt, class Sleep, class Stopped>
auto retry_async(RetryPolicy policy, Stopped stopped, Sleep sleep, Attempt attempt)
    -> boost::asio::awaitable<typename decltype(attempt(0))::value_type> {
  const auto started = std::chrono::steady_clock::now();
  for (int n = 0;; ++n) {
    auto r = co_await attempt(n);
    const auto* err = failure_of(r);
    if (err == nullptr) co_return r;
    if (decide(policy, n, err->disposition(), stopped(), std::chrono::steady_clock::now() - started) !=
        RetryVerdict::Retry)
      co_return r;
    co_await sleep(policy.backoff.delay(n));
  }
}

}  // namespace cdc2doris
