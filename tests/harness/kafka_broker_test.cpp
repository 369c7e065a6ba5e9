#include <catch2/catch.hpp>

#include <librdkafka/rdkafka.h>

#include "tests/harness/smoke.hpp"
#include "tools/fixtures/kafka_broker.hpp"

using namespace cdc2doris::test;

TEST_CASE("real broker: 10,000 records round-trip exactly once", "[kafka][broker]") {
  auto& broker = KafkaBroker::shared();
  WARN("broker start took " << broker.last_start_ms() << " ms");
  smoke_exactly_once(broker.bootstrap(), "harness-smoke", &create_topic);
}

TEST_CASE("real broker: committed offsets are readable and survive a restart", "[kafka][broker]") {
  auto& broker = KafkaBroker::shared();
  broker.create_topic("harness-offsets", 2);
  broker.produce("harness-offsets", {{"a", "1", {}, 0}, {"b", "2", {}, 1}, {"c", "3", {}, 1}});

  char err[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set(conf, "bootstrap.servers", broker.bootstrap().c_str(), err, sizeof err);
  rd_kafka_conf_set(conf, "group.id", "harness-group", err, sizeof err);
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof err);
  REQUIRE(rk != nullptr);
  auto* offsets = rd_kafka_topic_partition_list_new(2);
  rd_kafka_topic_partition_list_add(offsets, "harness-offsets", 0)->offset = 1;
  rd_kafka_topic_partition_list_add(offsets, "harness-offsets", 1)->offset = 2;
  REQUIRE(rd_kafka_commit(rk, offsets, 0) == RD_KAFKA_RESP_ERR_NO_ERROR);
  rd_kafka_topic_partition_list_destroy(offsets);
  rd_kafka_consumer_close(rk);
  rd_kafka_destroy(rk);

  auto committed = broker.committed_offsets("harness-group", "harness-offsets");
  CHECK(committed.at(0) == 1);
  CHECK(committed.at(1) == 2);

  broker.restart(/*crash=*/true);
  WARN("broker restart took " << broker.last_start_ms() << " ms");
  committed = broker.committed_offsets("harness-group", "harness-offsets");
  CHECK(committed.at(0) == 1);
  CHECK(committed.at(1) == 2);
  // Data written before the crash is still there (the broker's log recovery).
  auto got = consume_all(broker.bootstrap(), "harness-offsets", 3, std::chrono::seconds(30));
  CHECK(got.size() == 3);
}
