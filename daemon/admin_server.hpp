#pragma once
// Admin HTTP endpoint (Beast): /healthz, /readyz, /metrics (Prometheus text
// format), /status (JSON); docs/operations.md describes each. It owns one I/O
// thread, started by the constructor and joined by the destructor; requests
// are served from snapshots of the pipeline's Metrics, never from pipeline
// state directly.
#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "core/pipeline/metrics.hpp"

namespace cdc2doris::daemon {

struct Readiness {
  // Each returns an empty string when fine, else why not. `check` decides
  // /readyz, `alive` /healthz (empty function: always fine).
  std::function<std::string()> check;
  std::function<std::string()> alive;
};

struct AdminOptions {
  std::string version = "unknown";  // cdc2doris_build_info{version,commit}
  std::string commit = "unknown";
  // process_* from /proc at scrape time (the daemon turns it on; off where a
  // test compares a scrape with render_metrics()).
  bool process_metrics = false;
  // Non-empty: /status and /metrics (and, with probes_require_token, /healthz
  // and /readyz) answer 401 unless the request carries
  // `Authorization: Bearer <token>`; compared in constant time.
  std::string token;
  bool probes_require_token = false;
  // Non-empty: HTTPS only (TLS >= 1.2) with this PEM certificate chain and key.
  std::string tls_cert_file;
  std::string tls_key_file;
};

// Whether `authorization` (an Authorization header's value) presents `token`
// as a bearer token. Constant time in the token's content and length.
bool bearer_matches(std::string_view authorization, const std::string& token);

// What one scrape adds to the metrics: readiness and liveness as 0/1 gauges.
struct ScrapeState {
  std::string not_ready;
  std::string not_alive;
};

class AdminServer {
 public:
  // listen: "host:port" (port 0 = any free port). Throws on bind failure.
  AdminServer(const std::string& listen, const pipeline::Metrics& metrics, Readiness readiness,
              AdminOptions options = {});
  ~AdminServer();
  AdminServer(const AdminServer&) = delete;
  AdminServer& operator=(const AdminServer&) = delete;
  std::string address() const;  // actual "host:port"

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

// Exposition in Prometheus text format 0.0.4.
std::string render_metrics(const pipeline::Metrics& metrics, const AdminOptions& options = {},
                           const ScrapeState& state = {});
// /status JSON; `cdc2doris status` (cmd_status.cpp) reads it.
std::string render_status(const pipeline::Metrics& metrics, const ScrapeState& state = {});

}  // namespace cdc2doris::daemon
