#include "daemon/admin_server.hpp"

#include "core/common/thread_name.hpp"
#include "daemon/process_metrics.hpp"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/json.hpp>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <spdlog/spdlog.h>

#include <cctype>

#include <optional>
#include <sstream>
#include <type_traits>
#include <utility>
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

namespace {

// admin.tls: the server side, TLS 1.2 or newer.
asio::ssl::context server_tls(const std::string& cert_file, const std::string& key_file) {
  asio::ssl::context ctx(asio::ssl::context::tls_server);
  ctx.set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2 |
                  asio::ssl::context::no_sslv3 | asio::ssl::context::no_tlsv1 | asio::ssl::context::no_tlsv1_1 |
                  asio::ssl::context::single_dh_use);
  beast::error_code ec;
  ctx.use_certificate_chain_file(cert_file, ec);
  if (ec) throw std::invalid_argument("admin.tls.cert_file " + cert_file + ": " + ec.message());
  ctx.use_private_key_file(key_file, asio::ssl::context::pem, ec);
  if (ec) throw std::invalid_argument("admin.tls.key_file " + key_file + ": " + ec.message());
  if (SSL_CTX_check_private_key(ctx.native_handle()) != 1)
    throw std::invalid_argument("admin.tls.key_file " + key_file + " does not match admin.tls.cert_file " + cert_file);
  return ctx;
}

}  // namespace

bool bearer_matches(std::string_view authorization, const std::string& token) {
  // RFC 6750 §2.1: credentials = "Bearer" 1*SP token; the scheme is
  // case-insensitive (RFC 9110 §11.1).
  constexpr std::string_view kScheme = "bearer";
  if (token.empty() || authorization.size() <= kScheme.size() || authorization[kScheme.size()] != ' ') return false;
  for (size_t i = 0; i < kScheme.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(authorization[i])) != kScheme[i]) return false;
  std::string_view presented = authorization.substr(kScheme.size());
  while (!presented.empty() && presented.front() == ' ') presented.remove_prefix(1);
  while (!presented.empty() && (presented.back() == ' ' || presented.back() == '\t')) presented.remove_suffix(1);
  // Digests of equal length: the comparison's time depends on neither the
  // token's content nor its length.
  unsigned char want[EVP_MAX_MD_SIZE], got[EVP_MAX_MD_SIZE];
  unsigned int want_len = 0, got_len = 0;
  if (EVP_Digest(token.data(), token.size(), want, &want_len, EVP_sha256(), nullptr) != 1 ||
      EVP_Digest(presented.data(), presented.size(), got, &got_len, EVP_sha256(), nullptr) != 1 ||
      want_len != got_len)
    return false;
  return CRYPTO_memcmp(want, got, want_len) == 0;
}

namespace {

void family(std::ostringstream& os, const char* name, const char* type, const char* help) {
  os << "# HELP " << name << ' ' << help << "\n# TYPE " << name << ' ' << type << '\n';
}

std::pair<std::string, std::string> split_tp(const std::string& tp) {  // "topic[3]"
  auto open = tp.rfind('[');
  return {tp.substr(0, open), tp.substr(open + 1, tp.size() - open - 2)};
}

double seconds_since(int64_t unix_ms, int64_t now_ms) { return static_cast<double>(now_ms - unix_ms) / 1000.0; }

}  // namespace

std::string render_metrics(const pipeline::Metrics& m, const AdminOptions& options, const ScrapeState& state) {
  const pipeline::Snapshot s = m.snapshot();
  const int64_t now = pipeline::unix_now_ms();
  std::ostringstream os;
  family(os, "cdc2doris_build_info", "gauge", "Always 1; the labels say what is running.");
  os << "cdc2doris_build_info{version=\"" << escape_label(options.version) << "\",commit=\""
     << escape_label(options.commit) << "\"} 1\n";
  gauge(os, "cdc2doris_ready", "1 when /readyz answers 200.", state.not_ready.empty() ? 1 : 0);
  gauge(os, "cdc2doris_alive", "1 when /healthz answers 200 (the pipeline thread's heartbeat is fresh).",
        state.not_alive.empty() ? 1 : 0);
  counter(os, "cdc2doris_records_consumed_total", "Kafka records consumed.", m.records_consumed.load());
  counter(os, "cdc2doris_consumed_bytes_total", "Kafka key and value bytes consumed.", m.bytes_consumed.load());
  family(os, "cdc2doris_records_skipped_total", "counter", "Records consumed that load nothing, by reason.");
  for (size_t i = 0; i < pipeline::kSkipReasonCount; ++i) {
    auto r = static_cast<pipeline::SkipReason>(i);
    os << "cdc2doris_records_skipped_total{reason=\"" << pipeline::to_string(r) << "\"} " << m.skipped(r) << '\n';
  }
  counter(os, "cdc2doris_epochs_committed_total", "Checkpoint epochs committed.", m.epochs_committed.load());
  counter(os, "cdc2doris_epochs_aborted_total", "Checkpoint epochs aborted and rewound.", m.epochs_aborted.load());
  counter(os, "cdc2doris_epochs_replayed_total", "Epochs replayed from Kafka because Doris lost their txn.",
          m.epochs_replayed.load());
  counter(os, "cdc2doris_lingering_txns_aborted_total", "Lingering Doris transactions aborted.",
          m.lingering_txns_aborted.load());
  counter(os, "cdc2doris_epochs_fenced_total",
          "Epochs aborted because the consumer group refused this member's generation at the commit point.",
          m.epochs_fenced.load());
  counter(os, "cdc2doris_pending_epochs_resolved_total",
          "Epochs left pending in the consumer group by another owner, resolved on assignment.",
          m.pending_epochs_resolved.load());
  counter(os, "cdc2doris_offset_gaps_skipped_total",
          "Partitions whose next offset retention had deleted, continued at the log start (kafka.on_offset_gap: skip).",
          m.offset_gaps_skipped.load());
  counter(os, "cdc2doris_topics_recreated_total",
          "Partitions whose offset was above the high watermark (topic re-created), read from the log start.",
          m.topics_recreated.load());
  gauge(os, "cdc2doris_buffered_bytes", "Row bytes buffered in the daemon.", static_cast<double>(m.buffered_bytes.load()));
  gauge(os, "cdc2doris_current_epoch", "The epoch being filled.", static_cast<double>(s.current_epoch));
  gauge(os, "cdc2doris_last_committed_epoch", "The newest committed epoch.", static_cast<double>(s.last_committed_epoch));
  gauge(os, "cdc2doris_recovered", "1 once startup recovery finished.", m.recovered.load() ? 1 : 0);
  const int64_t advanced = m.advanced_unix_ms.load();
  gauge(os, "cdc2doris_epoch_advanced_timestamp_seconds",
        "When the epoch machine last advanced (an epoch committed, or an idle epoch end).",
        static_cast<double>(advanced) / 1000.0);
  gauge(os, "cdc2doris_kafka_reachable", "1 when the last Kafka metadata probe was answered.",
        s.kafka.probed && s.kafka.unreachable_since_ms == 0 ? 1 : 0);
  gauge(os, "cdc2doris_kafka_missing_topics", "Configured topics (or regexes) with no topic in the cluster.",
        static_cast<double>(s.kafka.missing_topics.size()));
  family(os, "cdc2doris_doris_failing_seconds", "gauge",
         "How long Doris loads or commits have failed without a success in between; 0 when they succeed.");
  for (const auto& [op, streak] : {std::pair<const char*, const pipeline::FailureStreak&>{"load", s.load_failures},
                                   std::pair<const char*, const pipeline::FailureStreak&>{"commit", s.commit_failures}})
    os << "cdc2doris_doris_failing_seconds{operation=\"" << op << "\"} "
       << (streak.since_unix_ms == 0 ? 0.0 : seconds_since(streak.since_unix_ms, now)) << '\n';

  os << "# HELP cdc2doris_rows_loaded_total Rows loaded into Doris per target table.\n"
     << "# TYPE cdc2doris_rows_loaded_total counter\n";
  for (const auto& [t, st] : s.tables) os << "cdc2doris_rows_loaded_total{table=\"" << escape_label(t) << "\"} " << st.rows << '\n';
  os << "# HELP cdc2doris_loaded_bytes_total Row bytes loaded into Doris per target table.\n"
     << "# TYPE cdc2doris_loaded_bytes_total counter\n";
  for (const auto& [t, st] : s.tables) os << "cdc2doris_loaded_bytes_total{table=\"" << escape_label(t) << "\"} " << st.bytes << '\n';
  family(os, "cdc2doris_table_freshness_seconds", "gauge",
         "Now minus the source commit time (source.ts_ms) of the newest row committed to Doris, per table.");
  for (const auto& [t, st] : s.tables)
    if (st.newest_source_ms > 0)
      os << "cdc2doris_table_freshness_seconds{table=\"" << escape_label(t) << "\"} "
         << seconds_since(st.newest_source_ms, now) << '\n';
  family(os, "cdc2doris_table_last_commit_timestamp_seconds", "gauge", "When a txn of the table last committed.");
  for (const auto& [t, st] : s.tables)
    if (st.last_commit_unix_ms > 0)
      os << "cdc2doris_table_last_commit_timestamp_seconds{table=\"" << escape_label(t) << "\"} "
         << static_cast<double>(st.last_commit_unix_ms) / 1000.0 << '\n';
  os << "# HELP cdc2doris_consumer_lag_records Records not yet in Doris: high watermark minus the committed offset.\n"
     << "# TYPE cdc2doris_consumer_lag_records gauge\n";
  for (const auto& [tp, p] : s.partitions) {
    if (p.lag < 0) continue;
    auto [topic, part] = split_tp(tp);
    os << "cdc2doris_consumer_lag_records{topic=\"" << escape_label(topic) << "\",partition=\"" << part << "\"} "
       << p.lag << '\n';
  }
  os << "# HELP cdc2doris_rewinds_total Rewinds to the last checkpoint, by reason.\n"
     << "# TYPE cdc2doris_rewinds_total counter\n";
  for (const auto& [r, n] : s.rewinds_by_reason)
    os << "cdc2doris_rewinds_total{reason=\"" << escape_label(r) << "\"} " << n << '\n';
  os << "# HELP cdc2doris_epochs_ended_early_total Epochs ended before delivery.epoch_interval, by reason.\n"
     << "# TYPE cdc2doris_epochs_ended_early_total counter\n";
  for (const auto& [r, n] : s.epochs_ended_early)
    os << "cdc2doris_epochs_ended_early_total{reason=\"" << escape_label(r) << "\"} " << n << '\n';
  os << "# HELP cdc2doris_bad_records_total Records that could not be decoded, by reason and policy.\n"
     << "# TYPE cdc2doris_bad_records_total counter\n";
  for (const auto& [k, n] : s.bad_records) {
    auto bar = k.find('|');
    os << "cdc2doris_bad_records_total{reason=\"" << escape_label(k.substr(0, bar)) << "\",policy=\""
       << escape_label(k.substr(bar + 1)) << "\"} " << n << '\n';
  }
  os << "# HELP cdc2doris_ddl_total Schema changes run on Doris tables (create, add, drop, rename, modify).\n"
     << "# TYPE cdc2doris_ddl_total counter\n";
  for (const auto& [k, n] : s.ddl) {
    auto bar = k.find('|');
    os << "cdc2doris_ddl_total{table=\"" << escape_label(k.substr(0, bar)) << "\",kind=\""
       << escape_label(k.substr(bar + 1)) << "\"} " << n << '\n';
  }
  os << "# HELP cdc2doris_truncates_total Source TRUNCATEs by table and action (applied, ignored, failed, "
        "already_applied, emptied_later_rows).\n"
     << "# TYPE cdc2doris_truncates_total counter\n";
  for (const auto& [k, n] : s.truncates) {
    auto bar = k.find('|');
    os << "cdc2doris_truncates_total{table=\"" << escape_label(k.substr(0, bar)) << "\",action=\""
       << escape_label(k.substr(bar + 1)) << "\"} " << n << '\n';
  }
  os << "# HELP cdc2doris_truncated_rows_dropped_total Rows read after a TRUNCATE of their table that precede it "
        "in source order (another partition lagged), dropped as truncated.\n"
     << "# TYPE cdc2doris_truncated_rows_dropped_total counter\n";
  for (const auto& [t, n] : s.truncated_rows_dropped)
    os << "cdc2doris_truncated_rows_dropped_total{table=\"" << escape_label(t) << "\"} " << n << '\n';
  os << "# HELP cdc2doris_columns_not_loaded Source columns the Doris table lacks and the schema-evolution policy "
        "does not add.\n"
     << "# TYPE cdc2doris_columns_not_loaded gauge\n";
  for (const auto& [t, st] : s.tables)
    if (st.columns_not_loaded > 0)
      os << "cdc2doris_columns_not_loaded{table=\"" << escape_label(t) << "\"} " << st.columns_not_loaded << '\n';
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
  if (options.process_metrics) os << render_process_metrics(read_process_stats());
  return os.str();
}

namespace {

boost::json::value epoch_json(const pipeline::EpochView& e) {
  return {{"epoch", e.epoch},     {"phase", e.phase},         {"tables", e.tables},
          {"rows", e.rows},       {"since_unix_ms", e.since_unix_ms}, {"failed_attempts", e.attempts}};
}

boost::json::value streak_json(const pipeline::FailureStreak& f, int64_t now) {
  boost::json::object o;
  o["failing"] = f.since_unix_ms != 0;
  if (f.since_unix_ms != 0) o["failing_for_seconds"] = (now - f.since_unix_ms) / 1000;
  o["failures_total"] = f.count;
  o["last_failure_unix_ms"] = f.last_unix_ms;
  o["last_error"] = f.last_error;
  return o;
}

}  // namespace

std::string render_status(const pipeline::Metrics& m, const ScrapeState& state) {
  const pipeline::Snapshot s = m.snapshot();
  const int64_t now = pipeline::unix_now_ms();
  boost::json::object o;
  o["ready"] = state.not_ready.empty();
  if (!state.not_ready.empty()) o["not_ready_because"] = state.not_ready;
  o["alive"] = state.not_alive.empty();
  if (!state.not_alive.empty()) o["not_alive_because"] = state.not_alive;
  o["now_unix_ms"] = now;
  o["phase"] = s.phase;
  o["current_epoch"] = s.current_epoch;
  o["last_committed_epoch"] = s.last_committed_epoch;
  o["open_epoch"] = s.open_epoch ? epoch_json(*s.open_epoch) : boost::json::value(nullptr);
  boost::json::array committing;
  for (const auto& e : s.committing) committing.push_back(epoch_json(e));
  o["committing_epochs"] = std::move(committing);
  o["replaying_epoch"] = s.replaying ? epoch_json(*s.replaying) : boost::json::value(nullptr);
  o["epoch_advanced_unix_ms"] = m.advanced_unix_ms.load();
  o["records_consumed"] = m.records_consumed.load();
  boost::json::object skipped;
  for (size_t i = 0; i < pipeline::kSkipReasonCount; ++i) {
    auto r = static_cast<pipeline::SkipReason>(i);
    skipped[pipeline::to_string(r)] = m.skipped(r);
  }
  o["records_skipped"] = std::move(skipped);
  o["buffered_bytes"] = m.buffered_bytes.load();
  boost::json::object tables;
  for (const auto& [t, st] : s.tables) {
    boost::json::object j{{"rows", st.rows},
                          {"bytes", st.bytes},
                          {"loads", st.loads},
                          {"last_load_unix_ms", st.last_load_unix_ms},
                          {"last_commit_unix_ms", st.last_commit_unix_ms}};
    j["newest_source_unix_ms"] = st.newest_source_ms;
    if (st.newest_source_ms > 0)
      j["freshness_seconds"] = seconds_since(st.newest_source_ms, now);
    else
      j["freshness_seconds"] = nullptr;
    j["last_error"] = st.last_error;
    j["last_error_unix_ms"] = st.last_error_unix_ms;
    j["schema_version"] = st.schema_version;
    j["schema_change"] = st.schema_change;
    j["columns_not_loaded"] = st.columns_not_loaded;
    tables[t] = std::move(j);
  }
  o["tables"] = std::move(tables);
  boost::json::object parts;
  boost::json::array paused;
  for (const auto& [tp, p] : s.partitions) {
    parts[tp] = {{"position", p.position},
                 {"committed", p.committed},
                 {"high_watermark", p.high_watermark},
                 {"group_committed", p.group_committed},
                 {"lag", p.lag},
                 {"lag_measured_unix_ms", p.offsets_unix_ms},
                 {"paused", p.paused}};
    if (p.paused) paused.push_back(boost::json::value(tp));
  }
  o["partitions"] = std::move(parts);
  o["paused_partitions"] = std::move(paused);
  boost::json::object kafka;
  kafka["reachable"] = s.kafka.probed && s.kafka.unreachable_since_ms == 0;
  if (s.kafka.unreachable_since_ms != 0) kafka["unreachable_since_unix_ms"] = s.kafka.unreachable_since_ms;
  kafka["problem"] = s.kafka.problem;
  boost::json::array missing;
  for (const auto& t : s.kafka.missing_topics) missing.push_back(boost::json::value(t));
  kafka["missing_topics"] = std::move(missing);
  kafka["checked_unix_ms"] = s.kafka.checked_unix_ms;
  o["kafka"] = std::move(kafka);
  o["doris"] = {{"fe_problem", s.doris_fe_problem},
                {"loads", streak_json(s.load_failures, now)},
                {"commits", streak_json(s.commit_failures, now)}};
  boost::json::array errors;
  for (const auto& e : s.recent_errors)
    errors.push_back({{"unix_ms", e.unix_ms}, {"where", e.where}, {"message", e.message}});
  o["recent_errors"] = std::move(errors);
  return boost::json::serialize(o) + "\n";
}

class AdminServer::Impl {
 public:
  Impl(const std::string& listen, const pipeline::Metrics& metrics, Readiness readiness, AdminOptions options)
      : metrics_(metrics), readiness_(std::move(readiness)), options_(std::move(options)), acceptor_(ioc_) {
    if (!options_.tls_cert_file.empty()) tls_.emplace(server_tls(options_.tls_cert_file, options_.tls_key_file));
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
    thread_ = std::jthread([this] {
      name_this_thread("admin-http");
      ioc_.run();
    });
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
  // One connection, plain or TLS (admin.tls): the TLS one shakes hands first.
  template <class Stream>
  struct Session : std::enable_shared_from_this<Session<Stream>> {
    template <class... Args>
    explicit Session(Impl& owner, Args&&... args) : stream(std::forward<Args>(args)...), owner(owner) {}
    Stream stream;
    beast::flat_buffer buf;
    http::request<http::string_body> req;
    http::response<http::string_body> res;
    Impl& owner;

    static constexpr bool kTls = !std::is_same_v<Stream, beast::tcp_stream>;

    void start() {
      if constexpr (kTls) {
        beast::get_lowest_layer(stream).expires_after(std::chrono::seconds(30));
        stream.async_handshake(asio::ssl::stream_base::server, [self = this->shared_from_this()](beast::error_code ec) {
          if (ec) return;  // a plain-HTTP client or a failed handshake: nothing to answer
          self->read();
        });
      } else {
        read();
      }
    }
    void read() {
      req = {};
      beast::get_lowest_layer(stream).expires_after(std::chrono::seconds(30));
      http::async_read(stream, buf, req, [self = this->shared_from_this()](beast::error_code ec, size_t) {
        if (ec) return;
        self->respond();
      });
    }
    void respond() {
      owner.handle(req, res);
      res.keep_alive(req.keep_alive());
      res.prepare_payload();
      http::async_write(stream, res, [self = this->shared_from_this()](beast::error_code ec, size_t) {
        if (ec || !self->res.keep_alive()) {
          beast::error_code ignored;
          beast::get_lowest_layer(self->stream).socket().shutdown(tcp::socket::shutdown_both, ignored);
          return;
        }
        self->read();
      });
    }
  };

  void accept() {
    acceptor_.async_accept(asio::make_strand(ioc_), [this](beast::error_code ec, tcp::socket s) {
      if (ec) return;  // closed on shutdown
      if (tls_)
        std::make_shared<Session<beast::ssl_stream<beast::tcp_stream>>>(*this, std::move(s), *tls_)->start();
      else
        std::make_shared<Session<beast::tcp_stream>>(*this, std::move(s))->start();
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
    if (!authorized(req, target, res)) return;
    if (target == "/healthz") {
      std::string why = readiness_.alive ? readiness_.alive() : "";
      res.result(why.empty() ? http::status::ok : http::status::service_unavailable);
      res.set(http::field::content_type, "text/plain");
      res.body() = why.empty() ? "ok\n" : "not alive: " + why + "\n";
    } else if (target == "/readyz") {
      std::string why = readiness_.check ? readiness_.check() : "";
      res.result(why.empty() ? http::status::ok : http::status::service_unavailable);
      res.set(http::field::content_type, "text/plain");
      res.body() = why.empty() ? "ready\n" : "not ready: " + why + "\n";
    } else if (target == "/metrics") {
      res.result(http::status::ok);
      res.set(http::field::content_type, "text/plain; version=0.0.4; charset=utf-8");
      res.body() = render_metrics(metrics_, options_, scrape_state());
    } else if (target == "/status") {
      res.result(http::status::ok);
      res.set(http::field::content_type, "application/json");
      res.body() = render_status(metrics_, scrape_state());
    } else {
      res.result(http::status::not_found);
      res.set(http::field::content_type, "text/plain");
      res.body() = "not found; try /healthz /readyz /metrics /status\n";
    }
  }

  // admin.token: /status and /metrics need it, the probes only with
  // probes_require_token (kubelet probes send no header). Unknown paths
  // answer 404 either way: they reveal nothing.
  bool authorized(const http::request<http::string_body>& req, const std::string& target,
                  http::response<http::string_body>& res) const {
    if (options_.token.empty()) return true;
    const bool probe = target == "/healthz" || target == "/readyz";
    if (!(probe ? options_.probes_require_token : target == "/metrics" || target == "/status")) return true;
    auto it = req.find(http::field::authorization);
    if (it != req.end() && bearer_matches(it->value(), options_.token)) return true;
    // RFC 6750 §3: the challenge; error="invalid_token" once a token was presented.
    res.result(http::status::unauthorized);
    res.set(http::field::www_authenticate, it == req.end() ? R"(Bearer realm="cdc2doris")"
                                                           : R"(Bearer realm="cdc2doris", error="invalid_token")");
    res.set(http::field::content_type, "text/plain");
    res.body() = "unauthorized: " + target + " needs the header 'Authorization: Bearer <admin.token>'\n";
    return false;
  }

  ScrapeState scrape_state() const {
    return {readiness_.check ? readiness_.check() : "", readiness_.alive ? readiness_.alive() : ""};
  }

  const pipeline::Metrics& metrics_;
  Readiness readiness_;
  AdminOptions options_;
  std::optional<asio::ssl::context> tls_;
  asio::io_context ioc_;
  tcp::acceptor acceptor_;
  std::jthread thread_;
};

AdminServer::AdminServer(const std::string& listen, const pipeline::Metrics& metrics, Readiness readiness,
                         AdminOptions options)
    : impl_(std::make_unique<Impl>(listen, metrics, std::move(readiness), std::move(options))) {}
AdminServer::~AdminServer() = default;
std::string AdminServer::address() const { return impl_->address(); }

}  // namespace cdc2doris::daemon
