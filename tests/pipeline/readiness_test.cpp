// /readyz while a real pipeline run retries against a failing Doris (issue 35
// §5a): once a load or commit failed, readiness must stay "not ready" across
// every retry, backoff and rewind until a load or commit succeeds again. A
// user saw /readyz answer 200 in 11 of 25 samples while every load failed.
// The decision is the one the admin server serves (pipeline::not_ready_reason
// with the default HealthOptions); Kafka and the FE probe are set healthy by
// hand, as the health monitor would.
#include "core/pipeline/health.hpp"
#include "tests/pipeline/unit_env.hpp"

namespace {

// The default options the daemon uses, with the stall bound out of the way:
// it is a different reason, judged by other tests.
pipeline::HealthOptions defaults() {
  pipeline::HealthOptions o;
  o.stall_timeout = 1h;
  return o;
}

void monitor_healthy(pipeline::Metrics& m) {
  m.set_kafka_reachable({});
  m.set_doris_fe_problem("");
}

struct Samples {
  int taken = 0;
  int ready = 0;
  std::string first_ready_after;  // the reason just before the first 200
  std::string last_reason;
};

// Samples readiness as often as a busy prober would until `enough` holds
// and at least 50 samples were taken, counting the answers that would have
// been 200.
Samples sample_until(pipeline::Metrics& m, const std::function<bool()>& enough) {
  Samples s;
  const auto deadline = std::chrono::steady_clock::now() + kWait;
  while ((s.taken < 50 || !enough()) && std::chrono::steady_clock::now() < deadline) {
    const std::string why = pipeline::not_ready_reason(m, defaults());
    ++s.taken;
    if (why.empty()) {
      if (++s.ready == 1) s.first_ready_after = s.last_reason;
    } else {
      s.last_reason = why;
    }
    std::this_thread::sleep_for(200us);
  }
  return s;
}

}  // namespace

TEST_CASE("readiness: every load failing keeps /readyz not ready across retries until a load succeeds",
          "[pipeline][unit][health][issue35]") {
  Env env;
  env.produce(100);
  Runner run(env, env.config());
  monitor_healthy(run.metrics);
  REQUIRE(run.wait_for([&] { return env.caught_up(); }));
  CHECK(pipeline::not_ready_reason(run.metrics, defaults()).empty());

  env.doris.fail_next_finishes(1'000'000,
                               derr(doris::ErrorKind::ServerError, Disposition::Retry, "[INTERNAL_ERROR] injected"));
  env.produce(100);
  REQUIRE(run.wait_for([&] { return run.metrics.snapshot().load_failures.count >= 1; }));
  // Through many failed attempts, each followed by an abort, a rewind, a
  // backoff and a re-read: never ready.
  auto s = sample_until(run.metrics, [&] { return run.metrics.snapshot().load_failures.count >= 12; });
  INFO("samples " << s.taken << ", ready in " << s.ready << "; reason before the first ready: "
                  << s.first_ready_after);
  CHECK(run.metrics.snapshot().load_failures.count >= 12);
  CHECK(s.taken >= 50);
  CHECK(s.ready == 0);
  // The reason names what failed: the operation, the Doris status, the table and the label.
  CHECK_THAT(s.last_reason, Catch::Contains("Doris loads failing") && Catch::Contains("[INTERNAL_ERROR] injected") &&
                                Catch::Contains("table=shop.orders_") && Catch::Contains("label=t_"));

  env.doris.heal();
  REQUIRE(run.wait_for([&] { return env.caught_up(); }));
  CHECK(pipeline::not_ready_reason(run.metrics, defaults()).empty());
  CHECK_FALSE(run.stop().error);
  check_doris_matches(env, env.end_offsets());
  check_txns_clean(env);
}

TEST_CASE("readiness: every commit failing keeps /readyz not ready across retries until a commit succeeds",
          "[pipeline][unit][health][issue35]") {
  Env env;
  env.produce(100);
  Runner run(env, env.config());
  monitor_healthy(run.metrics);
  REQUIRE(run.wait_for([&] { return env.caught_up(); }));

  env.doris.fail_all_commits(derr(doris::ErrorKind::Transport, Disposition::Retry, "connection refused"));
  env.produce(100);
  REQUIRE(run.wait_for([&] { return run.metrics.snapshot().commit_failures.count >= 1; }));
  auto s = sample_until(run.metrics, [&] { return run.metrics.snapshot().commit_failures.count >= 12; });
  INFO("samples " << s.taken << ", ready in " << s.ready << "; reason before the first ready: "
                  << s.first_ready_after);
  CHECK(run.metrics.snapshot().commit_failures.count >= 12);
  CHECK(s.taken >= 50);
  CHECK(s.ready == 0);
  CHECK_THAT(s.last_reason, Catch::Contains("Doris commits failing") && Catch::Contains("connection refused"));

  env.doris.heal();
  REQUIRE(run.wait_for([&] { return env.caught_up(); }));
  CHECK(pipeline::not_ready_reason(run.metrics, defaults()).empty());
  CHECK_FALSE(run.stop().error);
  check_doris_matches(env, env.end_offsets());
  check_txns_clean(env);
}

TEST_CASE("readiness: a fatal error names itself in /readyz while the pipeline stops (and after)",
          "[pipeline][unit][health][issue35]") {
  Env env;
  env.produce(10);
  Runner run(env, env.config());
  monitor_healthy(run.metrics);
  REQUIRE(run.wait_for([&] { return env.caught_up(); }));
  CHECK(pipeline::not_ready_reason(run.metrics, defaults()).empty());
  // What the Kafka source reports for a refused login (core/kafka/errors.cpp).
  const std::string why = "Kafka SASL authentication (SASL_SSL/SCRAM-SHA-512) refused by sasl_ssl://b:9093/bootstrap: "
                          "check sasl.username and sasl.password";
  env.source.inject_poll_error(Error(Disposition::Fatal, why));
  auto result = run.await_end();
  REQUIRE(result.error);
  // Whatever else is wrong (here: nothing), the cause comes alone.
  CHECK(pipeline::not_ready_reason(run.metrics, defaults()) == "stopping on a fatal error: " + why + " [fatal]");
}
