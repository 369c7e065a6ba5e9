#include "tests/support/kafka_util.hpp"

#include <librdkafka/rdkafka.h>

#include <atomic>
#include <memory>
#include <stdexcept>
#include <functional>
#include <thread>

namespace cdc2doris::test {

namespace {
using Handle = std::unique_ptr<rd_kafka_t, decltype(&rd_kafka_destroy)>;
using TopicPartitions = std::unique_ptr<rd_kafka_topic_partition_list_t, decltype(&rd_kafka_topic_partition_list_destroy)>;

// Delivery failures of the current produce() call (one producer per call).
struct DeliveryState {
  std::atomic<long> failed{0};
  std::string first_error;
};

void on_delivery(rd_kafka_t*, const rd_kafka_message_t* m, void* opaque) {
  if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR || opaque == nullptr) return;
  auto* st = static_cast<DeliveryState*>(opaque);
  if (st->failed++ == 0) st->first_error = rd_kafka_err2str(m->err);
}

Handle make_handle(rd_kafka_type_t type, const std::string& bootstrap,
                   std::vector<std::pair<std::string, std::string>> extra = {}, DeliveryState* delivery = nullptr) {
  char err[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  if (delivery != nullptr) {
    rd_kafka_conf_set_dr_msg_cb(conf, &on_delivery);
    rd_kafka_conf_set_opaque(conf, delivery);
  }
  extra.insert(extra.begin(), {"bootstrap.servers", bootstrap});
  extra.emplace_back("log_level", "3");
  for (const auto& [k, v] : extra) {
    if (rd_kafka_conf_set(conf, k.c_str(), v.c_str(), err, sizeof err) != RD_KAFKA_CONF_OK) {
      rd_kafka_conf_destroy(conf);
      throw std::runtime_error("rdkafka conf " + k + ": " + err);
    }
  }
  rd_kafka_t* rk = rd_kafka_new(type, conf, err, sizeof err);
  if (rk == nullptr) {
    rd_kafka_conf_destroy(conf);
    throw std::runtime_error(std::string("rd_kafka_new: ") + err);
  }
  return Handle(rk, &rd_kafka_destroy);
}

int partition_count(rd_kafka_t* rk, const std::string& topic) {
  rd_kafka_topic_t* t = rd_kafka_topic_new(rk, topic.c_str(), nullptr);
  const rd_kafka_metadata_t* md = nullptr;
  rd_kafka_resp_err_t e = rd_kafka_metadata(rk, 0, t, &md, 10000);
  rd_kafka_topic_destroy(t);
  if (e != RD_KAFKA_RESP_ERR_NO_ERROR) throw std::runtime_error(std::string("metadata: ") + rd_kafka_err2str(e));
  int n = md->topic_cnt == 1 ? md->topics[0].partition_cnt : 0;
  rd_kafka_resp_err_t terr = md->topic_cnt == 1 ? md->topics[0].err : RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART;
  rd_kafka_metadata_destroy(md);
  if (terr != RD_KAFKA_RESP_ERR_NO_ERROR || n == 0)
    throw std::runtime_error("topic " + topic + " not found: " + rd_kafka_err2str(terr));
  return n;
}
}  // namespace

bool wait_for_cluster(const std::string& bootstrap, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  Handle rk = make_handle(RD_KAFKA_PRODUCER, bootstrap, {{"reconnect.backoff.max.ms", "200"}});
  while (std::chrono::steady_clock::now() < deadline) {
    const rd_kafka_metadata_t* md = nullptr;
    if (rd_kafka_metadata(rk.get(), 1, nullptr, &md, 1000) == RD_KAFKA_RESP_ERR_NO_ERROR) {
      bool ok = md->broker_cnt > 0;
      rd_kafka_metadata_destroy(md);
      if (ok) return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

namespace {

// Waits (30 s at most) until the topic's metadata shows `partitions`
// partitions, each with a leader known to the broker.
void wait_for_partition_count(rd_kafka_t* rk, const std::string& topic, int partitions) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline) {
    try {
      if (partition_count(rk, topic) == partitions) return;
    } catch (const std::exception&) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  throw std::runtime_error("topic " + topic + " did not reach " + std::to_string(partitions) +
                           " partitions in its metadata");
}

// Runs one admin request on a queue of its own (`start` sends it there) and
// waits 30 s for its answer: "" when it and every topic in it succeeded
// (`tolerated` counts as success), else what failed.
std::string admin_request(rd_kafka_t* rk, const std::function<void(rd_kafka_queue_t*)>& start,
                          const std::function<const rd_kafka_topic_result_t**(rd_kafka_event_t*, size_t*)>& topics,
                          rd_kafka_resp_err_t tolerated = RD_KAFKA_RESP_ERR_NO_ERROR) {
  rd_kafka_queue_t* q = rd_kafka_queue_new(rk);
  start(q);
  rd_kafka_event_t* ev = rd_kafka_queue_poll(q, 30000);
  std::string failure;
  if (ev == nullptr) {
    failure = "timed out";
  } else if (rd_kafka_event_error(ev)) {
    failure = rd_kafka_event_error_string(ev);
  } else {
    size_t n = 0;
    const rd_kafka_topic_result_t** res = topics(ev, &n);
    for (size_t i = 0; i < n; ++i) {
      const rd_kafka_resp_err_t e = rd_kafka_topic_result_error(res[i]);
      if (e != RD_KAFKA_RESP_ERR_NO_ERROR && e != tolerated) failure = rd_kafka_topic_result_error_string(res[i]);
    }
  }
  if (ev) rd_kafka_event_destroy(ev);
  rd_kafka_queue_destroy(q);
  return failure;
}

}  // namespace

void create_topic(const std::string& bootstrap, const std::string& topic, int partitions) {
  create_topic(bootstrap, topic, partitions, {});
}

void create_topic(const std::string& bootstrap, const std::string& topic, int partitions,
                  const std::map<std::string, std::string>& configs) {
  Handle rk = make_handle(RD_KAFKA_PRODUCER, bootstrap);
  char err[512];
  rd_kafka_NewTopic_t* nt = rd_kafka_NewTopic_new(topic.c_str(), partitions, 1, err, sizeof err);
  if (nt == nullptr) throw std::runtime_error(std::string("NewTopic: ") + err);
  for (const auto& [k, v] : configs)
    if (rd_kafka_NewTopic_set_config(nt, k.c_str(), v.c_str()) != RD_KAFKA_RESP_ERR_NO_ERROR) {
      rd_kafka_NewTopic_destroy(nt);
      throw std::runtime_error("NewTopic config " + k);
    }
  const std::string failure = admin_request(
      rk.get(), [&](rd_kafka_queue_t* q) { rd_kafka_CreateTopics(rk.get(), &nt, 1, nullptr, q); },
      [](rd_kafka_event_t* ev, size_t* n) {
        return rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(ev), n);
      },
      RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS);
  rd_kafka_NewTopic_destroy(nt);
  if (!failure.empty()) throw std::runtime_error("create topic " + topic + ": " + failure);
  // Metadata propagates asynchronously; wait until the leader is known so the
  // first produce does not race it.
  wait_for_partition_count(rk.get(), topic, partitions);
}

void delete_topic(const std::string& bootstrap, const std::string& topic) {
  Handle rk = make_handle(RD_KAFKA_PRODUCER, bootstrap);
  rd_kafka_DeleteTopic_t* dt = rd_kafka_DeleteTopic_new(topic.c_str());
  const std::string failure = admin_request(
      rk.get(), [&](rd_kafka_queue_t* q) { rd_kafka_DeleteTopics(rk.get(), &dt, 1, nullptr, q); },
      [](rd_kafka_event_t* ev, size_t* n) {
        return rd_kafka_DeleteTopics_result_topics(rd_kafka_event_DeleteTopics_result(ev), n);
      });
  rd_kafka_DeleteTopic_destroy(dt);
  if (!failure.empty()) throw std::runtime_error("delete topic " + topic + ": " + failure);
  // Gone from the metadata before it may be created again.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline) {
    try {
      partition_count(rk.get(), topic);
    } catch (const std::exception&) {
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  throw std::runtime_error("topic " + topic + " still in the metadata after its deletion");
}

void delete_records(const std::string& bootstrap, const std::string& topic, int32_t partition, int64_t before) {
  Handle rk = make_handle(RD_KAFKA_PRODUCER, bootstrap);
  TopicPartitions l(rd_kafka_topic_partition_list_new(1), &rd_kafka_topic_partition_list_destroy);
  rd_kafka_topic_partition_list_add(l.get(), topic.c_str(), partition)->offset = before;
  rd_kafka_DeleteRecords_t* dr = rd_kafka_DeleteRecords_new(l.get());
  rd_kafka_queue_t* q = rd_kafka_queue_new(rk.get());
  rd_kafka_DeleteRecords(rk.get(), &dr, 1, nullptr, q);
  rd_kafka_event_t* ev = rd_kafka_queue_poll(q, 30000);
  std::string failure;
  if (ev == nullptr) {
    failure = "timed out";
  } else if (rd_kafka_event_error(ev)) {
    failure = rd_kafka_event_error_string(ev);
  } else {
    const rd_kafka_topic_partition_list_t* res =
        rd_kafka_DeleteRecords_result_offsets(rd_kafka_event_DeleteRecords_result(ev));
    for (int i = 0; res && i < res->cnt; ++i)
      if (res->elems[i].err) failure = rd_kafka_err2str(res->elems[i].err);
  }
  if (ev) rd_kafka_event_destroy(ev);
  rd_kafka_queue_destroy(q);
  rd_kafka_DeleteRecords_destroy(dr);
  if (!failure.empty()) throw std::runtime_error("delete records of " + topic + ": " + failure);
}

std::pair<int64_t, int64_t> watermarks(const std::string& bootstrap, const std::string& topic, int32_t partition) {
  Handle rk = make_handle(RD_KAFKA_CONSUMER, bootstrap, {{"group.id", "watermarks"}});
  int64_t low = -1, high = -1;
  rd_kafka_resp_err_t e = rd_kafka_query_watermark_offsets(rk.get(), topic.c_str(), partition, &low, &high, 10000);
  if (e) throw std::runtime_error(std::string("watermarks: ") + rd_kafka_err2str(e));
  return {low, high};
}

void add_partitions(const std::string& bootstrap, const std::string& topic, int total) {
  Handle rk = make_handle(RD_KAFKA_PRODUCER, bootstrap);
  char err[512];
  rd_kafka_NewPartitions_t* np = rd_kafka_NewPartitions_new(topic.c_str(), static_cast<size_t>(total), err, sizeof err);
  if (np == nullptr) throw std::runtime_error(std::string("NewPartitions: ") + err);
  const std::string failure = admin_request(
      rk.get(), [&](rd_kafka_queue_t* q) { rd_kafka_CreatePartitions(rk.get(), &np, 1, nullptr, q); },
      [](rd_kafka_event_t* ev, size_t* n) {
        return rd_kafka_CreatePartitions_result_topics(rd_kafka_event_CreatePartitions_result(ev), n);
      });
  rd_kafka_NewPartitions_destroy(np);
  if (!failure.empty()) throw std::runtime_error("add partitions to " + topic + ": " + failure);
  wait_for_partition_count(rk.get(), topic, total);
}

void produce(const std::string& bootstrap, const std::string& topic, const std::vector<TestRecord>& records,
             std::chrono::milliseconds flush_timeout) {
  DeliveryState delivery;
  Handle rk = make_handle(RD_KAFKA_PRODUCER, bootstrap,
                          {{"enable.idempotence", "true"}, {"linger.ms", "5"}, {"queue.buffering.max.kbytes", "1048576"}},
                          &delivery);
  for (const auto& r : records) {
    rd_kafka_headers_t* hdrs = nullptr;
    if (!r.headers.empty()) {
      hdrs = rd_kafka_headers_new(r.headers.size());
      for (const auto& [k, v] : r.headers) rd_kafka_header_add(hdrs, k.data(), k.size(), v.data(), v.size());
    }
    // Computed outside the macros, which cast their arguments without parentheses.
    const void* key = r.key ? r.key->data() : nullptr;
    size_t key_len = r.key ? r.key->size() : 0;
    void* value = r.value ? const_cast<char*>(r.value->data()) : nullptr;
    size_t value_len = r.value ? r.value->size() : 0;
    for (;;) {
      rd_kafka_resp_err_t e = rd_kafka_producev(
          rk.get(), RD_KAFKA_V_TOPIC(topic.c_str()), RD_KAFKA_V_PARTITION(r.partition),
          RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
          RD_KAFKA_V_KEY(key, key_len), RD_KAFKA_V_VALUE(value, value_len),
          RD_KAFKA_V_HEADERS(hdrs), RD_KAFKA_V_END);
      if (e == RD_KAFKA_RESP_ERR__QUEUE_FULL) {
        rd_kafka_poll(rk.get(), 50);
        continue;
      }
      if (e != RD_KAFKA_RESP_ERR_NO_ERROR) {
        if (hdrs) rd_kafka_headers_destroy(hdrs);
        throw std::runtime_error("produce to " + topic + ": " + rd_kafka_err2str(e));
      }
      break;
    }
    rd_kafka_poll(rk.get(), 0);
  }
  rd_kafka_resp_err_t e = rd_kafka_flush(rk.get(), static_cast<int>(flush_timeout.count()));
  if (e != RD_KAFKA_RESP_ERR_NO_ERROR) throw std::runtime_error(std::string("flush: ") + rd_kafka_err2str(e));
  // A record that cannot be delivered (e.g. to a partition the topic does not
  // have) fails only in its delivery report, never in flush().
  if (delivery.failed > 0)
    throw std::runtime_error("produce to " + topic + ": " + std::to_string(delivery.failed.load()) +
                             " record(s) not delivered: " + delivery.first_error);
  // Idempotent producer: a delivery failure would surface as a fatal error.
  char errstr[512];
  if (rd_kafka_fatal_error(rk.get(), errstr, sizeof errstr) != RD_KAFKA_RESP_ERR_NO_ERROR)
    throw std::runtime_error(std::string("producer fatal error: ") + errstr);
}

std::map<int32_t, int64_t> committed_offsets(const std::string& bootstrap, const std::string& group,
                                             const std::string& topic) {
  Handle rk = make_handle(RD_KAFKA_CONSUMER, bootstrap, {{"group.id", group}, {"enable.auto.commit", "false"}});
  int n = partition_count(rk.get(), topic);
  TopicPartitions tps(rd_kafka_topic_partition_list_new(n), &rd_kafka_topic_partition_list_destroy);
  for (int p = 0; p < n; ++p) rd_kafka_topic_partition_list_add(tps.get(), topic.c_str(), p);
  rd_kafka_resp_err_t e = rd_kafka_committed(rk.get(), tps.get(), 15000);
  // Right after a broker restart the group coordinator is still loading or
  // moving: the broker answers so, and asking again succeeds.
  for (int attempt = 0; attempt < 30 && (e == RD_KAFKA_RESP_ERR_NOT_COORDINATOR ||
                                         e == RD_KAFKA_RESP_ERR_COORDINATOR_LOAD_IN_PROGRESS ||
                                         e == RD_KAFKA_RESP_ERR_COORDINATOR_NOT_AVAILABLE);
       ++attempt) {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    e = rd_kafka_committed(rk.get(), tps.get(), 15000);
  }
  if (e != RD_KAFKA_RESP_ERR_NO_ERROR) throw std::runtime_error(std::string("committed: ") + rd_kafka_err2str(e));
  std::map<int32_t, int64_t> out;
  for (int i = 0; i < tps->cnt; ++i) out[tps->elems[i].partition] = tps->elems[i].offset;
  rd_kafka_consumer_close(rk.get());
  return out;
}

std::vector<ConsumedRecord> consume_all(const std::string& bootstrap, const std::string& topic, size_t expected,
                                        std::chrono::milliseconds timeout) {
  Handle rk = make_handle(RD_KAFKA_CONSUMER, bootstrap,
                          {{"group.id", "cdc2doris-test-reader"}, {"enable.auto.commit", "false"},
                           {"enable.partition.eof", "false"}});
  rd_kafka_poll_set_consumer(rk.get());
  int n = partition_count(rk.get(), topic);
  TopicPartitions tps(rd_kafka_topic_partition_list_new(n), &rd_kafka_topic_partition_list_destroy);
  for (int p = 0; p < n; ++p)
    rd_kafka_topic_partition_list_add(tps.get(), topic.c_str(), p)->offset = RD_KAFKA_OFFSET_BEGINNING;
  if (rd_kafka_assign(rk.get(), tps.get()) != RD_KAFKA_RESP_ERR_NO_ERROR) throw std::runtime_error("assign failed");
  std::vector<ConsumedRecord> out;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (out.size() < expected && std::chrono::steady_clock::now() < deadline) {
    rd_kafka_message_t* m = rd_kafka_consumer_poll(rk.get(), 100);
    if (m == nullptr) continue;
    if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      ConsumedRecord r;
      r.topic = rd_kafka_topic_name(m->rkt);
      r.partition = m->partition;
      r.offset = m->offset;
      if (m->key) r.key.emplace(static_cast<const char*>(m->key), m->key_len);
      if (m->payload) r.value.emplace(static_cast<const char*>(m->payload), m->len);
      rd_kafka_headers_t* h = nullptr;
      if (rd_kafka_message_headers(m, &h) == RD_KAFKA_RESP_ERR_NO_ERROR) {
        const char* name;
        const void* val;
        size_t sz;
        for (size_t i = 0; rd_kafka_header_get_all(h, i, &name, &val, &sz) == RD_KAFKA_RESP_ERR_NO_ERROR; ++i)
          r.headers.emplace_back(name, std::string(static_cast<const char*>(val), sz));
      }
      out.push_back(std::move(r));
    }
    rd_kafka_message_destroy(m);
  }
  rd_kafka_consumer_close(rk.get());
  return out;
}

}  // namespace cdc2doris::test
