// Monitor over its own librdkafka consumer handle (never subscribed).
#include "core/kafka/monitor.hpp"

#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <limits>
#include <optional>
#include <regex>
#include <stdexcept>

#include "core/kafka/errors.hpp"
#include "core/kafka/rdkafka_util.hpp"

namespace cdc2doris::kafka {

Monitor::~Monitor() = default;

std::variant<GroupOffsetMap, Error> Monitor::committed_group(const std::vector<TopicPartition>& tps,
                                                             std::chrono::milliseconds timeout) {
  return without_metadata(committed(tps, timeout));
}

bool topic_selected(const std::string& entry, const std::string& topic) {
  if (entry.empty() || entry.front() != '^') return entry == topic;
  // librdkafka matches subscriptions with its own POSIX-like engine; for the
  // patterns people write (anchors, classes, alternation, .*) ECMAScript agrees.
  try {
    return std::regex_search(topic, std::regex(entry));
  } catch (const std::regex_error&) {
    return false;
  }
}

namespace {

int to_ms(std::chrono::milliseconds d) {
  return static_cast<int>(std::clamp<int64_t>(d.count(), 0, std::numeric_limits<int>::max()));
}

class KafkaMonitor final : public Monitor {
 public:
  explicit KafkaMonitor(const SourceConfig& cfg) : topics_(cfg.topics), security_(SecuritySettings::of(cfg.properties)) {
    auto props = cfg.properties;
    props["enable.auto.commit"] = "false";
    props["enable.auto.offset.store"] = "false";
    // Never subscribed, so never assigned: an eager strategy avoids
    // librdkafka#4312 (a cooperative consumer never assigned aborts in
    // destroy before 2.3), and no static member id may collide with the
    // pipeline's consumer.
    props["partition.assignment.strategy"] = "range";
    props.erase("group.instance.id");
    // Its own client id, so broker logs and quotas tell the probe from the consumer.
    auto id = props.find("client.id");
    props["client.id"] = (id == props.end() ? std::string("rdkafka") : id->second) + "-monitor";
    rk::Conf conf = rk::make_conf(props);
    rd_kafka_conf_set_log_cb(conf.get(), &rk::log_cb);
    rd_kafka_conf_set_error_cb(conf.get(), &KafkaMonitor::on_error);
    rd_kafka_conf_set_opaque(conf.get(), this);
    char errstr[512];
    rk_ = rd_kafka_new(RD_KAFKA_CONSUMER, conf.get(), errstr, sizeof errstr);
    if (rk_ == nullptr) throw std::invalid_argument(std::string("Kafka monitor: ") + errstr);
    conf.release();
  }
  ~KafkaMonitor() override {
    // Never subscribed: nothing to leave, so no consumer close round trip.
    rd_kafka_destroy_flags(rk_, RD_KAFKA_DESTROY_F_NO_CONSUMER_CLOSE);
  }

  std::variant<ClusterView, Error> cluster(std::chrono::milliseconds timeout) override {
    serve_events();
    const rd_kafka_metadata_t* md = nullptr;
    // In slices, serving errors in between: a broker that refuses our
    // credentials or certificate is named at once (/readyz says why), not
    // after the whole timeout as "timed out".
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    rd_kafka_resp_err_t err;
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      err = rd_kafka_metadata(rk_, /*all_topics=*/1, nullptr, &md,
                              to_ms(std::min(left, std::chrono::milliseconds(500))));
      if (!err) break;
      serve_events();
      if (security_failure_) return *security_failure_;
      if (left <= std::chrono::milliseconds(500)) return make_error(err, "metadata request");
    }
    security_failure_.reset();
    ClusterView out;
    std::vector<bool> matched(topics_.size(), false);
    for (int i = 0; i < md->topic_cnt; ++i) {
      const auto& t = md->topics[i];
      if (t.err) continue;  // e.g. UNKNOWN_TOPIC_OR_PART while being created or deleted
      const std::string name = t.topic;
      for (size_t k = 0; k < topics_.size(); ++k) {
        if (!topic_selected(topics_[k], name)) continue;
        matched[k] = true;
        out.partitions[name] = t.partition_cnt;
      }
    }
    rd_kafka_metadata_destroy(md);
    for (size_t k = 0; k < topics_.size(); ++k)
      if (!matched[k]) out.missing.push_back(topics_[k]);
    return out;
  }

  std::variant<std::map<TopicPartition, Watermarks>, Error> watermarks(const std::vector<TopicPartition>& tps,
                                                                       std::chrono::milliseconds timeout) override {
    serve_events();
    std::map<TopicPartition, Watermarks> out;
    for (const auto& tp : tps) {
      Watermarks w;
      rd_kafka_resp_err_t err =
          rd_kafka_query_watermark_offsets(rk_, tp.topic.c_str(), tp.partition, &w.low, &w.high, to_ms(timeout));
      if (err) {
        ErrorContext ctx;
        ctx.topic = tp.topic;
        ctx.partition = tp.partition;
        return make_error(err, "query watermark offsets", ctx);
      }
      out[tp] = w;
    }
    return out;
  }

  std::variant<OffsetMap, Error> committed(const std::vector<TopicPartition>& tps,
                                           std::chrono::milliseconds timeout) override {
    return offsets_only(committed_group(tps, timeout));
  }

  std::variant<GroupOffsetMap, Error> committed_group(const std::vector<TopicPartition>& tps,
                                                      std::chrono::milliseconds timeout) override {
    serve_events();
    return rk::read_committed(rk_, tps, timeout, rk::PartitionErrors::Skip);
  }


 private:
  // Logs and errors queue up on the handle until served.
  void serve_events() { rd_kafka_poll(rk_, 0); }

  static void on_error(rd_kafka_t*, int err, const char* reason, void* opaque) {
    auto* self = static_cast<KafkaMonitor*>(opaque);
    const auto code = static_cast<rd_kafka_resp_err_t>(err);
    if (is_security_failure(code, reason)) self->security_failure_ = make_error(code, reason, {}, &self->security_);
  }

  std::vector<std::string> topics_;
  SecuritySettings security_;
  std::optional<Error> security_failure_;  // since the last answered metadata request
  rd_kafka_t* rk_ = nullptr;
};

}  // namespace

std::unique_ptr<Monitor> make_kafka_monitor(const SourceConfig& cfg) { return std::make_unique<KafkaMonitor>(cfg); }

}  // namespace cdc2doris::kafka
