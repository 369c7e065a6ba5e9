// The one retry loop (core/common/retry.hpp, retry_async.hpp) and its
// backoff: attempt counts, what stops it, the delays it asks for. No clock:
// the sleeps are recorded, not slept.
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "core/common/retry.hpp"
#include "core/common/retry_async.hpp"

using namespace cdc2doris;
using std::chrono::milliseconds;

namespace {

using Outcome = std::variant<int, Error>;

// An attempt that fails with the given dispositions in turn, then succeeds with its attempt number.
struct Script {
  std::vector<Disposition> failures;
  int calls = 0;
  Outcome operator()(int n) {
    ++calls;
    if (static_cast<size_t>(n) < failures.size()) return Error(failures[n], "attempt " + std::to_string(n));
    return n;
  }
};

struct Recorder {
  std::vector<milliseconds> slept;
  std::vector<int> retried;
  bool stop = false;
  RetryHooks hooks() {
    return RetryHooks{[this] { return stop; }, [this](milliseconds d) { slept.push_back(d); },
                      [this](const Error&, int n) { retried.push_back(n); }};
  }
};

RetryPolicy policy(int max_attempts) {
  return RetryPolicy{Backoff{milliseconds(100), milliseconds(1000)}, max_attempts};
}

}  // namespace

TEST_CASE("backoff: capped exponential with full jitter", "[common][backoff]") {
  Backoff b{milliseconds(100), milliseconds(5000)};
  CHECK(b.ceiling(0).count() == 100);
  CHECK(b.ceiling(1).count() == 200);
  CHECK(b.ceiling(5).count() == 3200);
  CHECK(b.ceiling(6).count() == 5000);
  CHECK(b.ceiling(1000).count() == 5000);  // no overflow
  CHECK(b.delay(3, 0.0).count() == 0);
  CHECK(b.delay(3, 0.5).count() == 400);
  CHECK(b.delay(3, 0.999).count() <= 800);
  CHECK(b.delay(3, 7.0).count() == 800);  // clamped draw
  for (int i = 0; i < 200; ++i) {
    auto d = b.delay(4);
    CHECK(d.count() >= 0);
    CHECK(d.count() <= 1600);
  }
  Backoff zero{milliseconds(0), milliseconds(10)};
  CHECK(zero.delay(3).count() == 0);
}

TEST_CASE("retry decide: disposition, then attempts, then time, then the stop", "[common][retry]") {
  const auto none = std::chrono::steady_clock::duration::zero();
  RetryPolicy p = policy(3);
  CHECK(decide(p, 0, Disposition::Retry, false, none) == RetryVerdict::Retry);
  CHECK(decide(p, 1, Disposition::Retry, false, none) == RetryVerdict::Retry);
  CHECK(decide(p, 2, Disposition::Retry, false, none) == RetryVerdict::OutOfAttempts);
  CHECK(decide(p, 0, Disposition::Fail, false, none) == RetryVerdict::NotRetryable);
  CHECK(decide(p, 0, Disposition::Fatal, false, none) == RetryVerdict::NotRetryable);
  CHECK(decide(p, 2, Disposition::Fatal, true, none) == RetryVerdict::NotRetryable);
  CHECK(decide(p, 2, Disposition::Retry, true, none) == RetryVerdict::OutOfAttempts);
  CHECK(decide(p, 0, Disposition::Retry, true, none) == RetryVerdict::Stopped);

  RetryPolicy unbounded = policy(0);
  CHECK(decide(unbounded, 1000000, Disposition::Retry, false, none) == RetryVerdict::Retry);

  RetryPolicy timed = policy(0);
  timed.give_up_after = milliseconds(60'000);
  CHECK(decide(timed, 5, Disposition::Retry, false, milliseconds(59'999)) == RetryVerdict::Retry);
  CHECK(decide(timed, 5, Disposition::Retry, false, milliseconds(60'000)) == RetryVerdict::OutOfTime);
  CHECK(decide(timed, 5, Disposition::Retry, true, milliseconds(60'000)) == RetryVerdict::OutOfTime);

  RetryPolicy lenient = policy(0);
  lenient.retry_up_to = Disposition::Fail;
  CHECK(decide(lenient, 0, Disposition::Fail, false, none) == RetryVerdict::Retry);
  CHECK(decide(lenient, 0, Disposition::Fatal, false, none) == RetryVerdict::NotRetryable);
  lenient.retry_up_to = Disposition::Fatal;
  CHECK(decide(lenient, 0, Disposition::Fatal, false, none) == RetryVerdict::Retry);
}

TEST_CASE("retry_blocking: retries Retry failures until an attempt succeeds", "[common][retry]") {
  Script s{{Disposition::Retry, Disposition::Retry}};
  Recorder rec;
  auto r = retry_blocking(policy(4), rec.hooks(), s);
  REQUIRE(std::holds_alternative<int>(r));
  CHECK(std::get<int>(r) == 2);
  CHECK(s.calls == 3);
  CHECK(rec.retried == std::vector<int>{0, 1});
  REQUIRE(rec.slept.size() == 2);
  CHECK(rec.slept[0] <= milliseconds(100));  // delay(0) under its ceiling
  CHECK(rec.slept[1] <= milliseconds(200));
}

TEST_CASE("retry_blocking: gives up after max_attempts with the last error", "[common][retry]") {
  Script s{{Disposition::Retry, Disposition::Retry, Disposition::Retry, Disposition::Retry}};
  Recorder rec;
  auto r = retry_blocking(policy(3), rec.hooks(), s);
  REQUIRE(std::holds_alternative<Error>(r));
  CHECK(std::get<Error>(r).message() == "attempt 2");
  CHECK(s.calls == 3);
  CHECK(rec.slept.size() == 2);
}

TEST_CASE("retry_blocking: a Fail or Fatal failure stops at once", "[common][retry]") {
  for (auto d : {Disposition::Fail, Disposition::Fatal}) {
    Script s{{Disposition::Retry, d}};
    Recorder rec;
    auto r = retry_blocking(policy(10), rec.hooks(), s);
    REQUIRE(std::holds_alternative<Error>(r));
    CHECK(std::get<Error>(r).disposition() == d);
    CHECK(s.calls == 2);
    CHECK(rec.slept.size() == 1);
  }
}

TEST_CASE("retry_blocking: retry_up_to Fail retries Fail but not Fatal", "[common][retry]") {
  RetryPolicy p = policy(10);
  p.retry_up_to = Disposition::Fail;
  Script s{{Disposition::Fail, Disposition::Retry, Disposition::Fatal}};
  Recorder rec;
  auto r = retry_blocking(p, rec.hooks(), s);
  REQUIRE(std::holds_alternative<Error>(r));
  CHECK(std::get<Error>(r).disposition() == Disposition::Fatal);
  CHECK(s.calls == 3);
}

TEST_CASE("retry_blocking: a stop request ends the retries after the failing attempt", "[common][retry]") {
  Recorder rec;
  int calls = 0;
  auto r = retry_blocking(policy(0), rec.hooks(), [&](int n) -> std::optional<Error> {
    ++calls;
    if (n == 1) rec.stop = true;  // the stop comes while attempt 1 runs
    return Error(Disposition::Retry, "down");
  });
  REQUIRE(r.has_value());
  CHECK(calls == 2);
  CHECK(rec.slept.size() == 1);
}

TEST_CASE("retry_blocking: an optional error result, nullopt being success", "[common][retry]") {
  Recorder rec;
  int calls = 0;
  auto r = retry_blocking(policy(5), rec.hooks(), [&](int n) -> std::optional<Error> {
    ++calls;
    if (n < 3) return Error(Disposition::Retry, "not yet");
    return std::nullopt;
  });
  CHECK_FALSE(r.has_value());
  CHECK(calls == 4);
}

TEST_CASE("retry: Final ends the retries whatever it holds", "[common][retry]") {
  Recorder rec;
  int calls = 0;
  using Attempted = Result<Final<Outcome>>;
  auto r = retry_blocking(policy(5), rec.hooks(), [&](int n) -> Attempted {
    ++calls;
    if (n == 0) return Error(Disposition::Retry, "retry me");
    return Final<Outcome>{Error(Disposition::Retry, "retried elsewhere")};
  });
  CHECK(calls == 2);
  Outcome o = final_or_error(std::move(r));
  REQUIRE(std::holds_alternative<Error>(o));
  CHECK(std::get<Error>(o).message() == "retried elsewhere");
}

TEST_CASE("sleep_in_slices: a set stop returns at once, without a heartbeat", "[common][retry]") {
  std::atomic<bool> stop{true};
  int beats = 0;
  sleep_in_slices(std::chrono::hours(1), stop, [&] { ++beats; });
  CHECK(beats == 0);
}

namespace {
Outcome run_async(RetryPolicy p, Script& s, std::vector<milliseconds>& slept, const bool& stop) {
  boost::asio::io_context ioc;
  auto sleep = [&](milliseconds d) -> boost::asio::awaitable<void> {
    slept.push_back(d);
    co_return;
  };
  auto attempt = [&](int n) -> boost::asio::awaitable<Outcome> { co_return s(n); };
  auto f = boost::asio::co_spawn(ioc, retry_async(p, [&] { return stop; }, sleep, attempt), boost::asio::use_future);
  ioc.run();
  return f.get();
}
}  // namespace

TEST_CASE("retry_async: the same loop in a coroutine", "[common][retry]") {
  const bool running = false, stopping = true;
  {
    Script s{{Disposition::Retry, Disposition::Retry}};
    std::vector<milliseconds> slept;
    auto r = run_async(policy(4), s, slept, running);
    REQUIRE(std::holds_alternative<int>(r));
    CHECK(s.calls == 3);
    CHECK(slept.size() == 2);
  }
  {
    Script s{{Disposition::Retry, Disposition::Retry, Disposition::Retry}};
    std::vector<milliseconds> slept;
    auto r = run_async(policy(2), s, slept, running);
    REQUIRE(std::holds_alternative<Error>(r));
    CHECK(s.calls == 2);
    CHECK(slept.size() == 1);
  }
  {
    Script s{{Disposition::Retry, Disposition::Fatal}};
    std::vector<milliseconds> slept;
    auto r = run_async(policy(9), s, slept, running);
    REQUIRE(std::holds_alternative<Error>(r));
    CHECK(std::get<Error>(r).disposition() == Disposition::Fatal);
    CHECK(s.calls == 2);
  }
  {
    Script s{{Disposition::Retry, Disposition::Retry}};
    std::vector<milliseconds> slept;
    auto r = run_async(policy(9), s, slept, stopping);
    REQUIRE(std::holds_alternative<Error>(r));
    CHECK(s.calls == 1);
    CHECK(slept.empty());
  }
}
