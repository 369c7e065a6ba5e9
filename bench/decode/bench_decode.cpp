// bench-decode: decoder throughput per core on the shared workload (8 tables,
// c/u/d mix, ~600-byte schemaless MySQL records), for the plain, schema and
// flattened formats, next to a bare simdjson On-Demand pass that only
// extracts `after` and emits it as a JSON line (same process, same data).
//   bench-decode [--records N] [--seconds S]
//                [--format plain|plain-doris[+transforms]|plain-raw|plain-untyped|schema[+transforms]|flattened]
//                [--passes N] [--note-chars N]
// --passes: exactly N passes of the decoder and no baseline, a fixed amount
// of work for `perf stat` (cycles and instructions per record do not depend
// on what else the machine runs; records/s on a shared machine does).
// --note-chars: the generator's VARCHAR payload size (bench/run's plain 1 KB
// stream is --note-chars 300), so the decoder's own ceiling for an
// end-to-end stream is measured on the same records.
// schema-avro (issue 34 item 4): the schema-envelope records re-encoded as
// Debezium's Avro converter writes them (bench/decode/connect_avro.hpp) and
// read as the daemon reads decoding.format avro: Confluent's framing, the
// writer schema's ConnectBridge (core/avro) from a cache filled before the
// clock starts (the registry is asked once per id, never per record), then
// the same Decoder. Before timing, every record's rows from both paths are
// compared and must be equal (as JSON values: escapes may be spelled differently).
// cpu_ns_per_record: the decoding thread's CPU time (CLOCK_THREAD_CPUTIME_ID)
// per record, which other load on the machine does not inflate as it does
// records/s.
// Prints a table and one JSON summary line (prefix "BENCH_JSON ").
#include <simdjson.h>
#include <time.h>

#include <boost/json.hpp>

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <memory>
#include <tuple>
#include <cstdio>
#include <string>
#include <vector>

#include "bench/decode/connect_avro.hpp"
#include "core/avro/avro_connect.hpp"
#include "core/avro/avro_records.hpp"
#include "core/decode/decoder.hpp"
#include "core/decode/doris_types.hpp"
#include "core/decode/row_check.hpp"
#include "core/schema/types.hpp"
#include "tools/workload/workload.hpp"

using namespace cdc2doris;
namespace sj = simdjson::ondemand;

namespace {

// Records laid out as a consumer sees them: key and value bytes back to back
// in one buffer (as in a librdkafka fetch batch) and one topic string per
// topic, not a heap string per field scattered over a 27 MB corpus (that
// measured cache misses on the topic name, not decoding).
struct Item {
  std::string_view topic, key, value;
  int32_t partition = 0;
};
struct Corpus {
  std::string arena;
  std::vector<std::string> topics;
  std::vector<Item> records;
  size_t value_bytes = 0;
};

Corpus make(workload::Format f, size_t n, size_t note_chars) {
  workload::Options o;
  o.format = f;
  o.note_chars = note_chars;
  o.tables = 8;
  o.seed = 2024;
  workload::Generator g(o);
  std::vector<workload::Record> recs;
  recs.reserve(n);
  Corpus c;
  size_t bytes = 0;
  while (recs.size() < n) {
    auto r = g.next();
    if (!r.value) continue;  // tombstones are not decoding work
    bytes += r.key.size() + r.value->size();
    recs.push_back(std::move(r));
  }
  c.arena.reserve(bytes);
  for (const auto& r : recs) {
    if (std::find(c.topics.begin(), c.topics.end(), r.topic) == c.topics.end()) c.topics.push_back(r.topic);
  }
  std::vector<std::pair<size_t, size_t>> spans;  // (key offset, value offset) until the arena is final
  for (const auto& r : recs) {
    spans.emplace_back(c.arena.size(), c.arena.size() + r.key.size());
    c.arena += r.key;
    c.arena += *r.value;
    c.value_bytes += r.value->size();
  }
  for (size_t i = 0; i < recs.size(); ++i) {
    const auto& r = recs[i];
    Item it;
    it.topic = *std::find(c.topics.begin(), c.topics.end(), r.topic);
    it.key = std::string_view(c.arena).substr(spans[i].first, r.key.size());
    it.value = std::string_view(c.arena).substr(spans[i].second, r.value->size());
    it.partition = r.partition;
    c.records.push_back(it);
  }
  return c;
}

// Baseline: find `after` (inside `payload` when wrapped; the whole value when
// flattened) and copy its members into a JSON line, no validation or typing.
void emit_raw(sj::value v, std::string& out) {
  switch (v.type()) {
    case sj::json_type::object: {
      out.push_back('{');
      bool first = true;
      for (auto f : v.get_object()) {
        if (!first) out.push_back(',');
        first = false;
        out.push_back('"');
        out.append(f.unescaped_key().value());
        out.append("\":");
        emit_raw(f.value(), out);
      }
      out.push_back('}');
      return;
    }
    case sj::json_type::array: {
      out.push_back('[');
      bool first = true;
      for (auto item : v.get_array()) {
        if (!first) out.push_back(',');
        first = false;
        emit_raw(item.value(), out);
      }
      out.push_back(']');
      return;
    }
    default: {
      std::string_view t = v.raw_json_token();
      while (!t.empty() && (t.back() == ' ' || t.back() == '\n')) t.remove_suffix(1);
      out.append(t);
    }
  }
}

// The same records in Confluent's Avro framing; `schemas` gets what the registry would hold.
Corpus to_avro(const Corpus& in, std::map<int32_t, std::string>& schemas) {
  bench::ConnectToAvro enc;
  std::vector<std::pair<std::string, std::string>> framed;
  framed.reserve(in.records.size());
  Corpus c;
  c.topics = in.topics;
  size_t bytes = 0;
  for (const auto& r : in.records) {
    framed.emplace_back(enc.encode(r.key), enc.encode(r.value));
    bytes += framed.back().first.size() + framed.back().second.size();
  }
  c.arena.reserve(bytes);
  std::vector<size_t> at;
  for (const auto& [k, v] : framed) {
    at.push_back(c.arena.size());
    c.arena += k;
    c.arena += v;
    c.value_bytes += v.size();
  }
  for (size_t i = 0; i < in.records.size(); ++i) {
    Item it = in.records[i];
    it.topic = *std::find(c.topics.begin(), c.topics.end(), in.records[i].topic);
    it.key = std::string_view(c.arena).substr(at[i], framed[i].first.size());
    it.value = std::string_view(c.arena).substr(at[i] + framed[i].first.size(), framed[i].second.size());
    c.records.push_back(it);
  }
  schemas = enc.schemas();
  return c;
}

// What AvroRecords::to_json does per record once the writer schemas are
// cached: unframe key and value, find the id's bridge, write Connect JSON.
class AvroPath {
 public:
  explicit AvroPath(const std::map<int32_t, std::string>& schemas) {
    for (const auto& [id, text] : schemas) bridges_.emplace(id, std::make_unique<avro::ConnectBridge>(text));
  }
  const decode::KafkaRecord& to_json(const decode::KafkaRecord& in) {
    out_ = in;
    convert(*in.key, key_);
    out_.key = key_;
    convert(*in.value, value_);
    out_.value = value_;
    return out_;
  }

 private:
  void convert(std::string_view bytes, std::string& out) {
    std::string why;
    const auto framed = avro::unframe(bytes, 4, why);
    if (!framed) {
      std::fprintf(stderr, "avro framing: %s\n", why.c_str());
      std::exit(1);
    }
    auto it = bridges_.find(static_cast<int32_t>(framed->schema_id));
    if (it == bridges_.end()) {
      std::fprintf(stderr, "avro: no schema %lld\n", static_cast<long long>(framed->schema_id));
      std::exit(1);
    }
    out.clear();
    it->second->to_json(framed->body, out);
  }
  std::unordered_map<int32_t, std::unique_ptr<avro::ConnectBridge>> bridges_;
  decode::KafkaRecord out_;
  std::string key_, value_;
};

double thread_cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

double run_baseline(const Corpus& c, workload::Format f, double seconds, size_t& passes) {
  sj::parser parser;
  std::string buf, out;
  auto start = std::chrono::steady_clock::now();
  passes = 0;
  size_t sink = 0;
  do {
    for (const auto& r : c.records) {
      buf.reserve(r.value.size() + simdjson::SIMDJSON_PADDING);
      buf.assign(r.value);
      sj::document doc = parser.iterate(simdjson::padded_string_view(buf.data(), buf.size(), buf.capacity()));
      out.clear();
      sj::object top = doc.get_object();
      if (f == workload::Format::Plain) {
        for (auto field : top) {
          if (field.unescaped_key().value() == "after") {
            sj::value v = field.value();
            if (v.type() == sj::json_type::object) emit_raw(v, out);
          }
        }
      } else {
        for (auto field : top) {
          if (field.unescaped_key().value() != "payload") continue;
          sj::value payload = field.value();
          if (f == workload::Format::Flattened) {
            emit_raw(payload, out);
          } else {
            for (auto pf : payload.get_object()) {
              if (pf.unescaped_key().value() == "after") {
                sj::value v = pf.value();
                if (v.type() == sj::json_type::object) emit_raw(v, out);
              }
            }
          }
        }
      }
      out.push_back('\n');
      sink += out.size();
    }
    ++passes;
  } while (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < seconds);
  if (sink == 0) std::puts("");
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Returns wall seconds; `cpu_s` gets the thread's CPU seconds. With `avro`, records go through it first;
// with `bridge_only`, only through it (the Avro-to-Connect-JSON share of the Avro path).
// `context`: the table context of an identified change (what the pipeline's routing gives).
using ContextOf = std::function<decode::TableContext(const decode::Change&)>;

// identify, the change's context, convert: the pipeline's two steps.
std::optional<decode::DecodeError> decode_with(decode::Decoder& d, const decode::KafkaRecord& k, decode::Change& change,
                                               const ContextOf& context) {
  if (auto e = d.identify(k, change)) return e;
  return d.convert(context(change), change);
}

double run_decoder(const Corpus& c, const decode::DecoderOptions& o, const ContextOf& context, double seconds,
                   size_t fixed_passes, size_t& passes, uint64_t& rows, decode::RowCheck* check, double& cpu_s,
                   AvroPath* avro = nullptr, bool bridge_only = false) {
  decode::Decoder d(o);
  decode::Change change;
  std::string body;
  auto start = std::chrono::steady_clock::now();
  const double cpu0 = thread_cpu_s();
  passes = 0;
  int64_t offset = 0;
  size_t sink = 0;
  do {
    for (const auto& r : c.records) {
      decode::KafkaRecord k;
      k.topic = r.topic;
      k.partition = r.partition;
      k.offset = offset++;
      k.key = r.key;
      k.value = r.value;
      if (bridge_only) {
        sink += avro->to_json(k).value->size();
        continue;
      }
      if (auto err = decode_with(d, avro != nullptr ? avro->to_json(k) : k, change, context)) {
        std::fprintf(stderr, "decode error: %s\n", err->message().c_str());
        std::exit(1);
      }
      // What the pipeline does with the result: check the rows against
      // their Doris columns (delivery.check_rows) and append them to a
      // Stream Load body.
      if (check != nullptr)
        for (const auto& row : change.rows)
          if (auto v = check->check(row.json, row.partial_columns.empty())) {
            std::fprintf(stderr, "row check: %s %s %s\n", v->column.c_str(), v->expected.c_str(), v->detail.c_str());
            std::exit(1);
          }
      for (const auto& row : change.rows) {
        body.append(row.json);
        body.push_back('\n');
      }
      if (body.size() > (1 << 20)) body.clear();
    }
    ++passes;
  } while (fixed_passes > 0 ? passes < fixed_passes
                            : std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < seconds);
  rows = d.stats().rows;
  cpu_s = thread_cpu_s() - cpu0;
  if (sink == 1) std::puts("");
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  size_t records = 40000;
  double seconds = 2.0;
  std::string only;  // one format (for profiling); all three by default
  size_t fixed_passes = 0;
  size_t note_chars = workload::Options{}.note_chars;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--records") records = std::stoul(argv[i + 1]);
    else if (a == "--seconds") seconds = std::stod(argv[i + 1]);
    else if (a == "--format") only = argv[i + 1];
    else if (a == "--passes") fixed_passes = std::stoul(argv[i + 1]);
    else if (a == "--note-chars") note_chars = std::stoul(argv[i + 1]);
  }
  std::string json = "{\"bench\":\"decode\",\"results\":[";
  std::printf("%-22s %8s %12s %12s %14s %10s\n", "format", "avg_B", "decoder_MB/s", "records/s", "baseline_MB/s", "ratio");
  bool first = true;
  // "plain" decodes schemaless records with the generator's per-table type
  // hints (exact types, a library option tests use); "plain-untyped" as the
  // daemon does (it has no source of hints: values pass through, validated).
  // "plain-doris" is how the daemon decodes schemaless records now: typed by
  // the Doris target table's columns (the workload's DDL, via _schema).
  // "plain-raw" is the same for tables of the records' raw wire types
  // (bench/run's raw_ddl, the end-to-end plain runs: strings and integers as
  // they arrive, integers checked).
  // "+check": the same records with every row checked against the
  // workload table's Doris columns (delivery.check_rows, issue 33 item 4:
  // VARCHAR lengths, DECIMAL digits, integer ranges, dates, NOT NULL), so
  // the figure is the check's whole cost, next to the variant without.
  // "+transforms": the same records with column transforms active (issue 33
  // item 3): two renames and a filter every row passes (a decimal compared
  // by value, an IN list, a metadata test), so the figure is their whole
  // cost with the same rows loaded, next to the variant without.
  struct Variant {
    workload::Format format;
    const char* name;
    bool hints;
    const decode::SchemaNode* doris = nullptr;
    bool transforms = false;
    bool check = false;
    bool avro = false;
  };
  // The workload table's columns (workload::Generator::create_table_sql) as DESC shows them.
  std::vector<decode::ColumnLimit> limits;
  for (const auto& [n, t, nullable] : std::vector<std::tuple<std::string, std::string, bool>>{
           {"id", "BIGINT", false}, {"customer_id", "BIGINT", true}, {"amount", "DECIMAL(18,4)", true},
           {"quantity", "INT", true}, {"status", "VARCHAR(16)", true}, {"created_at", "DATETIME(6)", true},
           {"updated_at", "DATETIME(6)", true}, {"ship_date", "DATE", true}, {"is_gift", "SMALLINT", true},
           {"note", "VARCHAR(2048)", true}, {"tags", "JSON", true}})
    limits.push_back(schema::column_limit(n, t, nullable, false));
  decode::ColumnTransforms transforms;
  transforms.rename = {{"customer_id", "cust_id"}, {"note", "remark"}};
  transforms.filter = decode::RowFilter::parse(
      "amount >= 0 AND status IN ('new', 'paid', 'shipped', 'cancelled') AND @op != 'x'");
  const decode::SchemaNode doris_row = decode::schema_from_doris(
      {{"id", "BIGINT", {}, {}},
       {"customer_id", "BIGINT", {}, {}},
       {"amount", "DECIMALV3", 18, 4},
       {"quantity", "INT", {}, {}},
       {"status", "VARCHAR", {}, {}},
       {"created_at", "DATETIMEV2", {}, 6},
       {"updated_at", "DATETIMEV2", {}, 6},
       {"ship_date", "DATEV2", {}, {}},
       {"is_gift", "SMALLINT", {}, {}},
       {"note", "VARCHAR", {}, {}},
       {"tags", "JSONB", {}, {}}},
      {{"created_at", decode::EpochUnit::Micros}});
  const decode::SchemaNode raw_row = decode::schema_from_doris({{"id", "BIGINT", {}, {}},
                                                               {"customer_id", "BIGINT", {}, {}},
                                                               {"amount", "STRING", {}, {}},
                                                               {"quantity", "INT", {}, {}},
                                                               {"status", "VARCHAR", {}, {}},
                                                               {"created_at", "BIGINT", {}, {}},
                                                               {"updated_at", "VARCHAR", {}, {}},
                                                               {"ship_date", "INT", {}, {}},
                                                               {"is_gift", "SMALLINT", {}, {}},
                                                               {"note", "STRING", {}, {}},
                                                               {"tags", "STRING", {}, {}}});
  for (auto [f, name, hints, doris, with_transforms, with_check, with_avro] :
       {Variant{workload::Format::Plain, "plain", true},
        Variant{workload::Format::Plain, "plain-doris", true, &doris_row},
        Variant{workload::Format::Plain, "plain-doris+check", true, &doris_row, false, true},
        Variant{workload::Format::Plain, "plain-doris+transforms", true, &doris_row, true},
        Variant{workload::Format::Plain, "plain-raw", true, &raw_row},
        Variant{workload::Format::Plain, "plain-untyped", false},
        Variant{workload::Format::Schema, "schema", true},
        Variant{workload::Format::Schema, "schema-avro", true, nullptr, false, false, true},
        Variant{workload::Format::Schema, "schema+check", true, nullptr, false, true},
        Variant{workload::Format::Schema, "schema+transforms", true, nullptr, true},
        Variant{workload::Format::Flattened, "flattened", true}}) {
    if (!only.empty() && only != name) continue;
    Corpus c = make(f, f == workload::Format::Plain ? records : records / 4, note_chars);
    // schema-avro: the same records (same seed and count as "schema"), Avro-encoded; `c` stays the JSON
    // corpus for the baseline pass and the row comparison.
    std::map<int32_t, std::string> schemas;
    Corpus avro_corpus;
    std::unique_ptr<AvroPath> avro_path;
    if (with_avro) {
      avro_corpus = to_avro(c, schemas);
      avro_path = std::make_unique<AvroPath>(schemas);
    }
    workload::Generator g([&] {
      workload::Options o;
      o.format = f;
      return o;
    }());
    size_t dp = 0, bp = 0;
    uint64_t rows = 0;
    decode::DecoderOptions options = g.decoder_options();
    ContextOf context = [&g](const decode::Change& ch) { return g.table_context(ch); };
    if (!hints) context = [](const decode::Change&) { return decode::TableContext{}; };
    if (doris != nullptr) context = [doris](const decode::Change&) { return decode::TableContext{nullptr, doris}; };
    if (with_transforms) options.transforms = transforms;
    std::unique_ptr<decode::RowCheck> check;
    if (with_check) check = std::make_unique<decode::RowCheck>(limits);
    std::string avro_json;
    if (with_avro) {
      // Same rows from both paths, record by record, or the comparison is not of the same work.
      decode::Decoder dj(options), da(options);
      decode::Change cj, ca;
      size_t compared = 0;
      for (size_t i = 0; i < c.records.size(); ++i) {
        decode::KafkaRecord kj{c.records[i].topic, c.records[i].partition, static_cast<int64_t>(i),
                               c.records[i].key, c.records[i].value, {}};
        decode::KafkaRecord ka = kj;
        ka.key = avro_corpus.records[i].key;
        ka.value = avro_corpus.records[i].value;
        auto ej = decode_with(dj, kj, cj, context);
        auto ea = decode_with(da, avro_path->to_json(ka), ca, context);
        bool same = !ej && !ea && cj.rows.size() == ca.rows.size();
        // Equal as JSON values: the JSON path passes a string's escapes through as the record spelled them
        // ("\u0009"), the bridge writes its own ("\t").
        for (size_t j = 0; same && j < cj.rows.size(); ++j)
          same = cj.rows[j].json == ca.rows[j].json ||
                 boost::json::parse(cj.rows[j].json) == boost::json::parse(ca.rows[j].json);
        if (!same) {
          std::fprintf(stderr, "schema-avro: record %zu decodes differently: %s | %s\n", i,
                       cj.rows.empty() ? (ej ? ej->message().c_str() : "no rows") : cj.rows[0].json.c_str(),
                       ca.rows.empty() ? (ea ? ea->message().c_str() : "no rows") : ca.rows[0].json.c_str());
          return 1;
        }
        compared += cj.rows.size();
      }
      double bridge_cpu = 0;
      size_t bridge_passes = 0;
      uint64_t unused = 0;
      run_decoder(avro_corpus, options, context, seconds, fixed_passes, bridge_passes, unused, nullptr, bridge_cpu,
                  avro_path.get(), true);
      char abuf[256];
      std::snprintf(abuf, sizeof abuf,
                    ",\"rows_compared_identical\":%zu,\"schema_ids\":%zu,\"json_avg_record_bytes\":%.0f,"
                    "\"bridge_cpu_ns_per_record\":%.0f",
                    compared, schemas.size(),
                    static_cast<double>(c.value_bytes) / static_cast<double>(c.records.size()),
                    bridge_cpu * 1e9 / static_cast<double>(bridge_passes * c.records.size()));
      avro_json = abuf;
    }
    double cpu = 0;
    const double dt = run_decoder(with_avro ? avro_corpus : c, options, context, seconds, fixed_passes, dp, rows,
                                  check.get(), cpu, avro_path.get());
    if (fixed_passes > 0) {
      std::printf("%-22s %zu passes, %zu records each, %.3f s\n", name, dp, c.records.size(), dt);
      continue;
    }
    const double bt = run_baseline(c, f, seconds, bp);
    // The simdjson pass reads the JSON records; the decoder's MB/s and record size are of what it read (the
    // Avro bytes for schema-avro), so the ratio is taken in records.
    const double base_mbs = static_cast<double>(c.value_bytes) / 1e6 * static_cast<double>(bp) / bt;
    if (with_avro) c.value_bytes = avro_corpus.value_bytes;
    const double mb = static_cast<double>(c.value_bytes) / 1e6;
    const double dec_mbs = mb * static_cast<double>(dp) / dt;
    const double rec_s = static_cast<double>(c.records.size() * dp) / dt;
    const double ratio = (static_cast<double>(dp) / dt) / (static_cast<double>(bp) / bt);
    const double avg = static_cast<double>(c.value_bytes) / static_cast<double>(c.records.size());
    const double cpu_ns = cpu * 1e9 / static_cast<double>(dp * c.records.size());
    std::printf("%-22s %8.0f %12.1f %12.0f %14.1f %10.2f %8.0f ns/record CPU\n", name, avg, dec_mbs, rec_s, base_mbs,
                ratio, cpu_ns);
    char buf[768];
    std::snprintf(buf, sizeof buf,
                  "%s{\"format\":\"%s\",\"avg_record_bytes\":%.0f,\"mb_per_s\":%.1f,\"records_per_s\":%.0f,"
                  "\"baseline_mb_per_s\":%.1f,\"ratio_to_baseline\":%.3f,\"cpu_ns_per_record\":%.0f%s}",
                  first ? "" : ",", name, avg, dec_mbs, rec_s, base_mbs, ratio, cpu_ns, avro_json.c_str());
    json += buf;
    first = false;
  }
  json += "],\"targets\":{\"plain_mb_per_s\":500,\"schema_mb_per_s\":250}}";
  std::printf("BENCH_JSON %s\n", json.c_str());
  return 0;
}
