#include "daemon/admin_server.hpp"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>
#include <spdlog/spdlog.h>

#include <sstream>
#include <thread>

namespace cdc2doris::daemon {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {

std::string escape_label(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

void counter(std::ostringstream& os, const char* name, const char* help, uint64_t v) {
  os << "# HELP " << name << ' ' << help << "\n# TYPE " << name << " counter\n" << name << ' ' << v << '\n';
}
void gauge(std::ostringstream& os, const char* name, const char* help, double v) {
  os << "# HELP " << name << ' ' << help << "\n# TYPE " << name << " gauge\n" << name << ' ' << v << '\n';
}

}  // namespace

std::string render_metrics(const pipeline::Metrics& m) {
  const pipeline::Snapshot s = m.snapshot();
  std::ostringstream os;
  counter(os, "cdc2doris_records_consumed_total", "Kafka records consumed.", m.records_consumed.load());
  counter(os, "cdc2doris_consumed_bytes_total", "Kafka key and value bytes consumed.", m.bytes_consumed.load());
  counter(os, "cdc2doris_records_skipped_total", "Records not loaded: tombstones, heartbeats, excluded tables.",
          m.records_skipped.load());
  counter(os, "cdc2doris_epochs_committed_total", "Checkpoint epochs committed.", m.epochs_committed.load());
  counter(os, "cdc2doris_epochs_aborted_total", "Checkpoint epochs aborted and rewound.", m.epochs_aborted.load());
  counter(os, "cdc2doris_epochs_replayed_total", "Epochs replayed from Kafka because Doris lost their txn.",
          m.epochs_replayed.load());
  counter(os, "cdc2doris_lingering_txns_aborted_total", "Lingering Doris transactions aborted.",
          m.lingering_txns_aborted.load());
  gauge(os, "cdc2doris_buffered_bytes", "Row bytes buffered in the daemon.", static_cast<double>(m.buffered_bytes.load()));
  gauge(os, "cdc2doris_current_epoch", "The epoch being filled.", static_cast<double>(s.current_epoch));
  gauge(os, "cdc2doris_last_committed_epoch", "The newest committed epoch.", static_cast<double>(s.last_committed_epoch));
  gauge(os, "cdc2doris_recovered", "1 once startup recovery finished.", m.recovered.load() ? 1 : 0);

  os << "# HELP cdc2doris_rows_loaded_total Rows loaded into Doris per target table.\n"
     << "# TYPE cdc2doris_rows_loaded_total counter\n";
  for (const auto& [t, st] : s.tables) os << "cdc2doris_rows_loaded_total{table=\"" << escape_label(t) << "\"} " << st.rows << '\n';
  os << "# HELP cdc2doris_loaded_bytes_total Row bytes loaded into Doris per target table.\n"
     << "# TYPE cdc2doris_loaded_bytes_total counter\n";
  for (const auto& [t, st] : s.tables) os << "cdc2doris_loaded_bytes_total{table=\"" << escape_label(t) << "\"} " << st.bytes << '\n';
  os << "# HELP cdc2doris_consumer_lag_records Records behind the partition's high watermark.\n"
     << "# TYPE cdc2doris_consumer_lag_records gauge\n";
  for (const auto& [tp, p] : s.partitions) {
    if (p.lag < 0) continue;
    auto open = tp.rfind('[');
    std::string topic = tp.substr(0, open), part = tp.substr(open + 1, tp.size() - open - 2);
    os << "cdc2doris_consumer_lag_records{topic=\"" << escape_label(topic) << "\",partition=\"" << part << "\"} "
       << p.lag << '\n';
  }
  os << "# HELP cdc2doris_rewinds_total Rewinds to the last checkpoint, by reason.\n"
     << "# TYPE cdc2doris_rewinds_total counter\n";
  for (const auto& [r, n] : s.rewinds_by_reason)
    os << "cdc2doris_rewinds_total{reason=\"" << escape_label(r) << "\"} " << n << '\n';
  os << "# HELP cdc2doris_bad_records_total Records that could not be decoded, by reason and policy.\n"
     << "# TYPE cdc2doris_bad_records_total counter\n";
  for (const auto& [k, n] : s.bad_records) {
    auto bar = k.find('|');
    os << "cdc2doris_bad_records_total{reason=\"" << escape_label(k.substr(0, bar)) << "\",policy=\""
       << escape_label(k.substr(bar + 1)) << "\"} " << n << '\n';
  }
  os << "# HELP cdc2doris_doris_errors_total Doris request failures, by error kind.\n"
     << "# TYPE cdc2doris_doris_errors_total counter\n";
  for (const auto& [k, n] : s.doris_errors)
    os << "cdc2doris_doris_errors_total{kind=\"" << escape_label(k) << "\"} " << n << '\n';
  os << "# HELP cdc2doris_epoch_commit_duration_seconds From an epoch's first commit request to all txns committed.\n"
     << "# TYPE cdc2doris_epoch_commit_duration_seconds histogram\n";
  for (size_t i = 0; i < pipeline::kCommitLatencyBucketCount; ++i)
    os << "cdc2doris_epoch_commit_duration_seconds_bucket{le=\"" << pipeline::kCommitLatencyBuckets[i] << "\"} "
       << s.commit_latency_buckets[i] << '\n';
  os << "cdc2doris_epoch_commit_duration_seconds_bucket{le=\"+Inf\"} " << s.commit_latency_count << '\n'
     << "cdc2doris_epoch_commit_duration_seconds_sum " << s.commit_latency_sum << '\n'
     << "cdc2doris_epoch_commit_duration_seconds_count " << s.commit_latency_count << '\n';
  return os.str();
}

std::string render_status(const pipeline::Metrics& m, const std::string& readiness_reason) {
  const pipeline::Snapshot s = m.snapshot();
  boost::json::object o;
  o["ready"] = readiness_reason.empty();
  if (!readiness_reason.empty()) o["not_ready_because"] = readiness_reason;
  o["phase"] = s.phase;
  o["current_epoch"] = s.current_epoch;
  o["last_committed_epoch"] = s.last_committed_epoch;
  o["records_consumed"] = m.records_consumed.load();
  o["buffered_bytes"] = m.buffered_bytes.load();
  boost::json::object tables;
  for (const auto& [t, st] : s.tables)
    tables[t] = {{"rows", st.rows},
                 {"bytes", st.bytes},
                 {"loads", st.loads},
                 {"last_load_unix_ms", st.last_load_unix_ms},
                 {"last_error", st.last_error}};
  o["tables"] = std::move(tables);
  boost::json::object parts;
  boost::json::array paused;
  for (const auto& [tp, p] : s.partitions) {
    parts[tp] = {{"position", p.position}, {"committed", p.committed}, {"lag", p.lag}, {"paused", p.paused}};
    if (p.paused) paused.push_back(boost::json::value(tp));
  }
  o["partitions"] = std::move(parts);
  o["paused_partitions"] = std::move(paused);
  return boost::json::serialize(o) + "\n";
}

class AdminServer::Impl {
 public:
  Impl(const std::string& listen, const pipeline::Metrics& metrics, Readiness readiness,
       std::function<std::string()> status_extra)
      : metrics_(metrics), readiness_(std::move(readiness)), status_extra_(std::move(status_extra)), acceptor_(ioc_) {
    auto colon = listen.rfind(':');
    if (colon == std::string::npos) throw std::invalid_argument("admin.listen: expected host:port, got '" + listen + "'");
    std::string host = listen.substr(0, colon);
    if (host.size() > 1 && host.front() == '[') host = host.substr(1, host.size() - 2);
    tcp::endpoint ep(asio::ip::make_address(host), static_cast<unsigned short>(std::stoi(listen.substr(colon + 1))));
    acceptor_.open(ep.protocol());
    acceptor_.set_option(asio::socket_base::reuse_address(true));
    acceptor_.bind(ep);
    acceptor_.listen();
    accept();
    thread_ = std::jthread([this] { ioc_.run(); });
  }
  ~Impl() {
    asio::post(ioc_, [this] {
      beast::error_code ec;
      acceptor_.close(ec);
    });
    ioc_.stop();
  }
  std::string address() const {
    auto ep = acceptor_.local_endpoint();
    return ep.address().to_string() + ":" + std::to_string(ep.port());
  }

 private:
  struct Session : std::enable_shared_from_this<Session> {
    Session(tcp::socket s, Impl& owner) : stream(std::move(s)), owner(owner) {}
    beast::tcp_stream stream;
    beast::flat_buffer buf;
    http::request<http::string_body> req;
    http::response<http::string_body> res;
    Impl& owner;

    void read() {
      req = {};
      stream.expires_after(std::chrono::seconds(30));
      http::async_read(stream, buf, req, [self = shared_from_this()](beast::error_code ec, size_t) {
        if (ec) return;
        self->respond();
      });
    }
    void respond() {
      owner.handle(req, res);
      res.keep_alive(req.keep_alive());
      res.prepare_payload();
      http::async_write(stream, res, [self = shared_from_this()](beast::error_code ec, size_t) {
        if (ec || !self->res.keep_alive()) {
          beast::error_code ignored;
          self->stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
          return;
        }
        self->read();
      });
    }
  };

  void accept() {
    acceptor_.async_accept(asio::make_strand(ioc_), [this](beast::error_code ec, tcp::socket s) {
      if (ec) return;  // closed on shutdown
      std::make_shared<Session>(std::move(s), *this)->read();
      accept();
    });
  }

  void handle(const http::request<http::string_body>& req, http::response<http::string_body>& res) {
    res = {};
    res.version(req.version());
    res.set(http::field::server, "cdc2doris");
    std::string target(req.target());
    if (auto q = target.find('?'); q != std::string::npos) target.resize(q);
    if (req.method() != http::verb::get && req.method() != http::verb::head) {
      res.result(http::status::method_not_allowed);
      res.set(http::field::content_type, "text/plain");
      res.body() = "only GET\n";
      return;
    }
    if (target == "/healthz") {
      res.result(http::status::ok);
      res.set(http::field::content_type, "text/plain");
      res.body() = "ok\n";
    } else if (target == "/readyz") {
      std::string why = readiness_.check ? readiness_.check() : "";
      res.result(why.empty() ? http::status::ok : http::status::service_unavailable);
      res.set(http::field::content_type, "text/plain");
      res.body() = why.empty() ? "ready\n" : "not ready: " + why + "\n";
    } else if (target == "/metrics") {
      res.result(http::status::ok);
      res.set(http::field::content_type, "text/plain; version=0.0.4; charset=utf-8");
      res.body() = render_metrics(metrics_);
    } else if (target == "/status") {
      res.result(http::status::ok);
      res.set(http::field::content_type, "application/json");
      res.body() = render_status(metrics_, readiness_.check ? readiness_.check() : "");
    } else {
      res.result(http::status::not_found);
      res.set(http::field::content_type, "text/plain");
      res.body() = "not found; try /healthz /readyz /metrics /status\n";
    }
  }

  const pipeline::Metrics& metrics_;
  Readiness readiness_;
  std::function<std::string()> status_extra_;
  asio::io_context ioc_;
  tcp::acceptor acceptor_;
  std::jthread thread_;
};

AdminServer::AdminServer(const std::string& listen, const pipeline::Metrics& metrics, Readiness readiness,
                         std::function<std::string()> status_extra)
    : impl_(std::make_unique<Impl>(listen, metrics, std::move(readiness), std::move(status_extra))) {}
AdminServer::~AdminServer() = default;
std::string AdminServer::address() const { return impl_->address(); }

}  // namespace cdc2doris::daemon
