// bench-kafka: the Kafka side of the end-to-end bench (issue 8 §3), driven by bench/run.
//
//   bench-kafka produce --bootstrap B [--records N] [--tables N] [--partitions N] [--topics N]
//                       [--format plain|schema|flattened] [--server NAME] [--db NAME] [--seed S]
//                       [--note-chars N] [--mix INSERT,UPDATE,DELETE,PK_CHANGE]
//                       [--toast-tables N] [--toast-partial-percent P]
//                       [--rate R] [--topic-config K=V[,K=V...]]
//       Creates the topics and produces the shared workload generator's stream
//       (tools/workload, the same generator as the tests and bench-decode).
//       --topics 0 (default): one topic per table, `{server}.{db}.{table}`, as
//       Debezium does. --topics K > 0: the records of table i go to topic
//       `{server}.{db}.t{i % K}` (same key, same partition function); the
//       daemon routes by the record's `source` block, not by topic, so 1,000
//       target tables can be fed from K topics. --note-chars sizes the
//       VARCHAR payload (record size), --mix the operation weights, and
//       --toast-tables / --toast-partial-percent make TOAST-style partial rows
//       and key-only deletes (tools/workload/workload.hpp). --records 0 only
//       creates the topics.
//       --rate R (the freshness bench): R records per second, each sent with
//       every ts_ms of its value (source.ts_ms among them) set to the wall
//       clock when it is handed to librdkafka. The generator alone makes
//       ~50k records/s on the bench machine, less than the daemon reads, so
//       the first min(N, 65,536) records are generated up front and sent
//       round robin (meant for --mix 1,0,0,0: each one an insert).
//       --format avro: the schema format's records re-encoded as Debezium's
//       Avro converter writes them, in Confluent's framing with schema ids
//       from 1 in order of first use (bench/decode/connect_avro.hpp);
//       --avro-schemas FILE gets one line per id, `id<TAB>subject<TAB>Avro
//       schema JSON`, for the caller to register in that order.
//       --topic-config: settings of the topics it creates (the freshness
//       bench: message.timestamp.type=LogAppendTime).
//   bench-kafka timestamps --bootstrap B --topic-regex R --out FILE
//       Reads every record of the matching topics and writes, per partition,
//       one line `topic<TAB>partition<TAB>first offset<TAB>ts,ts,...`: the
//       Kafka timestamp (milliseconds) of each record in offset order. Prints
//       the count of records per timestamp type (create_time,
//       log_append_time) so a caller can check it got the broker's clock.
//   bench-kafka count --bootstrap B --topic-regex R
//       The ceiling: a plain librdkafka consumer (assign from the beginning,
//       no group, no decoding) that only counts records and bytes up to the
//       high watermarks read at start.
//   bench-kafka wait-committed --bootstrap B --group G --topic-regex R [--timeout S]
//       Blocks until the group's committed offsets equal the high watermarks of
//       every partition of the matching topics (exit 0) or the timeout (exit 1).
//   bench-kafka commit-size --bootstrap B --group G --topic-regex R
//       What the group's last commits hold for the matching partitions: the
//       partitions with a committed offset and their metadata bytes (the
//       daemon writes every assigned partition at each epoch's commit point,
//       so this is the size of one epoch's OffsetCommit, less framing).
//
// Each prints one JSON line on stdout. Bytes are key + value bytes.
#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "bench/decode/connect_avro.hpp"
#include "tools/workload/workload.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using Handle = std::unique_ptr<rd_kafka_t, decltype(&rd_kafka_destroy)>;
using Parts = std::unique_ptr<rd_kafka_topic_partition_list_t, decltype(&rd_kafka_topic_partition_list_destroy)>;

double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Send-to-acknowledgement times of the paced producer (milliseconds).
std::vector<double> g_ack_ms;

void on_delivery(rd_kafka_t*, const rd_kafka_message_t* m, void*) {
  if (m->_private == nullptr || m->err != RD_KAFKA_RESP_ERR_NO_ERROR) return;
  const auto sent = static_cast<Clock::rep>(reinterpret_cast<intptr_t>(m->_private));
  g_ack_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now().time_since_epoch() -
                                                               Clock::duration(sent)).count());
}

Handle make_handle(rd_kafka_type_t type, const std::vector<std::pair<std::string, std::string>>& conf_kv) {
  char err[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  if (type == RD_KAFKA_PRODUCER) rd_kafka_conf_set_dr_msg_cb(conf, &on_delivery);
  for (const auto& [k, v] : conf_kv) {
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

struct Args {
  std::map<std::string, std::string> kv;
  std::string get(const std::string& k, const std::string& def = "") const {
    auto it = kv.find(k);
    return it == kv.end() ? def : it->second;
  }
  long long num(const std::string& k, long long def) const {
    auto it = kv.find(k);
    return it == kv.end() ? def : std::stoll(it->second);
  }
};

// topic -> partition count, for topics matching `re`.
std::map<std::string, int> matching_topics(rd_kafka_t* rk, const std::regex& re) {
  const rd_kafka_metadata_t* md = nullptr;
  rd_kafka_resp_err_t e = rd_kafka_metadata(rk, 1, nullptr, &md, 30000);
  if (e != RD_KAFKA_RESP_ERR_NO_ERROR) throw std::runtime_error(std::string("metadata: ") + rd_kafka_err2str(e));
  std::map<std::string, int> out;
  for (int i = 0; i < md->topic_cnt; ++i) {
    std::string name = md->topics[i].topic;
    if (std::regex_search(name, re)) out[name] = md->topics[i].partition_cnt;
  }
  rd_kafka_metadata_destroy(md);
  return out;
}

std::map<std::pair<std::string, int>, int64_t> high_watermarks(rd_kafka_t* rk, const std::map<std::string, int>& topics) {
  std::map<std::pair<std::string, int>, int64_t> out;
  for (const auto& [t, n] : topics) {
    for (int p = 0; p < n; ++p) {
      int64_t lo = 0, hi = 0;
      rd_kafka_resp_err_t e = rd_kafka_query_watermark_offsets(rk, t.c_str(), p, &lo, &hi, 30000);
      if (e != RD_KAFKA_RESP_ERR_NO_ERROR)
        throw std::runtime_error("watermarks " + t + ": " + rd_kafka_err2str(e));
      out[{t, p}] = hi;
    }
  }
  return out;
}

// `config`: "K=V,K=V" topic settings, empty for the broker's defaults.
void create_topics(rd_kafka_t* rk, const std::vector<std::string>& names, int partitions, const std::string& config) {
  char err[512];
  std::vector<rd_kafka_NewTopic_t*> nts;
  for (const auto& n : names) {
    rd_kafka_NewTopic_t* nt = rd_kafka_NewTopic_new(n.c_str(), partitions, 1, err, sizeof err);
    if (nt == nullptr) throw std::runtime_error(std::string("NewTopic: ") + err);
    nts.push_back(nt);
    for (size_t at = 0; at < config.size();) {
      const size_t end = std::min(config.find(',', at), config.size());
      const std::string kv = config.substr(at, end - at);
      const size_t eq = kv.find('=');
      if (eq == std::string::npos) throw std::runtime_error("--topic-config wants K=V, got " + kv);
      if (rd_kafka_NewTopic_set_config(nt, kv.substr(0, eq).c_str(), kv.substr(eq + 1).c_str()) !=
          RD_KAFKA_RESP_ERR_NO_ERROR)
        throw std::runtime_error("--topic-config " + kv + ": refused");
      at = end + 1;
    }
  }
  rd_kafka_queue_t* q = rd_kafka_queue_new(rk);
  rd_kafka_CreateTopics(rk, nts.data(), nts.size(), nullptr, q);
  rd_kafka_event_t* ev = rd_kafka_queue_poll(q, 120000);
  std::string failure;
  if (ev == nullptr) {
    failure = "CreateTopics timed out";
  } else if (rd_kafka_event_error(ev)) {
    failure = rd_kafka_event_error_string(ev);
  } else {
    size_t cnt = 0;
    const rd_kafka_topic_result_t** res = rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(ev), &cnt);
    for (size_t i = 0; i < cnt; ++i) {
      rd_kafka_resp_err_t e = rd_kafka_topic_result_error(res[i]);
      if (e != RD_KAFKA_RESP_ERR_NO_ERROR && e != RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS) {
        failure = std::string(rd_kafka_topic_result_name(res[i])) + ": " + rd_kafka_err2str(e);
        break;
      }
    }
  }
  if (ev) rd_kafka_event_destroy(ev);
  rd_kafka_queue_destroy(q);
  for (auto* nt : nts) rd_kafka_NewTopic_destroy(nt);
  if (!failure.empty()) throw std::runtime_error("create topics: " + failure);
}

// A record of the paced producer and where the digits of its ts_ms fields are.
struct PacedRecord {
  cdc2doris::workload::Record rec;
  std::vector<size_t> ts_digits;
};

PacedRecord paced(cdc2doris::workload::Record r) {
  PacedRecord p{std::move(r), {}};
  if (!p.rec.value) return p;
  const std::string& v = *p.rec.value;
  constexpr std::string_view kField = "ts_ms\":";
  constexpr size_t kDigits = 13;  // epoch milliseconds until 2286, the generator's clock too
  for (size_t at = v.find(kField); at != std::string::npos; at = v.find(kField, at + 1)) {
    const size_t d = at + kField.size();
    if (d + kDigits > v.size() || v.find_first_not_of("0123456789", d) != d + kDigits)
      throw std::runtime_error("paced producer: a ts_ms of " + p.rec.topic + " is not 13 digits");
    p.ts_digits.push_back(d);
  }
  if (p.ts_digits.empty()) throw std::runtime_error("paced producer: a record of " + p.rec.topic + " has no ts_ms");
  return p;
}

// The record with every ts_ms set to now (wall clock, ms).
cdc2doris::workload::Record stamped(PacedRecord& p) {
  if (p.rec.value) {
    const long long now = std::chrono::duration_cast<std::chrono::milliseconds>(
                              std::chrono::system_clock::now().time_since_epoch()).count();
    char digits[32];
    std::snprintf(digits, sizeof digits, "%013lld", now);
    for (size_t d : p.ts_digits) p.rec.value->replace(d, 13, digits, 13);
  }
  return p.rec;
}

// ,"ack_ms":{p50,p99,max}: how long the paced producer's records took from
// produce() to the broker's acknowledgement (the source-to-Kafka part of
// the freshness bench's figure); empty when unpaced.
std::string ack_quantiles() {
  if (g_ack_ms.empty()) return "";
  std::sort(g_ack_ms.begin(), g_ack_ms.end());
  auto q = [](double p) { return g_ack_ms[std::min(g_ack_ms.size() - 1, static_cast<size_t>(p * g_ack_ms.size()))]; };
  char buf[160];
  std::snprintf(buf, sizeof buf, ",\"ack_ms\":{\"p50\":%.1f,\"p99\":%.1f,\"max\":%.1f}", q(0.5), q(0.99),
                g_ack_ms.back());
  return buf;
}

int cmd_produce(const Args& a) {
  using namespace cdc2doris::workload;
  Options o;
  o.seed = static_cast<uint64_t>(a.num("--seed", 2024));
  o.tables = static_cast<int>(a.num("--tables", 8));
  o.partitions = static_cast<int>(a.num("--partitions", 4));
  o.server = a.get("--server", "bench");
  o.db = a.get("--db", "shop");
  const bool avro = a.get("--format") == "avro";
  auto fmt = avro ? std::optional<Format>(Format::Schema) : parse_format(a.get("--format", "plain"));
  if (!fmt) throw std::runtime_error("unknown --format");
  if (avro && a.num("--rate", 0) > 0) throw std::runtime_error("--format avro is for backlogs, not --rate");
  cdc2doris::bench::ConnectToAvro encoder;
  o.format = *fmt;
  o.note_chars = static_cast<size_t>(a.num("--note-chars", static_cast<long long>(o.note_chars)));
  o.toast_tables = static_cast<int>(a.num("--toast-tables", 0));
  if (a.kv.count("--toast-partial-percent")) o.toast_partial_percent = static_cast<int>(a.num("--toast-partial-percent", 0));
  if (a.kv.count("--mix")) {
    double w[4];
    if (std::sscanf(a.get("--mix").c_str(), "%lf,%lf,%lf,%lf", &w[0], &w[1], &w[2], &w[3]) != 4)
      throw std::runtime_error("--mix wants INSERT,UPDATE,DELETE,PK_CHANGE weights");
    o.insert_weight = w[0];
    o.update_weight = w[1];
    o.delete_weight = w[2];
    o.pk_change_weight = w[3];
  }
  const long long records = a.num("--records", 1000000);
  const double rate = static_cast<double>(a.num("--rate", 0));
  const int topics = static_cast<int>(a.num("--topics", 0));

  Generator gen(o);
  std::map<std::string, std::string> topic_of;  // "db.table" -> topic
  std::vector<std::string> topic_names;
  {
    auto tables = gen.tables();
    for (size_t i = 0; i < tables.size(); ++i) {
      const std::string table = tables[i].substr(tables[i].find('.') + 1);
      std::string t = topics > 0 ? o.server + "." + o.db + ".t" + std::to_string(i % static_cast<size_t>(topics))
                                 : o.server + "." + o.db + "." + table;
      topic_of[tables[i]] = t;
      if (topics == 0 || static_cast<int>(i) < topics) topic_names.push_back(t);
    }
  }
  const std::string bootstrap = a.get("--bootstrap");
  Handle rk = make_handle(RD_KAFKA_PRODUCER, {{"bootstrap.servers", bootstrap},
                                              {"linger.ms", "20"},
                                              {"batch.size", "1000000"},
                                              {"queue.buffering.max.kbytes", "262144"},
                                              {"compression.type", "none"},
                                              {"log_level", "3"}});
  create_topics(rk.get(), topic_names, o.partitions, a.get("--topic-config"));

  std::vector<PacedRecord> pool;
  if (rate > 0) {
    for (long long i = 0; i < std::min<long long>(records, 65536); ++i) pool.push_back(paced(gen.next()));
  }
  auto t0 = Clock::now();
  uint64_t key_bytes = 0, value_bytes = 0, tombstones = 0, partial_rows = 0, key_only_deletes = 0;
  for (long long i = 0; i < records; ++i) {
    // Paced: no record is sent before its slot; checked every 64 records.
    if (rate > 0 && i % 64 == 0) {
      const auto slot = t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(i / rate));
      if (slot > Clock::now()) {
        rd_kafka_poll(rk.get(), 0);
        std::this_thread::sleep_until(slot);
      }
    }
    Record r = rate > 0 ? stamped(pool[static_cast<size_t>(i) % pool.size()]) : gen.next();
    const std::string& topic = topic_of.at(r.table);
    if (avro) {
      r.key = encoder.encode(r.key, topic + "-key");
      if (r.value) r.value = encoder.encode(*r.value, topic + "-value");
    }
    key_bytes += r.key.size();
    if (r.value) {
      value_bytes += r.value->size();
      if (o.toast_tables > 0) {
        if (r.op == 'u' && r.value->find("__debezium_unavailable_value") != std::string::npos) ++partial_rows;
        if (r.op == 'd' && r.value->find("\"before\":null") != std::string::npos) ++key_only_deletes;
      }
    } else {
      ++tombstones;
    }
    void* vptr = r.value ? static_cast<void*>(r.value->data()) : nullptr;
    const size_t vlen = r.value ? r.value->size() : 0;
    void* sent = rate > 0 ? reinterpret_cast<void*>(static_cast<intptr_t>(Clock::now().time_since_epoch().count()))
                          : nullptr;
    for (;;) {
      rd_kafka_resp_err_t e = rd_kafka_producev(
          rk.get(), RD_KAFKA_V_TOPIC(topic.c_str()), RD_KAFKA_V_PARTITION(r.partition),
          RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_KEY(r.key.data(), r.key.size()),
          RD_KAFKA_V_VALUE(vptr, vlen),
          RD_KAFKA_V_OPAQUE(sent),
          RD_KAFKA_V_END);
      if (e == RD_KAFKA_RESP_ERR_NO_ERROR) break;
      if (e != RD_KAFKA_RESP_ERR__QUEUE_FULL) throw std::runtime_error(std::string("produce: ") + rd_kafka_err2str(e));
      rd_kafka_poll(rk.get(), 50);
    }
    rd_kafka_poll(rk.get(), 0);
  }
  rd_kafka_resp_err_t fe = rd_kafka_flush(rk.get(), 300000);
  if (fe != RD_KAFKA_RESP_ERR_NO_ERROR) throw std::runtime_error(std::string("flush: ") + rd_kafka_err2str(fe));
  const double secs = since(t0);
  if (avro) {
    std::FILE* f = std::fopen(a.get("--avro-schemas").c_str(), "w");
    if (f == nullptr) throw std::runtime_error("--format avro needs a writable --avro-schemas FILE");
    for (const auto& [id, schema] : encoder.schemas())
      std::fprintf(f, "%d\t%s\t%s\n", id, encoder.subjects().at(id).c_str(), schema.c_str());
    std::fclose(f);
  }
  std::printf(
      "{\"records\":%lld,\"tables\":%d,\"partitions\":%d,\"topics\":%zu,\"format\":\"%s\",\"key_bytes\":%llu,"
      "\"value_bytes\":%llu,\"tombstones\":%llu,\"partial_rows\":%llu,\"key_only_deletes\":%llu,"
      "\"avg_value_bytes\":%.1f,\"produce_s\":%.3f%s}\n",
      records, o.tables, o.partitions, topic_names.size(), avro ? "avro" : to_string(o.format),
      static_cast<unsigned long long>(key_bytes), static_cast<unsigned long long>(value_bytes),
      static_cast<unsigned long long>(tombstones), static_cast<unsigned long long>(partial_rows),
      static_cast<unsigned long long>(key_only_deletes),
      records > static_cast<long long>(tombstones)
          ? static_cast<double>(value_bytes) / static_cast<double>(records - static_cast<long long>(tombstones))
          : 0.0,
      secs, ack_quantiles().c_str());
  return 0;
}

// Assigns every non-empty partition of `hw` from its beginning to `rk` (a
// consumer); how many there are.
size_t assign_from_beginning(rd_kafka_t* rk, const std::map<std::pair<std::string, int>, int64_t>& hw) {
  Parts parts(rd_kafka_topic_partition_list_new(static_cast<int>(hw.size())), &rd_kafka_topic_partition_list_destroy);
  size_t assigned = 0;
  for (const auto& [tp, hi] : hw) {
    if (hi <= 0) continue;
    rd_kafka_topic_partition_list_add(parts.get(), tp.first.c_str(), tp.second)->offset = RD_KAFKA_OFFSET_BEGINNING;
    ++assigned;
  }
  rd_kafka_poll_set_consumer(rk);
  if (auto e = rd_kafka_assign(rk, parts.get()); e != RD_KAFKA_RESP_ERR_NO_ERROR)
    throw std::runtime_error(std::string("assign: ") + rd_kafka_err2str(e));
  return assigned;
}

int cmd_count(const Args& a) {
  auto t0 = Clock::now();
  Handle rk = make_handle(RD_KAFKA_CONSUMER, {{"bootstrap.servers", a.get("--bootstrap")},
                                              {"group.id", "bench-count-unused"},
                                              {"enable.auto.commit", "false"},
                                              {"enable.auto.offset.store", "false"},
                                              {"log_level", "3"}});
  const std::regex re(a.get("--topic-regex"));
  auto topics = matching_topics(rk.get(), re);
  if (topics.empty()) throw std::runtime_error("no topic matches");
  auto hw = high_watermarks(rk.get(), topics);
  size_t remaining = assign_from_beginning(rk.get(), hw);
  uint64_t records = 0, bytes = 0;
  std::map<std::pair<std::string, int>, bool> done;
  while (remaining > 0) {
    rd_kafka_message_t* m = rd_kafka_consumer_poll(rk.get(), 1000);
    if (m == nullptr) {
      if (since(t0) > 600) throw std::runtime_error("count: timed out");
      continue;
    }
    if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      ++records;
      bytes += m->len + m->key_len;
      std::pair<std::string, int> tp{rd_kafka_topic_name(m->rkt), m->partition};
      if (m->offset + 1 >= hw[tp] && !done[tp]) {
        done[tp] = true;
        --remaining;
      }
    }
    rd_kafka_message_destroy(m);
  }
  const double secs = since(t0);
  rd_kafka_consumer_close(rk.get());
  std::printf("{\"records\":%llu,\"bytes\":%llu,\"seconds\":%.3f,\"records_per_s\":%.0f,\"mb_per_s\":%.1f}\n",
              static_cast<unsigned long long>(records), static_cast<unsigned long long>(bytes), secs,
              static_cast<double>(records) / secs, static_cast<double>(bytes) / 1e6 / secs);
  return 0;
}

int cmd_timestamps(const Args& a) {
  Handle rk = make_handle(RD_KAFKA_CONSUMER, {{"bootstrap.servers", a.get("--bootstrap")},
                                              {"group.id", "bench-timestamps-unused"},
                                              {"enable.auto.commit", "false"},
                                              {"enable.auto.offset.store", "false"},
                                              {"log_level", "3"}});
  auto topics = matching_topics(rk.get(), std::regex(a.get("--topic-regex")));
  if (topics.empty()) throw std::runtime_error("no topic matches");
  auto hw = high_watermarks(rk.get(), topics);
  // Per partition: the first offset read and every timestamp after it, in offset order.
  std::map<std::pair<std::string, int>, std::pair<int64_t, std::vector<int64_t>>> ts;
  size_t remaining = assign_from_beginning(rk.get(), hw);
  auto t0 = Clock::now();
  uint64_t create_time = 0, log_append_time = 0, other = 0;
  while (remaining > 0) {
    rd_kafka_message_t* m = rd_kafka_consumer_poll(rk.get(), 1000);
    if (m == nullptr) {
      if (since(t0) > 600) throw std::runtime_error("timestamps: timed out");
      continue;
    }
    if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      std::pair<std::string, int> tp{rd_kafka_topic_name(m->rkt), m->partition};
      auto& [first, list] = ts[tp];
      if (list.empty()) first = m->offset;
      // A gap would shift every later timestamp onto the wrong row: refuse it.
      if (m->offset != first + static_cast<int64_t>(list.size()))
        throw std::runtime_error(tp.first + "/" + std::to_string(tp.second) + ": offset " + std::to_string(m->offset) +
                                 " after " + std::to_string(first + static_cast<int64_t>(list.size()) - 1));
      rd_kafka_timestamp_type_t type = RD_KAFKA_TIMESTAMP_NOT_AVAILABLE;
      list.push_back(rd_kafka_message_timestamp(m, &type));
      (type == RD_KAFKA_TIMESTAMP_LOG_APPEND_TIME ? log_append_time
                                                   : type == RD_KAFKA_TIMESTAMP_CREATE_TIME ? create_time : other)++;
      if (m->offset + 1 >= hw[tp]) --remaining;
    }
    rd_kafka_message_destroy(m);
  }
  rd_kafka_consumer_close(rk.get());
  std::FILE* f = std::fopen(a.get("--out").c_str(), "w");
  if (f == nullptr) throw std::runtime_error("cannot write " + a.get("--out"));
  for (const auto& [tp, fl] : ts) {
    std::fprintf(f, "%s\t%d\t%lld\t", tp.first.c_str(), tp.second, static_cast<long long>(fl.first));
    for (size_t i = 0; i < fl.second.size(); ++i)
      std::fprintf(f, i == 0 ? "%lld" : ",%lld", static_cast<long long>(fl.second[i]));
    std::fputc('\n', f);
  }
  std::fclose(f);
  std::printf("{\"records\":%llu,\"create_time\":%llu,\"log_append_time\":%llu,\"other\":%llu,\"seconds\":%.3f}\n",
              static_cast<unsigned long long>(create_time + log_append_time + other),
              static_cast<unsigned long long>(create_time), static_cast<unsigned long long>(log_append_time),
              static_cast<unsigned long long>(other), since(t0));
  return 0;
}

// A consumer handle that only reads --group's committed offsets.
Handle group_reader(const Args& a) {
  return make_handle(RD_KAFKA_CONSUMER, {{"bootstrap.servers", a.get("--bootstrap")},
                                         {"group.id", a.get("--group")},
                                         {"enable.auto.commit", "false"},
                                         {"log_level", "3"}});
}

int cmd_wait_committed(const Args& a) {
  auto t0 = Clock::now();
  const double timeout = static_cast<double>(a.num("--timeout", 1800));
  Handle rk = group_reader(a);
  auto topics = matching_topics(rk.get(), std::regex(a.get("--topic-regex")));
  auto hw = high_watermarks(rk.get(), topics);
  int64_t lag = -1;
  while (since(t0) < timeout) {
    Parts parts(rd_kafka_topic_partition_list_new(static_cast<int>(hw.size())), &rd_kafka_topic_partition_list_destroy);
    for (const auto& [tp, hi] : hw) rd_kafka_topic_partition_list_add(parts.get(), tp.first.c_str(), tp.second);
    if (rd_kafka_committed(rk.get(), parts.get(), 10000) == RD_KAFKA_RESP_ERR_NO_ERROR) {
      lag = 0;
      for (int i = 0; i < parts->cnt; ++i) {
        const auto& p = parts->elems[i];
        int64_t hi = hw[{p.topic, p.partition}];
        lag += p.offset < 0 ? hi : std::max<int64_t>(0, hi - p.offset);
      }
      if (lag == 0) {
        std::printf("{\"lag\":0,\"waited_s\":%.3f}\n", since(t0));
        return 0;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  std::printf("{\"lag\":%lld,\"waited_s\":%.3f,\"timeout\":true}\n", static_cast<long long>(lag), since(t0));
  return 1;
}

int cmd_commit_size(const Args& a) {
  Handle rk = group_reader(a);
  auto topics = matching_topics(rk.get(), std::regex(a.get("--topic-regex")));
  Parts parts(rd_kafka_topic_partition_list_new(16), &rd_kafka_topic_partition_list_destroy);
  for (const auto& [t, n] : topics)
    for (int p = 0; p < n; ++p) rd_kafka_topic_partition_list_add(parts.get(), t.c_str(), p);
  if (auto e = rd_kafka_committed(rk.get(), parts.get(), 60000); e != RD_KAFKA_RESP_ERR_NO_ERROR)
    throw std::runtime_error(std::string("committed: ") + rd_kafka_err2str(e));
  size_t committed = 0, metadata = 0, max_metadata = 0, names = 0;
  for (int i = 0; i < parts->cnt; ++i) {
    const auto& p = parts->elems[i];
    if (p.offset < 0) continue;
    ++committed;
    metadata += p.metadata_size;
    max_metadata = std::max(max_metadata, p.metadata_size);
    names += std::strlen(p.topic);
  }
  std::printf("{\"partitions\":%d,\"committed_partitions\":%zu,\"metadata_bytes\":%zu,\"max_metadata_bytes\":%zu,"
              "\"topic_name_bytes\":%zu}\n",
              parts->cnt, committed, metadata, max_metadata, names);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: bench-kafka produce|count|wait-committed|commit-size|timestamps --bootstrap B [...] (see source header)\n");
    return 2;
  }
  Args a;
  for (int i = 2; i + 1 < argc; i += 2) a.kv[argv[i]] = argv[i + 1];
  try {
    const std::string cmd = argv[1];
    if (cmd == "produce") return cmd_produce(a);
    if (cmd == "count") return cmd_count(a);
    if (cmd == "wait-committed") return cmd_wait_committed(a);
    if (cmd == "commit-size") return cmd_commit_size(a);
    if (cmd == "timestamps") return cmd_timestamps(a);
    std::fprintf(stderr, "unknown command %s\n", cmd.c_str());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench-kafka: %s\n", e.what());
    return 1;
  }
}
