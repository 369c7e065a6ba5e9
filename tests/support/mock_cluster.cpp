#include "tests/support/mock_cluster.hpp"

#include <stdexcept>
#include <vector>

namespace cdc2doris::test {

MockCluster::MockCluster(int brokers) {
  char err[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set(conf, "log_level", "3", err, sizeof err);
  rk_ = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
  if (rk_ == nullptr) throw std::runtime_error(std::string("rd_kafka_new: ") + err);
  mcluster_ = rd_kafka_mock_cluster_new(rk_, brokers);
  if (mcluster_ == nullptr) throw std::runtime_error("rd_kafka_mock_cluster_new failed");
  bootstrap_ = rd_kafka_mock_cluster_bootstraps(mcluster_);
}

MockCluster::~MockCluster() {
  if (mcluster_) rd_kafka_mock_cluster_destroy(mcluster_);
  if (rk_) rd_kafka_destroy(rk_);
}

void MockCluster::create_topic(const std::string& topic, int partitions) {
  if (rd_kafka_mock_topic_create(mcluster_, topic.c_str(), partitions, 1) != RD_KAFKA_RESP_ERR_NO_ERROR)
    throw std::runtime_error("mock topic create failed: " + topic);
}

void MockCluster::broker_down(int32_t id) { rd_kafka_mock_broker_set_down(mcluster_, id); }
void MockCluster::broker_up(int32_t id) { rd_kafka_mock_broker_set_up(mcluster_, id); }
void MockCluster::broker_rtt(int32_t id, int rtt_ms) { rd_kafka_mock_broker_set_rtt(mcluster_, id, rtt_ms); }

void MockCluster::fail_requests(int16_t api_key, rd_kafka_resp_err_t err, size_t count) {
  std::vector<rd_kafka_resp_err_t> errs(count, err);
  rd_kafka_mock_push_request_errors_array(mcluster_, api_key, errs.size(), errs.data());
}

}  // namespace cdc2doris::test
