// /readyz and /healthz decisions (core/pipeline/health.cpp) from Metrics
// alone: every reason, its grace period, and that it clears when over.
#include <catch2/catch.hpp>

#include "core/pipeline/health.hpp"

using namespace cdc2doris::pipeline;
using namespace std::chrono_literals;

namespace {

HealthOptions no_grace() {
  HealthOptions o;
  o.kafka_grace = 0ms;
  o.doris_failure_grace = 0ms;
  o.stall_timeout = 1h;
  o.epoch_interval = 1s;
  o.heartbeat_timeout = 1h;
  return o;
}

void healthy(Metrics& m) {
  m.recovered = true;
  m.set_kafka_reachable({});
  m.set_doris_fe_problem("");
  m.advanced();
}

}  // namespace

TEST_CASE("health: ready only after recovery, a Kafka answer and a Doris FE check", "[health][unit]") {
  Metrics m;
  const auto o = no_grace();
  CHECK(not_ready_reason(m, o) == "recovery has not finished");
  m.recovered = true;
  CHECK_THAT(not_ready_reason(m, o), Catch::Contains("Kafka has not answered yet"));
  CHECK_THAT(not_ready_reason(m, o), Catch::Contains("Doris FE not checked yet"));
  // Never reached: not ready at once, whatever the grace.
  m.set_kafka_unreachable("Local: Broker transport failure");
  HealthOptions patient = o;
  patient.kafka_grace = 1h;
  CHECK_THAT(not_ready_reason(m, patient), Catch::Contains("Kafka has not answered yet: Local: Broker transport failure"));
  healthy(m);
  CHECK(not_ready_reason(m, o).empty());
}

TEST_CASE("health: Kafka unreachable and missing topics count after their grace, and clear", "[health][unit]") {
  Metrics m;
  healthy(m);
  HealthOptions patient = no_grace();
  patient.kafka_grace = 1h;
  m.set_kafka_unreachable("all brokers down");
  CHECK(not_ready_reason(m, patient).empty());  // within the grace: a blip
  CHECK_THAT(not_ready_reason(m, no_grace()), Catch::Contains("Kafka unreachable for 0 s: all brokers down"));
  m.set_kafka_reachable({"orders", "^db\\..*"});
  CHECK(not_ready_reason(m, patient).empty());
  CHECK_THAT(not_ready_reason(m, no_grace()), Catch::Contains("missing") && Catch::Contains("orders, ^db\\..*"));
  m.set_kafka_reachable({});
  CHECK(not_ready_reason(m, no_grace()).empty());
}

TEST_CASE("health: Doris failure streaks, the stall bound and the heartbeat", "[health][unit]") {
  Metrics m;
  healthy(m);
  const auto o = no_grace();
  m.load_failed("stream load failed: [INTERNAL_ERROR]");
  m.load_failed("stream load failed: [INTERNAL_ERROR] again");
  m.commit_failed("commit: timeout");
  auto why = not_ready_reason(m, o);
  CHECK_THAT(why, Catch::Contains("Doris loads failing for 0 s (2 failures; last: stream load failed: [INTERNAL_ERROR] again)"));
  CHECK_THAT(why, Catch::Contains("Doris commits failing"));
  HealthOptions patient = o;
  patient.doris_failure_grace = 1h;
  CHECK(not_ready_reason(m, patient).empty());
  m.load_succeeded();
  m.commit_succeeded();
  CHECK(not_ready_reason(m, o).empty());
  CHECK(m.snapshot().load_failures.count == 2);  // the history stays

  // Stalled: the bound is the larger of stall_timeout and 2 x epoch_interval.
  m.advanced_unix_ms = unix_now_ms() - 10'000;
  HealthOptions stall = o;
  stall.stall_timeout = 5s;
  stall.epoch_interval = 1s;
  m.set_phase("committing");
  CHECK_THAT(not_ready_reason(m, stall), Catch::Contains("has not advanced for 10 s (phase committing)"));
  stall.epoch_interval = 10min;
  CHECK(not_ready_reason(m, stall).empty());

  HealthOptions beat = o;
  beat.heartbeat_timeout = 2s;
  CHECK(not_alive_reason(m, beat).empty());  // not started yet
  m.heartbeat_steady_ms = steady_now_ms() - 5'000;
  CHECK_THAT(not_alive_reason(m, beat), Catch::Contains("pipeline thread has made no progress for 5 s"));
  m.beat();
  CHECK(not_alive_reason(m, beat).empty());
}

TEST_CASE("health: a forced exit names what it abandons, also records its last state does not show",
          "[health][unit]") {
  Metrics m;
  m.set_epochs(3, 2);
  m.set_phase("idle");
  EpochView idle;
  idle.epoch = 3;
  idle.phase = "open";
  m.set_epoch_views(idle, {}, std::nullopt);
  CHECK(abandoned_epochs(m) == "no epoch with data was in flight; the next start resumes at epoch 3");
  // Consumed after that publish, and the thread never came back to publish:
  // not "nothing in flight".
  m.records_consumed += 100;
  CHECK_THAT(abandoned_epochs(m), Catch::StartsWith("100 record(s) were consumed after the last published state"));
  CHECK_THAT(abandoned_epochs(m), Catch::Contains("epoch 3 is not committed"));
  // Published with rows: the open epoch says it.
  EpochView open = idle;
  open.rows = 100;
  m.set_epoch_views(open, {}, std::nullopt);
  CHECK_THAT(abandoned_epochs(m), Catch::StartsWith("epoch 3 (open) is not committed"));
  EpochView committing;
  committing.epoch = 2;
  committing.phase = "committing";
  m.set_epoch_views(idle, {committing}, std::nullopt);
  CHECK_THAT(abandoned_epochs(m), Catch::StartsWith("epoch 2 is PRECOMMITTED and not committed"));
}
