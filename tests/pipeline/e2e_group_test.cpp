// Several daemons in one consumer group (docs/architecture.md, "Multi-instance
// protocol"), against the real Kafka broker and the Doris emulator: nothing
// lost, nothing twice, while partitions move between members, members are
// killed, paused past the session timeout (zombies) and come back, duplicates
// of a member are started, retention deletes what was committed and a topic
// is compacted under the readers.
//
// Sizes come from the environment so a soak can scale them:
//   CDC2DORIS_GROUP_RECORDS (default 60000), CDC2DORIS_GROUP_ROUNDS (default 8),
//   CDC2DORIS_GROUP_SEED (default: random, printed).
#include <catch2/catch.hpp>

#include <csignal>
#include <filesystem>
#include <cstdlib>
#include <iostream>
#include <random>
#include <thread>

#include "tests/pipeline/e2e_harness.hpp"
#include "tests/support/run_command.hpp"

using namespace cdc2doris::test;
using namespace std::chrono_literals;

namespace {

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
  // The DUPLICATE KEY table (rows loaded twice show there) is one of those
  // cooperative-sticky hands to the second member (checked below).
  o.duplicate_table = "orders_3";
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
  {
    const std::string blog = h.member_log_tail("b", 1 << 20);
    const auto at = blog.find("Kafka source: assigned partitions=gback");
    REQUIRE(at != std::string::npos);
    REQUIRE(blog.substr(at, blog.find('\n', at) - at).find("orders_3[") != std::string::npos);
  }

  // b leaves: its partitions move back to a, whose own state still holds
  // the offsets of before b took them.
  CHECK(b->stop(60s) == 0);
  h.produce(6000);
  require_caught_up(h, 180s, names);
  CHECK(a->stop(60s) == 0);
  h.verify();
}

namespace {

// One member of the campaign: its process (null while down) and whether it
// is paused (SIGSTOP).
struct Member {
  std::string name;
  std::unique_ptr<Process> proc;
};

}  // namespace

TEST_CASE("e2e group: crash campaign — 3 members, SIGKILLs, restarts, zombies, 1 -> 3 -> 2 instances, partitions "
          "added",
          "[e2e][group][crash]") {
  const long total = env_long("CDC2DORIS_GROUP_RECORDS", 60000);
  const long rounds = env_long("CDC2DORIS_GROUP_ROUNDS", 8);
  const uint64_t seed = static_cast<uint64_t>(env_long("CDC2DORIS_GROUP_SEED", std::random_device{}()));
  std::cout << "group crash campaign: seed " << seed << " (CDC2DORIS_GROUP_SEED replays it)\n";
  std::mt19937_64 rng(seed);

  E2eOptions o;
  o.topic_prefix = "gcrash";
  o.seed = seed;
  o.compacted_tables = {"orders_4"};  // read behind the cleaner by every new owner (issue 31)
  // CDC2DORIS_GROUP_EXPIRIES=1 (opt-in, not in ctest yet: about 1 run in 3
  // stops on an open case of issue 31, see docs/architecture.md):
  // Doris expires pre-commits after 2 s (FE
  // stream_load_default_precommit_timeout_second), the members know it
  // (doris.precommit_timeout, no clock skew on one host), and every other
  // round a member is frozen for longer than that, or restarted, right
  // after its pre-commits: its epoch is replayed by it or resolved by the
  // others, and the replay meets the rebalance (issue 31). Real expiries,
  // not the emulator's fault: that one skips Doris' timeout but not the
  // members' clocks, and within the timeout a label Doris forgot can only
  // have been committed (group.cpp, forget_window). No DUPLICATE KEY table
  // there: an epoch whose labels expired and were forgotten cannot be proven
  // not to be visible, and the members stop on it by design.
  const bool expiries_allowed = env_long("CDC2DORIS_GROUP_EXPIRIES", 0) != 0;
  if (expiries_allowed) {
    o.emulator.precommit_timeout_s = 2;
    o.extra_doris_yaml = "  precommit_timeout: 2s\n  clock_skew_allowance: 0s\n";
    o.duplicate_table.clear();
  }
  E2eHarness h(o);
  std::vector<Member> members(3);
  for (size_t i = 0; i < members.size(); ++i) members[i].name = "m" + std::to_string(i);
  std::vector<std::string> names{"m0", "m1", "m2"};
  const size_t chunk = static_cast<size_t>(total / (rounds + 3) + 1);
  auto check_alive = [&](Member& m) {
    if (m.proc && !m.proc->running())
      FAIL("member " << m.name << " died on its own (status " << m.proc->wait(1s).value_or(-1)
                     << "); log tail:\n"
                     << h.member_log_tail(m.name));
  };

  // 1 instance, then 3.
  members[0].proc = h.start_member("m0");
  h.produce(chunk);
  std::this_thread::sleep_for(2s);
  members[1].proc = h.start_member("m1");
  members[2].proc = h.start_member("m2");
  h.produce(chunk);
  // Partitions added while the group runs: two topics grow from 4 to 6; the
  // group rebalances them in (the generator keeps its keys on partitions 0-3,
  // so the reference order stays the source order).
  for (const char* t : {"orders_5", "orders_6"}) h.broker().add_partitions("gcrash." + h.db() + "." + t, 6);

  size_t kills = 0, zombies = 0, restarts = 0, duplicates = 0, retentions = 0, expiries = 0;
  std::uniform_int_distribution<int> pick(0, 2), action(0, expiries_allowed ? 5 : 4), delay_ms(200, 2500);
  for (long r = 0; r < rounds; ++r) {
    h.produce(chunk);
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms(rng)));
    Member& m = members[static_cast<size_t>(pick(rng))];
    check_alive(m);
    // Every other round an expiry where they are on: the point of that variant.
    const int a = action(rng);
    switch (expiries_allowed && r % 2 == 1 ? 5 : a) {
      case 0:  // crash and come back
        m.proc->kill9();
        ++kills;
        std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms(rng)));
        m.proc = h.start_member(m.name);
        break;
      case 1:  // a zombie: paused past the session timeout (2 s), then resumed
        m.proc->signal(SIGSTOP);
        std::this_thread::sleep_for(std::chrono::milliseconds(3500 + delay_ms(rng)));
        m.proc->signal(SIGCONT);
        ++zombies;
        break;
      case 2:  // a clean restart
        m.proc->stop(60s);
        ++restarts;
        m.proc = h.start_member(m.name);
        break;
      case 3: {  // a duplicate start: the same configuration, or a copy with the same instance_id (issue 31)
        std::string dup_name = m.name;
        if (pick(rng) != 0) {
          dup_name = "dup-" + m.name;
          h.set_member_instance_id(dup_name, h.instance_id(m.name));
        }
        auto dup = h.start_member(dup_name);
        const auto st = dup->wait(60s);
        if (st != std::optional<int>(3))
          FAIL("a duplicate of " << m.name << " was not refused (status " << st.value_or(-1) << "); log tail:\n"
                                 << h.member_log_tail(dup_name));
        ++duplicates;
        break;
      }
      case 4:  // retention deletes what the group committed
        h.delete_committed_records();
        ++retentions;
        break;
      case 5:  // frozen past Doris' pre-commit timeout, or restarted, mid-epoch (issue 31)
        if (pick(rng) == 0) {
          m.proc->stop(60s);
          ++restarts;
          m.proc = h.start_member(m.name);
        } else {
          m.proc->signal(SIGSTOP);
          std::this_thread::sleep_for(std::chrono::milliseconds(4500 + delay_ms(rng)));
          m.proc->signal(SIGCONT);
          ++zombies;
        }
        ++expiries;
        break;
    }
  }
  // 3 -> 2: m2 leaves for good.
  check_alive(members[2]);
  members[2].proc->stop(60s);
  members[2].proc.reset();
  h.produce(chunk);
  for (auto& m : members) check_alive(m);
  require_caught_up(h, 300s, names);
  for (auto& m : members) {
    if (!m.proc) continue;
    const int st = m.proc->stop(60s);
    if (st != 0) FAIL_CHECK(m.name << " did not stop cleanly (status " << st << "); log tail:\n" << h.member_log_tail(m.name));
  }
  h.verify();
  std::cout << "group crash campaign: seed " << seed << ", " << h.produced() << " records, " << kills
            << " SIGKILLs, " << zombies << " zombies, " << restarts << " clean restarts, " << duplicates
            << " duplicate starts refused, " << retentions << " retention runs, " << expiries
            << " long freezes or restarts, " << h.count_log("replaying epoch") << " replays, " << h.compacted_away()
            << " records compacted away, "
            << h.count_log("fenced by the consumer group") << " fenced epochs, "
            << h.count_log("was pending in the consumer group") << " pending epochs resolved\n";
}

TEST_CASE("e2e group: a second live instance with the same instance_id is refused with a clear error",
          "[e2e][group]") {
  E2eOptions o;
  o.topic_prefix = "gdup";
  E2eHarness h(o);
  h.set_member_instance_id("a", "same-id");
  h.set_member_instance_id("b", "same-id");
  auto a = h.start_member("a");
  h.produce(2000);
  require_caught_up(h, 120s, {"a"});
  auto b = h.start_member("b");
  // On one host (issue 31) the second is refused before it joins the group:
  // a static member with the same group.instance.id would fence the first.
  // (On two hosts the group fences the older one: docs/architecture.md.)
  CHECK(b->wait(60s) == std::optional<int>(3));
  CHECK(h.count_log("is running on this host with kafka.group_id") >= 1);
  CHECK(h.count_log("same-id") >= 1);
  // The first goes on, exactly once, never fenced.
  CHECK(a->running());
  h.produce(2000);
  require_caught_up(h, 120s, {"a"});
  CHECK(a->stop(60s) == 0);
  CHECK(h.count_log("with the same instance_id") == 0);  // the fence hint
  h.verify();
}

TEST_CASE("e2e group: state abort-lingering aborts a retired instance's pre-committed txns, and only those",
          "[e2e][group]") {
  E2eOptions o;
  o.topic_prefix = "gal";
  E2eHarness h(o);
  // A member dies with its epoch pre-committed but not recorded: nobody
  // will commit those txns (its epoch never reached the group).
  h.produce(3000);
  auto r = h.start_member("r", {{"CDC2DORIS_CRASH_AT", "after_precommit"}});
  REQUIRE(r->wait(120s) == std::optional<int>(128 + SIGKILL));
  auto precommitted = [&] {
    const std::string txns = h.emulator().txns(h.db());
    size_t n = 0;
    for (size_t p = txns.find("\"PRECOMMITTED\""); p != std::string::npos; p = txns.find("\"PRECOMMITTED\"", p + 1)) ++n;
    return n;
  };
  REQUIRE(precommitted() > 0);
  // The operator retires it: from another instance's configuration.
  auto a = h.start_member("a");
  require_caught_up(h, 120s, {"a"});
  REQUIRE(precommitted() > 0);  // the other instance did not touch them
  for (int t = 0; t < 8; ++t) {
    auto res = run_command({CDC2DORIS_DAEMON_BIN, "state", "abort-lingering", "--config",
                            (std::filesystem::path(h.config_path()).parent_path() / "config-a.yaml").string(),
                            "--label-prefix", "gal_r", "--from-epoch", "1", "--table",
                            h.db() + ".orders_" + std::to_string(t)},
                           std::filesystem::path(h.config_path()).parent_path());
    INFO(res.out << res.err);
    REQUIRE(res.status == 0);
  }
  CHECK(precommitted() == 0);
  CHECK(a->stop(60s) == 0);
  h.verify();
}
