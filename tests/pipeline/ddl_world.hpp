#pragma once
// The world of the DDL and TRUNCATE tests (ddl_test.cpp, truncate_test.cpp):
// the pipeline against the Doris emulator through the real client, a fake
// Kafka and an in-memory checkpoint store; Debezium PostgreSQL records.
#include <boost/json.hpp>
#include <spdlog/spdlog.h>

#include <atomic>
#include <cstdlib>
#include <functional>
#include <optional>
#include <thread>

#include "core/pipeline/pipeline.hpp"
#include "core/schema/types.hpp"
#include "state/memory_store.hpp"
#include "tools/doris_emulator/launcher.hpp"
#include "tests/pipeline/fakes.hpp"

namespace cdc2doris::test::ddl {

using namespace std::chrono_literals;

inline const bool kQuiet = [] {
  const char* v = std::getenv("CDC2DORIS_TEST_LOG");
  if (v == nullptr) spdlog::set_level(spdlog::level::off);
  else if (std::string_view(v) == "debug") spdlog::set_level(spdlog::level::debug);
  return true;
}();

// One field of a row schema: its name and Connect schema (without "field").
struct Field {
  std::string name;
  std::string schema;
};

inline std::string with_field(const std::string& schema, const std::string& name) {
  return schema.substr(0, schema.size() - 1) + ",\"field\":\"" + name + "\"}";
}

// A Debezium PostgreSQL change of d.<table> with a JsonConverter schema.
inline std::string record(const std::string& table, const std::vector<Field>& fields, char op, const std::string& after,
                   int64_t lsn) {
  std::string row = R"({"type":"struct","optional":true,"name":"pg.d.)" + table + R"(.Value","fields":[)";
  for (size_t i = 0; i < fields.size(); ++i) row += (i ? "," : "") + with_field(fields[i].schema, fields[i].name);
  row += "]}";
  const std::string schema =
      R"({"type":"struct","optional":false,"name":"pg.d.)" + table + R"(.Envelope","fields":[)" +
      with_field(row, "before") + "," + with_field(row, "after") +
      R"(,{"type":"struct","optional":false,"name":"io.debezium.connector.postgresql.Source","field":"source","fields":[)"
      R"({"type":"string","optional":false,"field":"connector"},{"type":"string","optional":false,"field":"db"},)"
      R"({"type":"string","optional":false,"field":"schema"},{"type":"string","optional":false,"field":"table"},)"
      R"({"type":"int64","optional":true,"field":"lsn"}]},{"type":"string","optional":false,"field":"op"}]})";
  const std::string payload = R"({"before":null,"after":)" + after +
                              R"(,"source":{"connector":"postgresql","db":"d","schema":"public","table":")" + table +
                              R"(","lsn":)" + std::to_string(lsn) + R"(},"op":")" + op + "\"}";
  return R"({"schema":)" + schema + R"(,"payload":)" + payload + "}";
}

// A schemaless change of d.<table>.
inline std::string plain(const std::string& table, char op, const std::string& after, int64_t lsn) {
  return R"({"before":null,"after":)" + after +
         R"(,"source":{"connector":"postgresql","db":"d","schema":"public","table":")" + table + R"(","lsn":)" +
         std::to_string(lsn) + R"(},"op":")" + op + "\"}";
}

inline const std::string kInt64 = R"({"type":"int64","optional":false})";
inline const std::string kInt32 = R"({"type":"int32","optional":true})";
inline const std::string kString = R"({"type":"string","optional":true})";
inline std::string varchar(int n) {
  return R"({"type":"string","optional":true,"parameters":{"__debezium.source.column.type":"VARCHAR","__debezium.source.column.length":")" +
         std::to_string(n) + "\"}}";
}

struct World {
  Emulator emu;
  std::unique_ptr<doris::DorisClient> client;
  FakeSource source;
  state::MemoryCheckpointStore store;
  std::map<pipeline::Target, pipeline::TableSettings> settings;
  std::unique_ptr<pipeline::ExplicitRouter> router;
  pipeline::Metrics metrics;
  decode::DecoderOptions decoding;
  kafka::DeadLetterQueue* dead_letters = nullptr;  // for BadRecordPolicy::DeadLetter
  avro::AvroRecords* avro = nullptr;               // for decoding.format avro
  int64_t lsn = 1000;

  explicit World(cdc2doris::test::EmulatorOptions o = {}, bool create_database = true) : emu(std::move(o)) {
    if (create_database) emu.sql("", "CREATE DATABASE d");
    doris::ClientConfig cc;
    cc.fe_urls = {emu.fe()};
    cc.user = "root";
    client = doris::make_client(cc);
  }

  void table(const std::string& ddl) { emu.sql("d", ddl); }
  pipeline::TableSettings& set(const std::string& table) { return settings[{"d", table}]; }

  void topic(const std::string& table, int partitions = 1) { source.add_topic("pg.d." + table, partitions); }
  void produce(const std::string& table, const std::vector<Field>& fields, int64_t id, const std::string& after,
               char op = 'c', int32_t partition = 0) {
    source.produce("pg.d." + table, partition, "{\"id\":" + std::to_string(id) + "}",
                   record(table, fields, op, after, lsn += 10));
  }
  void produce_plain(const std::string& table, int64_t id, const std::string& after) {
    source.produce("pg.d." + table, 0, "{\"id\":" + std::to_string(id) + "}", plain(table, 'c', after, lsn += 10));
  }

  pipeline::PipelineConfig config() {
    pipeline::PipelineConfig c;
    c.label_prefix = "ddl";
    c.epoch_interval = 1h;  // only a schema change (or the stop) ends an epoch
    c.end_epoch_when_caught_up = false;
    c.poll_timeout = 2ms;
    c.backoff_base = 1ms;
    c.backoff_cap = 20ms;
    c.shutdown_deadline = 20s;
    return c;
  }

  // Runs until `done` holds (or the pipeline ends, or 30 s passed), then stops.
  pipeline::RunResult run_until(const std::function<bool()>& done, pipeline::PipelineConfig cfg) {
    router = std::make_unique<pipeline::ExplicitRouter>(std::map<std::string, pipeline::Target>{}, settings);
    pipeline::Dependencies deps{source, *client, store, *router, metrics, dead_letters, avro};
    pipeline::Pipeline p(cfg, decoding, deps);
    std::optional<pipeline::RunResult> result;
    std::atomic<bool> finished{false};
    std::thread t([&] {
      result = p.run();
      finished = true;
    });
    source.wait_for([&] { return finished.load() || done(); }, 30s);
    p.request_stop();
    t.join();
    return *result;
  }
  // Runs until `records` more records were processed.
  pipeline::RunResult run(uint64_t records, pipeline::PipelineConfig cfg) {
    const uint64_t want = metrics.records_consumed.load() + records;
    return run_until([&] { return metrics.records_consumed.load() >= want; }, std::move(cfg));
  }
  pipeline::RunResult run(uint64_t records) { return run(records, config()); }

  // DESC as "name TYPE" (normalized types).
  std::vector<std::string> desc(const std::string& table) {
    auto res = boost::json::parse(emu.query("d", "DESC `d`.`" + table + "`")).as_object();
    std::vector<std::string> out;
    for (const auto& r : res["data"].as_object()["data"].as_array()) {
      const auto& a = r.as_array();
      out.push_back(std::string(a[0].as_string().c_str()) + " " + schema::normalize_type(a[1].as_string().c_str()));
    }
    return out;
  }
  uint64_t ddl_count(const std::string& table, const std::string& kind) {
    auto s = metrics.snapshot();
    auto it = s.ddl.find("d." + table + "|" + kind);
    return it == s.ddl.end() ? 0 : it->second;
  }
  std::optional<state::DdlRecord> ddl_record(const std::string& table) {
    for (auto& r : store.ddl_records())
      if (r.table == table) return r;
    return std::nullopt;
  }
};

}  // namespace cdc2doris::test::ddl
