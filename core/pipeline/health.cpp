#include "core/pipeline/health.hpp"

#include <algorithm>

namespace cdc2doris::pipeline {

namespace {

std::string secs(int64_t ms) { return std::to_string(ms / 1000) + " s"; }

void add(std::string& out, const std::string& reason) {
  if (!out.empty()) out += "; ";
  out += reason;
}

void streak(std::string& out, const FailureStreak& s, const char* what, int64_t now, int64_t grace) {
  // No grace (the default): from the first failure on, also across the
  // backoff and re-read between attempts, until a success clears the streak.
  if (s.since_unix_ms == 0 || (grace > 0 && now - s.since_unix_ms < grace)) return;
  add(out, std::string("Doris ") + what + " failing for " + secs(std::max<int64_t>(0, now - s.since_unix_ms)) +
               " (" + std::to_string(s.in_streak) + " failures; last: " + s.last_error + ")");
}

}  // namespace

std::string not_ready_reason(const Metrics& m, const HealthOptions& o) {
  const Snapshot s = m.snapshot();
  // Nothing else matters any more, and the operator needs the cause.
  if (!s.stopping.empty()) return "stopping on a fatal error: " + s.stopping;
  if (!m.recovered.load()) return "recovery has not finished";
  const int64_t now = unix_now_ms();
  std::string out;
  const auto& k = s.kafka;
  if (!k.probed) {
    add(out, "Kafka has not answered yet" + (k.problem.empty() ? std::string() : ": " + k.problem));
  } else if (k.unreachable_since_ms != 0 && now - k.unreachable_since_ms >= o.kafka_grace.count()) {
    add(out, "Kafka unreachable for " + secs(now - k.unreachable_since_ms) + ": " + k.problem);
  }
  if (k.probed && !k.missing_topics.empty() && now - k.missing_since_ms >= o.kafka_grace.count()) {
    std::string names;
    for (const auto& t : k.missing_topics) names += (names.empty() ? "" : ", ") + t;
    add(out, "subscribed topic(s) missing (no such topic, or a regex matching none): " + names);
  }
  if (!s.doris_fe_problem.empty()) add(out, s.doris_fe_problem);
  streak(out, s.load_failures, "loads", now, o.doris_failure_grace.count());
  streak(out, s.commit_failures, "commits", now, o.doris_failure_grace.count());
  const int64_t bound = std::max(o.stall_timeout.count(), 2 * o.epoch_interval.count());
  const int64_t advanced = m.advanced_unix_ms.load();
  if (advanced != 0 && now - advanced >= bound)
    add(out, "the epoch machine has not advanced for " + secs(now - advanced) + " (phase " + s.phase + ")");
  return out;
}

std::string not_alive_reason(const Metrics& m, const HealthOptions& o) {
  const int64_t beat = m.heartbeat_steady_ms.load();
  if (beat == 0) return "";  // not started yet: startup has its own timeout
  const int64_t age = steady_now_ms() - beat;
  if (age < o.heartbeat_timeout.count()) return "";
  return "the pipeline thread has made no progress for " + secs(age) + " (heartbeat timeout " +
         secs(o.heartbeat_timeout.count()) + ")";
}

std::string abandoned_epochs(const Metrics& m) {
  const Snapshot s = m.snapshot();
  std::string out;
  auto add = [&](const std::string& what) { out += (out.empty() ? "" : "; ") + what; };
  for (const auto& c : s.committing)
    add("epoch " + std::to_string(c.epoch) + " is PRECOMMITTED and not committed: the next start rolls it forward");
  if (s.replaying)
    add("epoch " + std::to_string(s.replaying->epoch) + " is being replayed: the next start replays it");
  if (s.open_epoch && (s.open_epoch->rows > 0 || s.open_epoch->phase != "open"))
    add("epoch " + std::to_string(s.open_epoch->epoch) + " (" + s.open_epoch->phase +
        ") is not committed: the next start re-reads its records (or rolls it forward if it was recorded)");
  if (s.phase == "recovering") add("startup recovery had not finished; the next start recovers again");
  // The views are published between poll batches: a thread that hung inside a
  // Doris call in the middle of a batch consumed records they do not show
  // (seen under ASan, where the hang came before the first publish).
  const uint64_t consumed = m.records_consumed.load();
  if (out.empty() && consumed > s.records_consumed_at_views)
    add(std::to_string(consumed - s.records_consumed_at_views) +
        " record(s) were consumed after the last published state (the pipeline was inside a call): epoch " +
        std::to_string(s.current_epoch) + " is not committed and the next start re-reads them");
  if (out.empty())
    add("no epoch with data was in flight; the next start resumes at epoch " + std::to_string(s.current_epoch));
  return out;
}

}  // namespace cdc2doris::pipeline
