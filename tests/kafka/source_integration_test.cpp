// Kafka source against a real Apache Kafka broker (KRaft): consumer groups,
// cooperative-sticky rebalances with two members and a broker restart.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>

#include "core/kafka/source.hpp"
#include "tests/kafka/source_test_util.hpp"
#include "tools/fixtures/kafka_broker.hpp"

using namespace cdc2doris;
using namespace cdc2doris::kafka;
using namespace cdc2doris::kafka::testing;
using namespace std::chrono_literals;

namespace {

std::map<std::string, std::string> props(const std::string& group) {
  return {{"bootstrap.servers", test::KafkaBroker::shared().bootstrap()},
          {"group.id", group},
          {"session.timeout.ms", "10000"},
          {"heartbeat.interval.ms", "500"},
          {"topic.metadata.refresh.interval.ms", "2000"},
          {"log_level", "3"}};
}

void produce(const std::string& topic, int32_t partition, int from, int n) {
  std::vector<test::TestRecord> rs;
  for (int i = from; i < from + n; ++i) {
    test::TestRecord r;
    r.key = "k" + std::to_string(i);
    r.value = "v" + std::to_string(i);
    r.partition = partition;
    rs.push_back(r);
  }
  test::KafkaBroker::shared().produce(topic, rs);
}

std::set<TopicPartition> as_set(const std::vector<TopicPartition>& v) { return {v.begin(), v.end()}; }

}  // namespace

TEST_CASE("real broker: consume, pause/resume, seek, commit and read back", "[kafka][broker]") {
  auto& broker = test::KafkaBroker::shared();
  std::string topic = unique_name("src");
  std::string group = unique_name("grp");
  broker.create_topic(topic, 2);
  produce(topic, 0, 0, 100);
  produce(topic, 1, 0, 100);
  TopicPartition p0{topic, 0}, p1{topic, 1};

  RecordingListener l;
  l.starts[p1] = 40;
  auto src = make_kafka_source(SourceConfig{{topic}, props(group)});
  src->subscribe(l);
  auto d = drain(*src, 160, 60s);
  REQUIRE(d.records.size() == 160);
  CHECK(d.errors.empty());
  std::map<int32_t, int64_t> first;
  for (const auto& r : d.records) first.try_emplace(r.partition, r.offset);
  CHECK(first[0] == 0);
  CHECK(first[1] == 40);

  REQUIRE_FALSE(src->pause({p0}));
  produce(topic, 0, 100, 10);
  produce(topic, 1, 100, 10);
  auto while_paused = drain(*src, 10, 20s);
  REQUIRE(while_paused.records.size() == 10);
  for (const auto& r : while_paused.records) CHECK(r.partition == 1);
  CHECK(drain(*src, 0, 1s).records.empty());
  REQUIRE_FALSE(src->resume({p0}));
  auto resumed = drain(*src, 10, 20s);
  REQUIRE(resumed.records.size() == 10);
  CHECK(resumed.records.front().offset == 100);

  REQUIRE_FALSE(src->seek(p0, 50, 10s));
  auto rewound = drain(*src, 60, 20s);
  REQUIRE(rewound.records.size() == 60);
  CHECK(rewound.records.front().offset == 50);

  REQUIRE_FALSE(src->commit(OffsetMap{{p0, 110}, {p1, 110}}, "cdc2doris epoch=3"));
  auto committed = broker.committed_offsets(group, topic);
  CHECK(committed[0] == 110);
  CHECK(committed[1] == 110);
  auto mine = src->committed({p0, p1}, 10s);
  REQUIRE(std::holds_alternative<OffsetMap>(mine));
  CHECK(std::get<OffsetMap>(mine) == OffsetMap{{p0, 110}, {p1, 110}});

  auto lag = src->lag();
  REQUIRE(lag.size() == 2);
  CHECK(lag[0].tp == p0);
  CHECK(lag[0].position == 110);
  CHECK_FALSE(src->close(20s));
}

TEST_CASE("real broker: second member triggers an incremental (cooperative) hand-off", "[kafka][broker]") {
  auto& broker = test::KafkaBroker::shared();
  std::string topic = unique_name("reb");
  std::string group = unique_name("grp");
  broker.create_topic(topic, 4);
  for (int32_t p = 0; p < 4; ++p) produce(topic, p, 0, 50);

  // Consumer A owns everything, and commits its position when a partition is
  // revoked: the epoch hand-off the pipeline does.
  RecordingListener la;
  std::map<TopicPartition, int64_t> next_a;
  std::vector<std::string> handoff_errors;
  auto a = make_kafka_source(SourceConfig{{topic}, props(group)});
  la.on_revoke_hook = [&](const std::vector<TopicPartition>& revoked) {
    OffsetMap commit;
    for (const auto& tp : revoked) {
      if (auto it = next_a.find(tp); it != next_a.end()) commit[tp] = it->second;
    }
    if (auto e = a->commit(commit, "handoff")) handoff_errors.push_back(e->what());
  };
  a->subscribe(la);
  auto da = drain(*a, 200, 60s, [&](const Copied& c) { next_a[TopicPartition{c.topic, c.partition}] = c.offset + 1; });
  REQUIRE(da.records.size() == 200);
  REQUIRE(la.assigns.size() == 1);
  CHECK(la.assigns[0].size() == 4);

  RecordingListener lb;
  auto b = make_kafka_source(SourceConfig{{topic}, props(group)});
  b->subscribe(lb);
  // Both members must keep polling for the rebalance to complete.
  auto deadline = std::chrono::steady_clock::now() + 60s;
  while (std::chrono::steady_clock::now() < deadline &&
         (b->assignment().size() != 2 || a->assignment().size() != 2)) {
    drain(*a, 0, 200ms, [&](const Copied& c) { next_a[TopicPartition{c.topic, c.partition}] = c.offset + 1; });
    drain(*b, 0, 200ms);
  }
  REQUIRE_FALSE(lb.assigns.empty());
  auto a_now = as_set(a->assignment());
  auto b_now = as_set(b->assignment());
  CHECK(a_now.size() == 2);
  CHECK(b_now.size() == 2);
  for (const auto& tp : b_now) CHECK_FALSE(a_now.contains(tp));
  // Cooperative: A gave up only what B got, never its whole assignment.
  REQUIRE(la.revokes.size() == 1);
  CHECK(as_set(la.revokes[0]) == b_now);
  CHECK_FALSE(la.revoke_lost[0]);
  CHECK(handoff_errors.empty());
  for (const auto& e : handoff_errors) INFO(e);
  CHECK(la.assigns.size() == 1);

  // B starts the handed-over partitions at A's committed offsets: nothing is
  // read twice.
  for (const auto& tp : b_now) produce(topic, tp.partition, 50, 5);
  auto db = drain(*b, 10, 30s);
  REQUIRE(db.records.size() == 10);
  for (const auto& r : db.records) CHECK(r.offset >= 50);

  CHECK_FALSE(b->close(20s));
  // A gets B's partitions back after B leaves.
  deadline = std::chrono::steady_clock::now() + 60s;
  while (std::chrono::steady_clock::now() < deadline && a->assignment().size() != 4) drain(*a, 0, 200ms);
  CHECK(a->assignment().size() == 4);
  CHECK(la.assigns.size() == 2);
  CHECK_FALSE(a->close(20s));
  // The final revoke runs inside close(), and its commit must still work.
  CHECK(la.revokes.size() == 2);
  for (const auto& e : handoff_errors) FAIL_CHECK("hand-off commit failed: " << e);
}

TEST_CASE("real broker: a broker restart mid-consume loses and duplicates nothing", "[kafka][broker][fault]") {
  auto& broker = test::KafkaBroker::shared();
  std::string topic = unique_name("rst");
  broker.create_topic(topic, 2);
  produce(topic, 0, 0, 500);
  produce(topic, 1, 0, 500);

  // Like the pipeline: a lost assignment is picked up again from the last
  // position it recorded (its checkpoint), here every record seen.
  RecordingListener l;
  auto track = [&](const Copied& c) { l.starts[TopicPartition{c.topic, c.partition}] = c.offset + 1; };
  auto src = make_kafka_source(SourceConfig{{topic}, props(unique_name("grp"))});
  src->subscribe(l);
  auto before = drain(*src, 300, 60s, track);
  REQUIRE(before.records.size() >= 300);

  broker.restart(/*crash=*/true);
  produce(topic, 0, 500, 100);
  produce(topic, 1, 500, 100);
  auto after = drain(*src, 1200 - before.records.size(), 120s, track);
  CHECK(after.errors.empty());

  std::map<int32_t, std::vector<int64_t>> seen;
  for (const auto* part : {&before.records, &after.records}) {
    for (const auto& r : *part) seen[r.partition].push_back(r.offset);
  }
  for (int32_t p = 0; p < 2; ++p) {
    INFO("partition " << p);
    REQUIRE(seen[p].size() == 600);
    for (size_t i = 0; i < seen[p].size(); ++i) CHECK(seen[p][i] == static_cast<int64_t>(i));
  }
  INFO("transient errors reported: " << before.transient.size() + after.transient.size()
                                     << ", lost revokes: " << std::count(l.revoke_lost.begin(), l.revoke_lost.end(), true));
  CHECK_FALSE(src->close(20s));
}
