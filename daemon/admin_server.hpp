#pragma once
// Admin HTTP endpoint (Beast): /healthz, /readyz, /metrics (Prometheus text
// format), /status (JSON). It owns one I/O thread, started by the constructor
// and joined by the destructor; requests are served from snapshots of the
// pipeline's Metrics, never from pipeline state directly.
#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include "core/pipeline/metrics.hpp"

namespace cdc2doris::daemon {

struct Readiness {
  // Each returns an empty string when fine, else why not.
  std::function<std::string()> check;
};

class AdminServer {
 public:
  // listen: "host:port" (port 0 = any free port). Throws on bind failure.
  AdminServer(const std::string& listen, const pipeline::Metrics& metrics, Readiness readiness,
              std::function<std::string()> status_extra = {});
  ~AdminServer();
  AdminServer(const AdminServer&) = delete;
  AdminServer& operator=(const AdminServer&) = delete;
  std::string address() const;  // actual "host:port"

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

// Exposition in Prometheus text format 0.0.4.
std::string render_metrics(const pipeline::Metrics& metrics);
std::string render_status(const pipeline::Metrics& metrics, const std::string& readiness_reason);

}  // namespace cdc2doris::daemon
