#pragma once
// RAII and conversion helpers for the librdkafka C API, shared by the source
// and the DLQ producer.
#include <librdkafka/rdkafka.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "core/kafka/source.hpp"

namespace cdc2doris::kafka::rk {

struct ListDeleter {
  void operator()(rd_kafka_topic_partition_list_t* l) const { rd_kafka_topic_partition_list_destroy(l); }
};
using List = std::unique_ptr<rd_kafka_topic_partition_list_t, ListDeleter>;

struct ErrorDeleter {
  void operator()(rd_kafka_error_t* e) const { rd_kafka_error_destroy(e); }
};
using ErrorPtr = std::unique_ptr<rd_kafka_error_t, ErrorDeleter>;

struct ConfDeleter {
  void operator()(rd_kafka_conf_t* c) const { rd_kafka_conf_destroy(c); }
};
using Conf = std::unique_ptr<rd_kafka_conf_t, ConfDeleter>;

inline List make_list(const std::vector<TopicPartition>& tps) {
  List l(rd_kafka_topic_partition_list_new(static_cast<int>(tps.size())));
  for (const auto& tp : tps) rd_kafka_topic_partition_list_add(l.get(), tp.topic.c_str(), tp.partition);
  return l;
}

inline std::vector<TopicPartition> to_vector(const rd_kafka_topic_partition_list_t* l) {
  std::vector<TopicPartition> out;
  if (l == nullptr) return out;
  for (int i = 0; i < l->cnt; ++i) out.push_back(TopicPartition{l->elems[i].topic, l->elems[i].partition});
  return out;
}

// Applies the properties to a new conf. Throws std::invalid_argument naming
// the key; the value is named only if the key is not sensitive.
inline Conf make_conf(const std::map<std::string, std::string>& props) {
  Conf conf(rd_kafka_conf_new());
  char errstr[512];
  for (const auto& [k, v] : props) {
    if (rd_kafka_conf_set(conf.get(), k.c_str(), v.c_str(), errstr, sizeof errstr) != RD_KAFKA_CONF_OK) {
      std::string msg = "Kafka property " + k + ": ";
      msg += is_sensitive_property(k) ? "invalid value" : errstr;
      throw std::invalid_argument(msg);
    }
  }
  return conf;
}

void log_cb(const rd_kafka_t* rk, int level, const char* fac, const char* buf);

// How read_committed treats an error on one partition: the source fails the
// read (it positions partitions by the answer), the monitor reports the rest.
enum class PartitionErrors { Fail, Skip };
// The group's committed offsets with their metadata (rd_kafka_committed); a
// partition without a committed offset is absent from the map.
std::variant<GroupOffsetMap, Error> read_committed(rd_kafka_t* rk, const std::vector<TopicPartition>& tps,
                                                   std::chrono::milliseconds timeout, PartitionErrors on_partition);

}  // namespace cdc2doris::kafka::rk
