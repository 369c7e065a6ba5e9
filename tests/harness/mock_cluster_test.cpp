#include <catch2/catch.hpp>

#include "tests/harness/smoke.hpp"
#include "tests/support/mock_cluster.hpp"

using namespace cdc2doris::test;

namespace {
MockCluster* g_cluster = nullptr;
void create_on_mock(const std::string&, const std::string& topic, int partitions) {
  g_cluster->create_topic(topic, partitions);
}
}  // namespace

TEST_CASE("mock cluster: 10,000 records round-trip exactly once", "[kafka][mock]") {
  MockCluster cluster(3);
  g_cluster = &cluster;
  smoke_exactly_once(cluster.bootstrap(), "mock-smoke", &create_on_mock);
  g_cluster = nullptr;
}

TEST_CASE("mock cluster: produce fails while every broker is down and recovers after", "[kafka][mock]") {
  MockCluster cluster(1);
  cluster.create_topic("mock-down", 1);
  cluster.broker_down(1);
  // With the only broker down the flush cannot complete in time.
  CHECK_THROWS(produce(cluster.bootstrap(), "mock-down", {{"k", "v", {}, 0}}, std::chrono::seconds(2)));
  cluster.broker_up(1);
  produce(cluster.bootstrap(), "mock-down", {{"k", "v", {}, 0}});
  CHECK(consume_all(cluster.bootstrap(), "mock-down", 1, std::chrono::seconds(20)).size() == 1);
}
