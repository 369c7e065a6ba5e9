#pragma once
// librdkafka's in-process mock cluster, for fast unit tests and fault
// injection (broker down, request errors, latency). Anything that depends on
// real broker behaviour (consumer groups, rebalances, restarts) uses
// KafkaBroker instead.
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include <string>

#include "tools/fixtures/kafka_util.hpp"

namespace cdc2doris::test {

class MockCluster {
 public:
  explicit MockCluster(int brokers = 1);
  ~MockCluster();
  MockCluster(const MockCluster&) = delete;
  MockCluster& operator=(const MockCluster&) = delete;

  const std::string& bootstrap() const { return bootstrap_; }
  void create_topic(const std::string& topic, int partitions);
  rd_kafka_mock_cluster_t* raw() { return mcluster_; }

  // Fault injection.
  void broker_down(int32_t broker_id);
  void broker_up(int32_t broker_id);
  void broker_rtt(int32_t broker_id, int rtt_ms);
  // The next `count` requests of `api_key` (e.g. RD_KAFKAP_Fetch = 1) fail with `err`.
  void fail_requests(int16_t api_key, rd_kafka_resp_err_t err, size_t count);

 private:
  rd_kafka_t* rk_ = nullptr;  // owns the mock cluster
  rd_kafka_mock_cluster_t* mcluster_ = nullptr;
  std::string bootstrap_;
};

}  // namespace cdc2doris::test
