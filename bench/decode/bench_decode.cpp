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
// Prints a table and one JSON summary line (prefix "BENCH_JSON ").
#include <simdjson.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <tuple>
#include <cstdio>
#include <string>
#include <vector>

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

double run_decoder(const Corpus& c, const decode::DecoderOptions& o, double seconds, size_t fixed_passes, size_t& passes,
                   uint64_t& rows, decode::RowCheck* check) {
  decode::Decoder d(o);
  decode::Change change;
  std::string body;
  auto start = std::chrono::steady_clock::now();
  passes = 0;
  int64_t offset = 0;
  do {
    for (const auto& r : c.records) {
      decode::KafkaRecord k;
      k.topic = r.topic;
      k.partition = r.partition;
      k.offset = offset++;
      k.key = r.key;
      k.value = r.value;
      if (auto err = d.decode(k, change)) {
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
  for (auto [f, name, hints, doris, with_transforms, with_check] :
       {Variant{workload::Format::Plain, "plain", true},
        Variant{workload::Format::Plain, "plain-doris", true, &doris_row},
        Variant{workload::Format::Plain, "plain-doris+check", true, &doris_row, false, true},
        Variant{workload::Format::Plain, "plain-doris+transforms", true, &doris_row, true},
        Variant{workload::Format::Plain, "plain-raw", true, &raw_row},
        Variant{workload::Format::Plain, "plain-untyped", false},
        Variant{workload::Format::Schema, "schema", true},
        Variant{workload::Format::Schema, "schema+check", true, nullptr, false, true},
        Variant{workload::Format::Schema, "schema+transforms", true, nullptr, true},
        Variant{workload::Format::Flattened, "flattened", true}}) {
    if (!only.empty() && only != name) continue;
    Corpus c = make(f, f == workload::Format::Plain ? records : records / 4, note_chars);
    workload::Generator g([&] {
      workload::Options o;
      o.format = f;
      return o;
    }());
    size_t dp = 0, bp = 0;
    uint64_t rows = 0;
    decode::DecoderOptions options = g.decoder_options();
    if (!hints) options.schemaless_types = nullptr;
    if (doris != nullptr) options.schemaless_types = [doris](std::string_view, std::string_view) { return doris; };
    if (with_transforms) options.transforms = transforms;
    std::unique_ptr<decode::RowCheck> check;
    if (with_check) check = std::make_unique<decode::RowCheck>(limits);
    const double dt = run_decoder(c, options, seconds, fixed_passes, dp, rows, check.get());
    if (fixed_passes > 0) {
      std::printf("%-22s %zu passes, %zu records each, %.3f s\n", name, dp, c.records.size(), dt);
      continue;
    }
    const double bt = run_baseline(c, f, seconds, bp);
    const double mb = static_cast<double>(c.value_bytes) / 1e6;
    const double dec_mbs = mb * static_cast<double>(dp) / dt;
    const double rec_s = static_cast<double>(c.records.size() * dp) / dt;
    const double base_mbs = mb * static_cast<double>(bp) / bt;
    const double avg = static_cast<double>(c.value_bytes) / static_cast<double>(c.records.size());
    std::printf("%-22s %8.0f %12.1f %12.0f %14.1f %10.2f\n", name, avg, dec_mbs, rec_s, base_mbs, dec_mbs / base_mbs);
    char buf[512];
    std::snprintf(buf, sizeof buf,
                  "%s{\"format\":\"%s\",\"avg_record_bytes\":%.0f,\"mb_per_s\":%.1f,\"records_per_s\":%.0f,"
                  "\"baseline_mb_per_s\":%.1f,\"ratio_to_baseline\":%.3f}",
                  first ? "" : ",", name, avg, dec_mbs, rec_s, base_mbs, dec_mbs / base_mbs);
    json += buf;
    first = false;
  }
  json += "],\"targets\":{\"plain_mb_per_s\":500,\"schema_mb_per_s\":250}}";
  std::printf("BENCH_JSON %s\n", json.c_str());
  return 0;
}
