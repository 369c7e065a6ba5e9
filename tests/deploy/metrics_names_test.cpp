// Every metric the Grafana dashboard and the Prometheus rules use is exported
// by the daemon, and the exposition passes `promtool check metrics`.
//
// A Metrics object is filled with one of everything (a table load, a lagging
// partition, a rewind, a bad record, a Doris error, a commit latency), served
// by the real AdminServer and scraped over HTTP; the scrape is written to a
// temporary file for promtool and parsed for metric and label names.
#include <catch2/catch.hpp>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <cstdio>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <sys/wait.h>

#include "daemon/admin_server.hpp"
#include "tools/fixtures/temp_dir.hpp"

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

struct Scrape {
  unsigned status = 0;
  std::string content_type;
  std::string body;
};

Scrape http_get(const std::string& address, const std::string& target) {
  asio::io_context ioc;
  asio::ip::tcp::resolver resolver(ioc);
  beast::tcp_stream stream(ioc);
  const auto colon = address.rfind(':');
  stream.expires_after(std::chrono::seconds(10));
  stream.connect(resolver.resolve(address.substr(0, colon), address.substr(colon + 1)));
  http::request<http::empty_body> req(http::verb::get, target, 11);
  req.set(http::field::host, address);
  req.keep_alive(false);
  http::write(stream, req);
  beast::flat_buffer buf;
  http::response<http::string_body> res;
  http::read(stream, buf, res);
  beast::error_code ec;
  stream.socket().shutdown(asio::ip::tcp::socket::shutdown_both, ec);
  return {res.result_int(), std::string(res[http::field::content_type]), res.body()};
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  REQUIRE(in.good());
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct Run {
  int exit_code;
  std::string output;
};

Run run(const std::string& cmd) {
  Run r{-1, ""};
  FILE* p = ::popen((cmd + " 2>&1").c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.output.append(buf, n);
  const int st = ::pclose(p);
  r.exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

// Exported series: metric name -> label names seen on it.
std::map<std::string, std::set<std::string>> parse_exposition(const std::string& text) {
  std::map<std::string, std::set<std::string>> out;
  std::istringstream in(text);
  std::string line;
  const std::regex sample(R"(^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([^}]*)\})? \S+$)");
  const std::regex label(R"(([a-zA-Z_][a-zA-Z0-9_]*)=")");
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::smatch m;
    INFO("exposition line: " << line);
    REQUIRE(std::regex_match(line, m, sample));
    auto& labels = out[m[1].str()];
    const std::string ls = m[3].str();
    for (std::sregex_iterator it(ls.begin(), ls.end(), label), end; it != end; ++it) labels.insert((*it)[1].str());
  }
  return out;
}

std::set<std::string> metric_names_in(const std::string& text) {
  std::set<std::string> out;
  const std::regex name(R"(\bcdc2doris_[a-z0-9_]+)");
  for (std::sregex_iterator it(text.begin(), text.end(), name), end; it != end; ++it) out.insert(it->str());
  return out;
}

// Label names a file groups or prints by: `by (a, b)`, `on (a)`, `{{a}}`, `$labels.a`.
std::set<std::string> label_names_in(const std::string& text) {
  std::set<std::string> out;
  const std::regex grouping(R"(\b(?:by|on|without|ignoring)\s*\(([^)]*)\))");
  for (std::sregex_iterator it(text.begin(), text.end(), grouping), end; it != end; ++it) {
    std::string list = (*it)[1].str();
    const std::regex word(R"([a-zA-Z_][a-zA-Z0-9_]*)");
    for (std::sregex_iterator w(list.begin(), list.end(), word), wend; w != wend; ++w) out.insert(w->str());
  }
  const std::regex legend(R"(\{\{\s*\$?([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\})");
  for (std::sregex_iterator it(text.begin(), text.end(), legend), end; it != end; ++it) out.insert((*it)[1].str());
  const std::regex templ(R"(\$labels\.([a-zA-Z_][a-zA-Z0-9_]*))");
  for (std::sregex_iterator it(text.begin(), text.end(), templ), end; it != end; ++it) out.insert((*it)[1].str());
  return out;
}

}  // namespace

TEST_CASE("deploy: dashboard and alert rules use only exported metrics, and promtool accepts the exposition") {
  cdc2doris::pipeline::Metrics m;
  m.records_consumed += 120;
  m.bytes_consumed += 64000;
  m.add_skipped(cdc2doris::pipeline::SkipReason::Tombstone);
  m.add_skipped(cdc2doris::pipeline::SkipReason::NotRouted);
  m.epochs_committed += 4;
  m.epochs_aborted += 1;
  m.epochs_replayed += 1;
  m.lingering_txns_aborted += 2;
  m.buffered_bytes = 4096;
  m.recovered = true;
  m.add_table_load("ods_shop.orders", 100, 52000, 1700000000000);
  m.add_table_load("ods_shop.customers", 17, 9000, 1700000000000);
  m.set_table_error("ods_shop.orders", "Doris: TOO_MANY_VERSION");
  m.table_committed("ods_shop.orders", 1700000000000, 1700000060000);
  cdc2doris::pipeline::PartitionStats p;
  p.position = 120;
  p.committed = 100;
  p.lag = 42;
  m.set_partition("shop.shop.orders[0]", p);
  m.add_rewind("load");
  m.add_bad_record("invalid_json", "skip");
  m.add_doris_error("too-many-versions");
  m.observe_commit_latency(0.03);
  m.observe_commit_latency(1.7);
  m.set_epochs(5, 4);
  m.set_phase("open");

  cdc2doris::daemon::AdminServer admin("127.0.0.1:0", m, cdc2doris::daemon::Readiness{[] { return std::string(); }, {}});
  const Scrape scrape = http_get(admin.address(), "/metrics");
  REQUIRE(scrape.status == 200);
  CHECK(scrape.content_type.find("text/plain; version=0.0.4") == 0);
  CHECK(scrape.body == cdc2doris::daemon::render_metrics(m));

  const auto exported = parse_exposition(scrape.body);
  // Every series family the dashboard needs has samples in this scrape.
  for (const char* must : {"cdc2doris_rows_loaded_total", "cdc2doris_consumer_lag_records", "cdc2doris_rewinds_total",
                           "cdc2doris_bad_records_total", "cdc2doris_doris_errors_total",
                           "cdc2doris_epoch_commit_duration_seconds_bucket"}) {
    INFO(must);
    CHECK(exported.count(must) == 1);
  }

  cdc2doris::test::TempDir dir("cdc2doris-metrics");
  const std::string metrics_file = (dir / "metrics.txt").string();
  {
    std::ofstream out(metrics_file);
    out << scrape.body;
  }
  const Run promtool = run("promtool check metrics < '" + metrics_file + "'");
  INFO("promtool check metrics:\n" << promtool.output);
  CHECK(promtool.exit_code == 0);
  CHECK(promtool.output.find("problem") == std::string::npos);

  std::set<std::string> labels_exported{"job", "instance", "le"};
  for (const auto& [name, labels] : exported) labels_exported.insert(labels.begin(), labels.end());

  const std::string src = CDC2DORIS_SOURCE_DIR;
  for (const std::string file : {"/deploy/grafana/cdc2doris-dashboard.json", "/deploy/prometheus/cdc2doris-rules.yaml"}) {
    const std::string text = slurp(src + file);
    const auto used = metric_names_in(text);
    INFO(file);
    CHECK(used.size() >= 8);
    for (const auto& name : used) {
      INFO("metric " << name << " is used by " << file << " but not exported by the daemon");
      CHECK(exported.count(name) == 1);
    }
    for (const auto& label : label_names_in(text)) {
      INFO("label " << label << " is used by " << file << " but no exported series has it");
      CHECK(labels_exported.count(label) == 1);
    }
  }
}

TEST_CASE("deploy: the name cross-check notices a metric the daemon does not export") {
  // Guards the check above against matching nothing.
  const auto used = metric_names_in(R"({"expr": "rate(cdc2doris_rows_loaded_total[5m]) + cdc2doris_no_such_thing"})");
  CHECK(used == std::set<std::string>{"cdc2doris_rows_loaded_total", "cdc2doris_no_such_thing"});
  const auto labels = label_names_in("sum by (table, kind) (x) {{topic}} $labels.instance");
  CHECK(labels == std::set<std::string>{"table", "kind", "topic", "instance"});
}
