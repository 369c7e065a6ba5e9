// Where a request goes: the sticky FE choice, round-robin over BEs (configured
// or discovered from an FE), and the quarantine of endpoints that failed.
#include <spdlog/spdlog.h>

#include <cstdlib>

#include "core/doris/detail/core.hpp"

namespace cdc2doris::doris::detail {

bool Core::is_quarantined(const Endpoint& e) {
  std::lock_guard lk(health_m_);
  auto it = quarantine_.find(e.key());
  return it != quarantine_.end() && it->second > Clock::now();
}

void Core::quarantine(const Endpoint& e, const std::string& why) {
  {
    std::lock_guard lk(health_m_);
    quarantine_[e.key()] = Clock::now() + cfg.endpoint_quarantine;
  }
  {
    // Connections to a failed endpoint are likely dead too.
    std::lock_guard lk(pool_m_);
    pool_.erase(e.key());
  }
  spdlog::warn("doris: endpoint {} quarantined for {} ms: {}", e.host_port(), cfg.endpoint_quarantine.count(), why);
}

void Core::healthy(const Endpoint& e) {
  std::lock_guard lk(health_m_);
  quarantine_.erase(e.key());
}

Endpoint Core::pick_fe() {
  // Sticky: stay on the current FE (keep-alive reuse) until it fails.
  size_t n = fes.size();
  size_t cur = fe_cur_.load();
  for (size_t i = 0; i < n; ++i) {
    size_t idx = (cur + i) % n;
    if (!is_quarantined(fes[idx])) {
      if (i) fe_cur_.store(idx);
      return fes[idx];
    }
  }
  // All quarantined: try them in turn rather than not at all.
  return fes[fe_cur_.fetch_add(1) % n];
}

awaitable<bool> Core::refresh_backends() {
  for (size_t i = 0; i < fes.size(); ++i) {
    Endpoint fe = pick_fe();
    http::request<http::string_body> req{http::verb::get, "/api/backends?is_alive=true", 11};
    set_common_headers(req, fe);  // password check only, but required (reference §1.5)
    Answer a;
    try {
      a = co_await send(fe, std::move(req));
    } catch (const TransportFailure& f) {
      quarantine(f.ep, f.what());
      continue;
    }
    ClassifyContext cc;
    cc.op = Operation::Metadata;
    cc.endpoint = a.from.host_port();
    cc.user = cfg.user;
    auto c = classify(a.status, a.body, cc);
    if (c.verdict != Verdict::Success) {
      spdlog::warn("doris: backend discovery failed: {}", c.error ? c.error->what() : "unexpected answer");
      if (c.error && c.error->disposition() != Disposition::Retry) co_return false;
      continue;
    }
    boost::system::error_code ec;
    auto v = json::parse(a.body, ec);
    std::vector<Endpoint> found;
    if (!ec && v.is_object())
      if (auto* data = v.as_object().if_contains("data"); data && data->is_object())
        if (auto* b = data->as_object().if_contains("backends"); b && b->is_array())
          for (auto& be : b->as_array()) {
            if (!be.is_object()) continue;
            auto& o = be.as_object();
            auto* ip = o.if_contains("ip");
            auto* port = o.if_contains("http_port");
            auto* alive = o.if_contains("is_alive");
            if (!ip || !ip->is_string() || !port) continue;
            if (alive && alive->is_bool() && !alive->get_bool()) continue;
            int64_t p = port->is_int64() ? port->get_int64()
                        : port->is_string() ? std::atoll(port->get_string().c_str())
                                            : 0;
            if (p <= 0 || p > 65535) continue;
            found.push_back(rewrite(Endpoint{std::string(ip->get_string()), static_cast<uint16_t>(p), false}));
          }
    std::lock_guard lk(be_m_);
    bes_ = std::move(found);
    bes_at_ = Clock::now();
    co_return true;
  }
  co_return false;
}

awaitable<std::optional<Endpoint>> Core::pick_be() {
  const bool discover = cfg.backends.empty();
  bool stale;
  {
    std::lock_guard lk(be_m_);
    stale = discover && (bes_.empty() || Clock::now() - bes_at_ > cfg.discovery_interval);
  }
  if (stale) co_await refresh_backends();
  for (int round = 0; round < 2; ++round) {
    std::vector<Endpoint> list;
    {
      std::lock_guard lk(be_m_);
      list = bes_;
    }
    if (list.empty()) co_return std::nullopt;
    size_t start = be_rr_.fetch_add(1);
    for (size_t i = 0; i < list.size(); ++i) {
      auto& e = list[(start + i) % list.size()];
      if (!is_quarantined(e)) co_return e;
    }
    // Every known BE failed recently: the cluster may have changed.
    if (round == 0 && discover) co_await refresh_backends();
  }
  std::lock_guard lk(be_m_);
  if (bes_.empty()) co_return std::nullopt;
  co_return bes_[be_rr_.fetch_add(1) % bes_.size()];
}

}  // namespace cdc2doris::doris::detail
