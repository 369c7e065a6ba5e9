// Several daemons in one consumer group (docs/architecture.md, "Multi-instance
// protocol"), against the real Kafka broker and the Doris emulator: nothing
// lost, nothing twice, while partitions move between members, members are
// killed, paused past the session timeout (zombies) and come back.
//
// Sizes come from the environment so a soak can scale them:
//   CDC2DORIS_GROUP_RECORDS (default 60000), CDC2DORIS_GROUP_ROUNDS (default 8),
//   CDC2DORIS_GROUP_SEED (default: random, printed).
#include <catch2/catch.hpp>

#include <csignal>
#include <cstdlib>
#include <iostream>
#include <random>
#include <thread>

#include "tests/pipeline/e2e_harness.hpp"

using namespace cdc2doris::test;
using namespace std::chrono_literals;

namespace {

[[maybe_unused]] long env_long(const char* name, long def) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtol(v, nullptr, 10) : def;
}

void require_caught_up(E2eHarness& h, std::chrono::seconds timeout, const std::vector<std::string>& members) {
  if (h.wait_caught_up(timeout)) return;
  std::string tails;
  for (const auto& m : members) tails += "--- " + m + ":\n" + h.member_log_tail(m, 4000);
  FAIL("the group did not catch up; log tails:\n" << tails);
}

}  // namespace

TEST_CASE("e2e group: a partition moving back to its former owner starts where the group is, not where its "
          "own state was",
          "[e2e][group]") {
  E2eOptions o;
  o.topic_prefix = "gback";
  E2eHarness h(o);
  const std::vector<std::string> names{"a", "b"};

  auto a = h.start_member("a");
  h.produce(6000);
  require_caught_up(h, 180s, names);

  // b joins: cooperative-sticky moves about half of the partitions to it,
  // and it loads their next records.
  auto b = h.start_member("b");
  std::this_thread::sleep_for(4s);
  h.produce(6000);
  require_caught_up(h, 180s, names);
  REQUIRE(a->running());
  REQUIRE(h.count_log("assigned") >= 2);

  // b leaves: its partitions move back to a, whose own state still holds
  // the offsets of before b took them.
  CHECK(b->stop(60s) == 0);
  h.produce(6000);
  require_caught_up(h, 180s, names);
  CHECK(a->stop(60s) == 0);
  h.verify();
}
