#include "tests/sources/source_e2e.hpp"

#include <algorithm>
#include <boost/json.hpp>
#include <charconv>
#include <cmath>
#include <fstream>
#include <librdkafka/rdkafka.h>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "tools/fixtures/kafka_util.hpp"
#include "tests/support/run_command.hpp"

namespace cdc2doris::test::sources {

namespace json = boost::json;

std::string doris_ddl(const std::string& table, const std::vector<std::pair<std::string, std::string>>& key,
                      const std::vector<std::pair<std::string, std::string>>& cols, const std::string& sequence_col) {
  std::string s = "CREATE TABLE " + table + " (";
  std::string keys;
  bool first = true;
  for (const auto& [n, t] : key) {
    s += (first ? "" : ", ") + n + " " + t + " NOT NULL";
    keys += (first ? "" : ", ") + n;
    first = false;
  }
  for (const auto& [n, t] : cols) s += ", " + n + " " + t + " NULL";
  if (!sequence_col.empty()) s += ", " + sequence_col + " BIGINT NULL";
  return s + ") UNIQUE KEY(" + keys + ") DISTRIBUTED BY HASH(" + key.front().first +
         ") BUCKETS 1 PROPERTIES (\"replication_num\" = \"1\", \"enable_unique_key_merge_on_write\" = \"true\"" +
         (sequence_col.empty() ? "" : ", \"function_column.sequence_col\" = \"" + sequence_col + "\"") + ")";
}

std::string expected_expr(const Column& c, bool schemas) {
  const std::string& e = schemas || c.plain_expected.empty() ? c.expected : c.plain_expected;
  std::string out;
  for (size_t i = 0; i < e.size(); ++i) {
    // '$' right after a quote is a JSON path root ('$'), not the column.
    if (e[i] == '$' && (i == 0 || e[i - 1] != '\''))
      out += c.name;
    else
      out += e[i];
  }
  return out;
}

std::vector<std::string> split_lines(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.push_back(line);
  return out;
}

// ---------------------------------------------------------------- daemon

Daemon::Daemon(const std::string& name, const std::string& bootstrap, const std::string& topic_regex,
               const std::string& fe, const std::string& target_db, const std::string& routing_yaml,
               const std::string& decoding_yaml, const std::string& dead_letter_topic)
    : dir_("cdc2doris-" + name) {
  admin_ = "127.0.0.1:" + std::to_string(free_port());
  std::ofstream cfg(dir_ / "cdc2doris.yaml");
  cfg << "kafka:\n  bootstrap_servers: \"" << bootstrap << "\"\n  group_id: " << name << "\n"
      << "  topic_regex: \"" << topic_regex << "\"\n"
      << "  properties:\n    auto.offset.reset: earliest\n"
      // Topics appear while the test runs; the regex subscription must see them soon.
      << "    topic.metadata.refresh.interval.ms: \"1000\"\n"
      << "doris:\n  fe: [\"" << fe << "\"]\n  user: root\n  password: \"\"\n"
      << "routing:\n  target: \"" << target_db << ".{table}\"\n"
      << routing_yaml
      << "delivery:\n  label_prefix: " << name << "\n  epoch_interval: 500ms\n"
      << (dead_letter_topic.empty() ? std::string()
                                    : "  bad_records: dead_letter\n  dead_letter_topic: " + dead_letter_topic + "\n")
      << "decoding:\n  time_zone: Europe/Berlin\n"
      << decoding_yaml
      << "state:\n  dir: " << (dir_ / "state").string() << "\n"
      << "admin:\n  listen: \"" << admin_ << "\"\n"
      << "logging:\n  level: info\n";
  cfg.close();
  const auto log = (dir_ / "daemon.log").string();
  proc_ = std::make_unique<Process>(
      ProcessOptions{{CDC2DORIS_DAEMON_BIN, "run", "--config", (dir_ / "cdc2doris.yaml").string()}, {}, log, log, ""});
}

Daemon::~Daemon() {
  if (proc_) proc_->stop(std::chrono::seconds(30));
}

std::string Daemon::log_tail(size_t bytes) const { return file_tail(dir_ / "daemon.log", bytes); }

// ---------------------------------------------------------------- Kafka

std::map<std::string, int64_t> end_offsets(const std::string& bootstrap, const std::string& prefix) {
  char err[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set(conf, "bootstrap.servers", bootstrap.c_str(), err, sizeof err);
  rd_kafka_conf_set(conf, "group.id", "cdc2doris-test-watermarks", err, sizeof err);
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof err);
  if (rk == nullptr) throw std::runtime_error(std::string("rd_kafka_new: ") + err);
  std::map<std::string, int64_t> out;
  const rd_kafka_metadata_t* md = nullptr;
  rd_kafka_resp_err_t e = rd_kafka_metadata(rk, 1, nullptr, &md, 10000);
  if (e != RD_KAFKA_RESP_ERR_NO_ERROR) {
    rd_kafka_destroy(rk);
    throw std::runtime_error(std::string("metadata: ") + rd_kafka_err2str(e));
  }
  for (int i = 0; i < md->topic_cnt; ++i) {
    const auto& t = md->topics[i];
    if (std::string_view(t.topic).substr(0, prefix.size()) != prefix) continue;
    for (int p = 0; p < t.partition_cnt; ++p) {
      int64_t lo = 0, hi = 0;
      e = rd_kafka_query_watermark_offsets(rk, t.topic, t.partitions[p].id, &lo, &hi, 10000);
      if (e != RD_KAFKA_RESP_ERR_NO_ERROR) {
        rd_kafka_metadata_destroy(md);
        rd_kafka_destroy(rk);
        throw std::runtime_error(std::string("watermarks of ") + t.topic + ": " + rd_kafka_err2str(e));
      }
      out[std::string(t.topic) + "[" + std::to_string(t.partitions[p].id) + "]"] = hi;
    }
  }
  rd_kafka_metadata_destroy(md);
  rd_kafka_destroy(rk);
  return out;
}

std::string wait_committed(Emulator& emu, Daemon& d, const std::map<std::string, int64_t>& ends,
                           std::chrono::seconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string body;
  for (;;) {
    std::string missing;
    try {
      body = emu.http("GET", d.admin(), "/status").body;
      auto st = json::parse(body).as_object();
      const auto& parts = st.at("partitions").as_object();
      for (const auto& [tp, end] : ends) {
        auto it = parts.find(tp);
        int64_t committed = it == parts.end() ? -1 : it->value().as_object().at("committed").to_number<int64_t>();
        if (committed < end) missing += tp + " committed " + std::to_string(committed) + " < " + std::to_string(end) + "; ";
      }
    } catch (const std::exception& e) {
      missing = std::string("status unavailable: ") + e.what();
    }
    if (missing.empty()) return "";
    if (!d.running())
      return "the daemon is not running: it " + d.how_ended() + "\n" + missing + "\nstatus: " + body;
    if (std::chrono::steady_clock::now() > deadline) return missing + "\nstatus: " + body;
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  }
}

// ---------------------------------------------------------------- comparison

namespace {
// A canonical text of a JSON value: numbers by value (an integer and a
// double of the same value print alike), objects with sorted keys.
void canon(const json::value& v, std::string& out) {
  switch (v.kind()) {
    case json::kind::null: out += "null"; break;
    case json::kind::bool_: out += v.get_bool() ? "true" : "false"; break;
    case json::kind::int64: out += std::to_string(v.get_int64()); break;
    case json::kind::uint64: out += std::to_string(v.get_uint64()); break;
    case json::kind::double_: {
      double d = v.get_double();
      if (d == static_cast<double>(static_cast<int64_t>(d)) && std::abs(d) < 9e15) {
        out += std::to_string(static_cast<int64_t>(d));
      } else {
        char b[40];
        auto r = std::to_chars(b, b + sizeof b, d);
        out.append(b, r.ptr);
      }
      break;
    }
    case json::kind::string: out += json::serialize(v); break;
    case json::kind::array: {
      out += '[';
      bool first = true;
      for (const auto& x : v.get_array()) {
        if (!first) out += ',';
        first = false;
        canon(x, out);
      }
      out += ']';
      break;
    }
    case json::kind::object: {
      std::vector<std::pair<std::string, const json::value*>> kv;
      for (const auto& [k, x] : v.get_object()) kv.emplace_back(std::string(k), &x);
      std::sort(kv.begin(), kv.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
      out += '{';
      bool first = true;
      for (const auto& [k, x] : kv) {
        if (!first) out += ',';
        first = false;
        out += json::serialize(json::value(k)) + ":";
        canon(*x, out);
      }
      out += '}';
      break;
    }
  }
}

std::string canon(const json::value& v) {
  std::string s;
  canon(v, s);
  return s;
}

std::string shorten(const std::string& s) { return s.size() > 300 ? s.substr(0, 300) + "...(" + std::to_string(s.size()) + " bytes)" : s; }

std::map<std::string, json::object> by_key(const std::vector<std::string>& lines, const std::vector<std::string>& key,
                                           const char* side) {
  std::map<std::string, json::object> out;
  for (const auto& l : lines) {
    json::object o;
    try {
      o = json::parse(l).as_object();
    } catch (const std::exception& e) {
      throw std::runtime_error(std::string(side) + " row is not a JSON object (" + e.what() + "): " + shorten(l));
    }
    std::string k;
    for (const auto& c : key) k += canon(o.contains(c) ? o.at(c) : json::value()) + "|";
    out[k] = std::move(o);
  }
  return out;
}
}  // namespace

std::string compare_rows(const std::vector<std::string>& source, const std::vector<std::string>& doris,
                         const std::vector<std::string>& key, size_t max_diffs) {
  if (const char* env = std::getenv("CDC2DORIS_SOURCE_MAX_DIFFS")) max_diffs = std::stoul(env);
  auto s = by_key(source, key, "source");
  auto d = by_key(doris, key, "Doris");
  std::string out;
  size_t diffs = 0;
  auto note = [&](const std::string& line) {
    if (diffs++ < max_diffs) out += line + "\n";
  };
  for (const auto& [k, srow] : s) {
    auto it = d.find(k);
    if (it == d.end()) {
      note("key " + k + ": missing in Doris; source row " + shorten(json::serialize(srow)));
      continue;
    }
    for (const auto& [col, sv] : srow) {
      auto dv = it->second.find(col);
      const std::string sc = canon(sv);
      const std::string dc = dv == it->second.end() ? "<no such column>" : canon(dv->value());
      if (sc != dc) note("key " + k + " column " + std::string(col) + ": source " + shorten(sc) + ", Doris " + shorten(dc));
    }
  }
  for (const auto& [k, drow] : d)
    if (!s.count(k)) note("key " + k + ": in Doris but not in the source: " + shorten(json::serialize(drow)));
  if (diffs > max_diffs) out += "... " + std::to_string(diffs - max_diffs) + " more differences\n";
  if (diffs) out = std::to_string(s.size()) + " source rows, " + std::to_string(d.size()) + " Doris rows, " +
                   std::to_string(diffs) + " differences:\n" + out;
  return out;
}

}  // namespace cdc2doris::test::sources
