// bench-ceiling: the end-to-end bench's honest ceilings (issue 36 item 1), driven by bench/run.
//
//   bench-ceiling --config FILE --records N [--decode]
//
// Reads the daemon's own YAML (the file `cdc2doris run --config` gets) and
// consumes with the daemon's own consumer: kafka::make_kafka_source on
// Config::source_config(), so the librdkafka properties are the daemon's
// effective ones (its forced and default settings included, and the backlog
// waker), never a copy. It joins the configured group, polls with the
// daemon's poll timeout and batch size and stops after N records.
//   without --decode: the records are thrown away (the consumer ceiling);
//   with --decode:    each record is decoded exactly as the pipeline decodes
//                     it (pipeline::decode_routed: the decoding options, the
//                     router's per-table settings, the Doris column types of
//                     schemaless records read from the configured FE), and
//                     the rows are thrown away (the decode-and-discard
//                     ceiling: the most a thread that also loads can reach).
//
// Prints one JSON line on stdout; the log (the Kafka source's effective
// properties among it) goes to stderr.
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "core/doris/client.hpp"
#include "core/kafka/source.hpp"
#include "core/pipeline/column_types.hpp"
#include "core/pipeline/router.hpp"
#include "core/pipeline/table_routing.hpp"

namespace {

using namespace cdc2doris;
using Clock = std::chrono::steady_clock;

double secs(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

// Starts every partition where the daemon's first run would: the group's
// committed offset, else auto.offset.reset (the bench's groups are fresh).
class Listener final : public kafka::RebalanceListener {
 public:
  kafka::OffsetMap on_assign(const std::vector<kafka::TopicPartition>&) override {
    if (!assigned) assigned = Clock::now();
    return {};
  }
  void on_revoke(const std::vector<kafka::TopicPartition>&, bool) override {}
  std::optional<Clock::time_point> assigned;
};

struct Counts {
  uint64_t records = 0, bytes = 0, changes = 0, rows = 0, other_kinds = 0, decode_errors = 0;
};

int run(const std::string& config_path, uint64_t want, bool decode) {
  const auto t0 = Clock::now();
  const config::Config cfg = config::load_file(config_path);
  std::unique_ptr<pipeline::Router> router;
  std::unique_ptr<doris::DorisClient> doris;
  std::optional<decode::Decoder> decoder;
  std::optional<pipeline::DorisColumnTypes> column_types;
  std::optional<pipeline::TableRouting> routing;
  if (decode) {
    router = config::make_router(cfg);
    doris = doris::make_client(cfg.doris);
    // As Pipeline::Impl decodes (core/pipeline/pipeline_impl.hpp, run_loop.cpp).
    decoder.emplace(cfg.decoding);
    column_types.emplace(*router, *doris);
    routing.emplace(*router, &*column_types);
  }
  auto source = kafka::make_kafka_source(cfg.source_config());
  Listener listener;
  source->subscribe(listener);
  Counts n;
  decode::KafkaRecord rec;
  decode::Change change;
  const pipeline::RoutedTable* routed = nullptr;
  std::optional<Clock::time_point> first;
  while (n.records < want) {
    auto polled = source->poll(cfg.delivery.poll_timeout, cfg.delivery.poll_max_messages);
    for (const auto& e : polled.errors) {
      if (e.disposition() == Disposition::Fatal) {
        std::fprintf(stderr, "bench-ceiling: %s\n", e.what().c_str());
        return 1;
      }
    }
    if (!polled.batch.empty() && !first) first = Clock::now();
    for (const kafka::Message& m : polled.batch) {
      ++n.records;
      n.bytes += (m.key ? m.key->size() : 0) + (m.value ? m.value->size() : 0);
      if (!decoder) continue;
      rec.topic = m.topic;
      rec.partition = m.partition;
      rec.offset = m.offset;
      rec.key = m.key;
      rec.value = m.value;
      if (pipeline::decode_routed(*decoder, *routing, rec, change, routed)) {
        ++n.decode_errors;
      } else if (change.kind == decode::Kind::Change) {
        ++n.changes;
        n.rows += change.rows.size();
      } else {
        ++n.other_kinds;
      }
    }
    if (secs(t0, Clock::now()) > 1800) {
      std::fprintf(stderr, "bench-ceiling: %llu of %llu records after 30 min\n",
                   static_cast<unsigned long long>(n.records), static_cast<unsigned long long>(want));
      return 1;
    }
  }
  const auto t_done = Clock::now();
  if (auto e = source->close(std::chrono::seconds(10))) std::fprintf(stderr, "bench-ceiling: close: %s\n", e->what().c_str());
  const double total = secs(t0, t_done);
  const double after_assign = listener.assigned ? secs(*listener.assigned, t_done) : total;
  std::printf(
      "{\"records\":%llu,\"bytes\":%llu,\"decode\":%s,\"changes\":%llu,\"rows\":%llu,\"other_kinds\":%llu,"
      "\"decode_errors\":%llu,\"seconds\":%.3f,\"start_to_assigned_s\":%.3f,\"start_to_first_record_s\":%.3f,"
      "\"records_per_s\":%.0f,\"records_per_s_after_assign\":%.0f}\n",
      static_cast<unsigned long long>(n.records), static_cast<unsigned long long>(n.bytes), decode ? "true" : "false",
      static_cast<unsigned long long>(n.changes), static_cast<unsigned long long>(n.rows),
      static_cast<unsigned long long>(n.other_kinds), static_cast<unsigned long long>(n.decode_errors), total,
      listener.assigned ? secs(t0, *listener.assigned) : -1.0, first ? secs(t0, *first) : -1.0,
      static_cast<double>(n.records) / total, static_cast<double>(n.records) / after_assign);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string config_path;
  unsigned long long records = 0;
  bool decode = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--decode") {
      decode = true;
    } else if (a == "--config" && i + 1 < argc) {
      config_path = argv[++i];
    } else if (a == "--records" && i + 1 < argc) {
      records = std::stoull(argv[++i]);
    } else {
      std::fprintf(stderr, "bench-ceiling: unknown argument %s\n", argv[i]);
      return 2;
    }
  }
  if (config_path.empty() || records == 0) {
    std::fprintf(stderr, "usage: bench-ceiling --config FILE --records N [--decode]\n");
    return 2;
  }
  spdlog::set_default_logger(spdlog::stderr_logger_mt("bench-ceiling"));
  try {
    return run(config_path, records, decode);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench-ceiling: %s\n", e.what());
    return 1;
  }
}
