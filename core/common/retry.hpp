#pragma once
// One retry loop for the whole daemon: attempt, classify the failure by its
// disposition, stop on what is not retryable, back off (backoff.hpp), stop
// when stopped or out of attempts or time. decide() is the one decision;
// retry_blocking() is the loop for the pipeline's threads, retry_async()
// (retry_async.hpp) the same loop for the Doris client's coroutines.
//
// An attempt returns its outcome as a result: std::variant<T, E>, an
// std::optional<E> (an error or nothing), or Result<T, E> (result.hpp), with
// E an Error. failure_of() reads the error out of each.
#include <atomic>
#include <chrono>
#include <functional>
#include <optional>
#include <type_traits>
#include <variant>

#include "core/common/backoff.hpp"
#include "core/common/error.hpp"
#include "core/common/result.hpp"

namespace cdc2doris {

struct RetryPolicy {
  Backoff backoff;
  // Attempts in all (1: no retry); 0: not bounded by count.
  int max_attempts = 0;
  // Give up once this much time has passed since the first attempt began; 0: no bound.
  std::chrono::milliseconds give_up_after{0};
  // The gravest disposition still retried. Retry for the Doris client; the
  // pipeline's Kafka group calls also retry Fail (a failed request there is
  // not a refused unit of work).
  Disposition retry_up_to = Disposition::Retry;
};

enum class RetryVerdict {
  Retry,          // back off and attempt again
  NotRetryable,   // the error's disposition is beyond retry_up_to
  OutOfAttempts,  // max_attempts reached
  OutOfTime,      // give_up_after passed
  Stopped,        // the caller is stopping
};
const char* to_string(RetryVerdict v);

// After attempt `attempt` (0-based) failed with disposition `d`: retry or
// why not. Pure; the checks go in the order of the enum.
RetryVerdict decide(const RetryPolicy& p, int attempt, Disposition d, bool stopped,
                    std::chrono::steady_clock::duration elapsed);

template <class T, class E>
const E* failure_of(const std::variant<T, E>& r) {
  return std::get_if<E>(&r);
}
template <class E>
const E* failure_of(const std::optional<E>& r) {
  return r ? &*r : nullptr;
}
template <class T, class E>
const E* failure_of(const Result<T, E>& r) {
  return r ? nullptr : &r.error();
}

// An attempt's outcome that ends the retries whatever it holds, e.g. an
// error from a call that was retried on its own. An attempt that returns
// Result<Final<R>, E> retries on E only; final_or_error() gives the R.
template <class R>
struct Final {
  R result;
};
template <class R, class E>
R final_or_error(Result<Final<R>, E> r) {
  if (r) return std::move(r->result);
  return std::move(r.error());
}

// Waits `d` on this thread in slices, returning early once `stop` is set so
// that a stop request never waits out a long backoff; `beat` (may be empty)
// runs once per slice, a liveness heartbeat for the waiting thread.
void sleep_in_slices(std::chrono::milliseconds d, const std::atomic<bool>& stop, const std::function<void()>& beat,
                     std::chrono::milliseconds slice = std::chrono::milliseconds(20));

// What retry_blocking() asks of its caller besides the attempt.
struct RetryHooks {
  std::function<bool()> stopped;                         // checked after each failed attempt; empty: never
  std::function<void(std::chrono::milliseconds)> sleep;  // waits out one backoff delay
  std::function<void(const Error&, int attempt)> on_retry;  // before the backoff (e.g. a warning); may be empty
};

// Runs attempt(n) for n = 0, 1, ... until it succeeds or decide() says
// anything but Retry, sleeping policy.backoff.delay(n) after failure n.
// Returns the last attempt's result.
template <class Attempt>
auto retry_blocking(const RetryPolicy& policy, const RetryHooks& hooks, Attempt&& attempt)
    -> std::invoke_result_t<Attempt&, int> {
  const auto started = std::chrono::steady_clock::now();
  for (int n = 0;; ++n) {
    auto r = attempt(n);
    const auto* err = failure_of(r);
    if (err == nullptr) return r;
    const bool stopped = hooks.stopped && hooks.stopped();
    if (decide(policy, n, err->disposition(), stopped, std::chrono::steady_clock::now() - started) !=
        RetryVerdict::Retry)
      return r;
    if (hooks.on_retry) hooks.on_retry(*err, n);
    hooks.sleep(policy.backoff.delay(n));
  }
}

}  // namespace cdc2doris
