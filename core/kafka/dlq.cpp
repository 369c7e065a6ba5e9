#include "core/kafka/dlq.hpp"

#include <librdkafka/rdkafka.h>
#include <spdlog/spdlog.h>

#include <stdexcept>

#include "core/kafka/errors.hpp"
#include "core/kafka/rdkafka_util.hpp"

namespace cdc2doris::kafka {

DeadLetterQueue::~DeadLetterQueue() = default;

namespace {

class KafkaDeadLetterQueue final : public DeadLetterQueue {
 public:
  explicit KafkaDeadLetterQueue(std::map<std::string, std::string> props) {
    for (const char* k : {"enable.idempotence", "acks"}) {
      auto it = props.find(k);
      if (it != props.end() && it->second != (std::string(k) == "acks" ? "all" : "true") &&
          !(std::string(k) == "acks" && it->second == "-1")) {
        throw std::invalid_argument(std::string("DLQ producer property ") + k +
                                    " cannot be changed: dead letters must not be duplicated or lost");
      }
    }
    props["enable.idempotence"] = "true";
    props["acks"] = "all";
    // Properties meant for the consumer make the producer warn; drop the
    // obvious ones so the DLQ can share the source's property map.
    for (const char* k : {"group.id", "enable.auto.commit", "enable.auto.offset.store", "auto.offset.reset",
                          "partition.assignment.strategy", "group.instance.id", "session.timeout.ms",
                          "max.poll.interval.ms", "isolation.level"}) {
      props.erase(k);
    }
    rk::Conf conf = rk::make_conf(props);
    rd_kafka_conf_set_opaque(conf.get(), this);
    rd_kafka_conf_set_dr_msg_cb(conf.get(), &KafkaDeadLetterQueue::delivery_trampoline);
    rd_kafka_conf_set_error_cb(conf.get(), &KafkaDeadLetterQueue::error_trampoline);
    rd_kafka_conf_set_log_cb(conf.get(), &rk::log_cb);
    char errstr[512];
    rk_ = rd_kafka_new(RD_KAFKA_PRODUCER, conf.get(), errstr, sizeof errstr);
    if (rk_ == nullptr) throw std::invalid_argument(std::string("DLQ producer: ") + errstr);
    conf.release();
  }

  ~KafkaDeadLetterQueue() override {
    if (auto e = flush(std::chrono::seconds(10))) spdlog::warn("DLQ producer: {}", e->what());
    rd_kafka_destroy(rk_);
  }

  std::optional<Error> produce(const std::string& topic, const Message& m, const std::string& error_text) override {
    rd_kafka_headers_t* hdrs = rd_kafka_headers_new(m.headers.size() + 4);
    for (const auto& h : m.headers) {
      rd_kafka_header_add(hdrs, h.key.data(), static_cast<ssize_t>(h.key.size()), h.value ? h.value->data() : nullptr,
                          h.value ? static_cast<ssize_t>(h.value->size()) : 0);
    }
    auto add = [&](std::string_view k, const std::string& v) {
      rd_kafka_header_add(hdrs, k.data(), static_cast<ssize_t>(k.size()), v.data(), static_cast<ssize_t>(v.size()));
    };
    add(kDlqErrorHeader, error_text);
    add(kDlqTopicHeader, std::string(m.topic));
    add(kDlqPartitionHeader, std::to_string(m.partition));
    add(kDlqOffsetHeader, std::to_string(m.offset));

    ErrorContext ctx;
    ctx.topic = std::string(m.topic);
    ctx.partition = m.partition;
    ctx.offset = m.offset;
    // librdkafka's varargs macros cast their arguments without parentheses.
    void* key = m.key ? const_cast<char*>(m.key->data()) : nullptr;
    size_t key_len = m.key ? m.key->size() : 0;
    void* value = m.value ? const_cast<char*>(m.value->data()) : nullptr;
    size_t value_len = m.value ? m.value->size() : 0;
    for (int attempt = 0;; ++attempt) {
      rd_kafka_resp_err_t err = rd_kafka_producev(
          rk_, RD_KAFKA_V_TOPIC(topic.c_str()), RD_KAFKA_V_KEY(key, key_len), RD_KAFKA_V_VALUE(value, value_len),
          RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_HEADERS(hdrs), RD_KAFKA_V_END);
      if (err == RD_KAFKA_RESP_ERR_NO_ERROR) {
        ++in_flight_;
        rd_kafka_poll(rk_, 0);  // serve delivery reports as we go
        return std::nullopt;
      }
      // A full local queue drains as deliveries complete; give it a bounded
      // chance before reporting.
      if (err == RD_KAFKA_RESP_ERR__QUEUE_FULL && attempt < 50) {
        rd_kafka_poll(rk_, 100);
        continue;
      }
      rd_kafka_headers_destroy(hdrs);  // not taken over on failure
      return make_error(err, "produce dead letter to " + topic, ctx);
    }
  }

  std::optional<Error> flush(std::chrono::milliseconds timeout) override {
    rd_kafka_resp_err_t err = rd_kafka_flush(rk_, static_cast<int>(timeout.count()));
    std::optional<Error> out;
    if (!failures_.empty()) {
      out = failures_.front();
    } else if (err == RD_KAFKA_RESP_ERR__TIMED_OUT) {
      out = Error(Disposition::Retry, "DLQ producer: flush timed out with " +
                                          std::to_string(rd_kafka_outq_len(rk_)) + " records undelivered");
    } else if (err) {
      out = make_error(err, "DLQ flush");
    }
    failures_.clear();
    return out;
  }

 private:
  static void delivery_trampoline(rd_kafka_t*, const rd_kafka_message_t* m, void* opaque) {
    auto* self = static_cast<KafkaDeadLetterQueue*>(opaque);
    --self->in_flight_;
    if (m->err) {
      ErrorContext ctx;
      ctx.topic = rd_kafka_topic_name(m->rkt);
      self->failures_.push_back(make_error(m->err, "deliver dead letter", std::move(ctx)));
    }
  }
  static void error_trampoline(rd_kafka_t* h, int err, const char* reason, void* opaque) {
    auto* self = static_cast<KafkaDeadLetterQueue*>(opaque);
    if (err == RD_KAFKA_RESP_ERR__FATAL) {
      char buf[512];
      rd_kafka_resp_err_t code = rd_kafka_fatal_error(h, buf, sizeof buf);
      self->failures_.push_back(Error(Disposition::Fatal, std::string("DLQ producer fatal error: ") +
                                                              rd_kafka_err2name(code) + ": " + buf));
      return;
    }
    spdlog::warn("DLQ producer: {}: {}", rd_kafka_err2name(static_cast<rd_kafka_resp_err_t>(err)), reason);
  }

  rd_kafka_t* rk_ = nullptr;
  int64_t in_flight_ = 0;
  std::vector<Error> failures_;
};

}  // namespace

std::unique_ptr<DeadLetterQueue> make_kafka_dlq(const std::map<std::string, std::string>& properties) {
  return std::make_unique<KafkaDeadLetterQueue>(properties);
}

}  // namespace cdc2doris::kafka
