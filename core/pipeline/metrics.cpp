#include "core/pipeline/metrics.hpp"

#include <chrono>

#include "core/common/redact.hpp"

namespace cdc2doris::pipeline {

namespace {

constexpr size_t kRecentErrors = 20;

int64_t lag_of(const PartitionStats& p) {
  int64_t base = p.committed >= 0 ? p.committed : p.group_committed >= 0 ? p.group_committed : p.low_watermark;
  if (p.high_watermark < 0 || base < 0) return -1;
  return p.high_watermark > base ? p.high_watermark - base : 0;
}

void fail(FailureStreak& s, const std::string& error, int64_t now) {
  if (s.since_unix_ms == 0) {
    s.since_unix_ms = now;
    s.in_streak = 0;
  }
  s.last_unix_ms = now;
  ++s.count;
  ++s.in_streak;
  s.last_error = error;
}

}  // namespace

int64_t unix_now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int64_t steady_now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

const char* to_string(SkipReason r) {
  switch (r) {
    case SkipReason::Tombstone: return "tombstone";
    case SkipReason::Heartbeat: return "heartbeat";
    case SkipReason::TransactionMetadata: return "transaction_metadata";
    case SkipReason::SchemaChange: return "schema_change";
    case SkipReason::Truncate: return "truncate";
    case SkipReason::Message: return "message";
    case SkipReason::NotRouted: return "not_routed";
    case SkipReason::KeyOnlyDelete: return "key_only_delete";
    case SkipReason::DeleteIgnored: return "delete_ignored";
    case SkipReason::Filtered: return "filtered";
  }
  return "?";
}

Metrics::Metrics() {
  for (const char* r : kRewindReasons) s_.rewinds_by_reason[r] = 0;
}

void Metrics::beat() { heartbeat_steady_ms.store(steady_now_ms(), std::memory_order_relaxed); }
void Metrics::advanced() { advanced_unix_ms.store(unix_now_ms(), std::memory_order_relaxed); }

uint64_t Metrics::skipped_total() const {
  uint64_t n = 0;
  for (const auto& c : skipped_) n += c.load();
  return n;
}

void Metrics::add_table_load(const std::string& table, uint64_t rows, uint64_t bytes, int64_t now_ms) {
  std::lock_guard lk(mu_);
  auto& t = s_.tables[table];
  t.rows += rows;
  t.bytes += bytes;
  t.loads += 1;
  t.last_load_unix_ms = now_ms;
}

void Metrics::table_committed(const std::string& table, int64_t newest_source_ms, int64_t now_ms) {
  std::lock_guard lk(mu_);
  auto& t = s_.tables[table];
  t.last_commit_unix_ms = now_ms;
  if (newest_source_ms > t.newest_source_ms) t.newest_source_ms = newest_source_ms;
  t.last_error.clear();
}

void Metrics::set_table_error(const std::string& table, const std::string& error) {
  std::lock_guard lk(mu_);
  auto& t = s_.tables[table];
  t.last_error = redact_secrets(error);
  t.last_error_unix_ms = unix_now_ms();
}

void Metrics::set_partition(const std::string& tp, const PartitionStats& s) {
  std::lock_guard lk(mu_);
  s_.partitions[tp] = s;
}

void Metrics::update_partition(const std::string& tp, int64_t position, int64_t committed, bool paused) {
  std::lock_guard lk(mu_);
  auto& p = s_.partitions[tp];
  p.position = position;
  p.committed = committed;
  p.paused = paused;
  p.lag = lag_of(p);
}

void Metrics::set_partition_offsets(const std::string& tp, int64_t low, int64_t high, int64_t group_committed,
                                    int64_t now_ms) {
  std::lock_guard lk(mu_);
  auto it = s_.partitions.find(tp);
  if (it == s_.partitions.end()) return;
  auto& p = it->second;
  p.low_watermark = low;
  p.high_watermark = high;
  p.group_committed = group_committed;
  p.offsets_unix_ms = now_ms;
  p.lag = lag_of(p);
}

void Metrics::erase_partition(const std::string& tp) {
  std::lock_guard lk(mu_);
  s_.partitions.erase(tp);
}

std::vector<std::string> Metrics::partition_names() const {
  std::lock_guard lk(mu_);
  std::vector<std::string> out;
  for (const auto& [tp, p] : s_.partitions) out.push_back(tp);
  return out;
}

void Metrics::add_rewind(const std::string& reason) {
  std::lock_guard lk(mu_);
  ++s_.rewinds_by_reason[reason];
}

void Metrics::add_epoch_ended_early(const std::string& reason) {
  std::lock_guard lk(mu_);
  ++s_.epochs_ended_early[reason];
}

void Metrics::add_ddl(const std::string& table, const std::string& kind) {
  std::lock_guard lk(mu_);
  ++s_.ddl[table + "|" + kind];
}

void Metrics::add_truncate(const std::string& table, const std::string& action) {
  std::lock_guard lk(mu_);
  ++s_.truncates[table + "|" + action];
}

void Metrics::add_truncated_rows_dropped(const std::string& table, uint64_t rows) {
  std::lock_guard lk(mu_);
  s_.truncated_rows_dropped[table] += rows;
}

void Metrics::set_schema_version(const std::string& table, uint64_t version) {
  std::lock_guard lk(mu_);
  s_.tables[table].schema_version = version;
}

void Metrics::set_schema_change(const std::string& table, const std::string& waiting_on) {
  std::lock_guard lk(mu_);
  s_.tables[table].schema_change = waiting_on;
}

void Metrics::add_column_not_loaded(const std::string& table) {
  std::lock_guard lk(mu_);
  ++s_.tables[table].columns_not_loaded;
}

void Metrics::add_bad_record(const std::string& reason, const std::string& policy) {
  std::lock_guard lk(mu_);
  ++s_.bad_records[reason + "|" + policy];
}

void Metrics::add_doris_error(const std::string& status) {
  std::lock_guard lk(mu_);
  ++s_.doris_errors[status];
}

void Metrics::preset_bad_record(const std::string& reason, const std::string& policy) {
  std::lock_guard lk(mu_);
  s_.bad_records.try_emplace(reason + "|" + policy, 0);
}

void Metrics::preset_doris_error(const std::string& kind) {
  std::lock_guard lk(mu_);
  s_.doris_errors.try_emplace(kind, 0);
}

void Metrics::observe_commit_latency(double seconds) {
  std::lock_guard lk(mu_);
  if (s_.commit_latency_buckets.empty()) s_.commit_latency_buckets.assign(kCommitLatencyBucketCount, 0);
  for (size_t i = 0; i < kCommitLatencyBucketCount; ++i)
    if (seconds <= kCommitLatencyBuckets[i]) ++s_.commit_latency_buckets[i];
  ++s_.commit_latency_count;
  s_.commit_latency_sum += seconds;
}

void Metrics::set_epochs(uint64_t current, uint64_t last_committed) {
  std::lock_guard lk(mu_);
  s_.current_epoch = current;
  s_.last_committed_epoch = last_committed;
}

void Metrics::set_phase(const std::string& phase) {
  std::lock_guard lk(mu_);
  s_.phase = phase;
}

void Metrics::set_epoch_views(std::optional<EpochView> open, std::vector<EpochView> committing,
                              std::optional<EpochView> replaying) {
  const uint64_t consumed = records_consumed.load();
  std::lock_guard lk(mu_);
  s_.open_epoch = std::move(open);
  s_.committing = std::move(committing);
  s_.replaying = std::move(replaying);
  s_.records_consumed_at_views = consumed;
}

void Metrics::load_failed(const std::string& error) {
  const int64_t now = unix_now_ms();
  std::lock_guard lk(mu_);
  fail(s_.load_failures, redact_secrets(error), now);
}

void Metrics::load_succeeded() {
  std::lock_guard lk(mu_);
  s_.load_failures.since_unix_ms = 0;
}

void Metrics::commit_failed(const std::string& error) {
  const int64_t now = unix_now_ms();
  std::lock_guard lk(mu_);
  fail(s_.commit_failures, redact_secrets(error), now);
}

void Metrics::commit_succeeded() {
  std::lock_guard lk(mu_);
  s_.commit_failures.since_unix_ms = 0;
}

void Metrics::note_error(const std::string& where, const std::string& message) {
  const int64_t now = unix_now_ms();
  std::lock_guard lk(mu_);
  s_.recent_errors.push_back({now, where, redact_secrets(message)});
  while (s_.recent_errors.size() > kRecentErrors) s_.recent_errors.pop_front();
}

void Metrics::set_kafka_reachable(const std::vector<std::string>& missing_topics) {
  const int64_t now = unix_now_ms();
  std::lock_guard lk(mu_);
  auto& k = s_.kafka;
  k.probed = true;
  k.unreachable_since_ms = 0;
  k.problem.clear();
  if (missing_topics.empty()) {
    k.missing_since_ms = 0;
  } else if (k.missing_since_ms == 0) {
    k.missing_since_ms = now;
  }
  k.missing_topics = missing_topics;
  k.checked_unix_ms = now;
}

void Metrics::set_kafka_unreachable(const std::string& problem) {
  const int64_t now = unix_now_ms();
  std::lock_guard lk(mu_);
  auto& k = s_.kafka;
  if (k.unreachable_since_ms == 0) k.unreachable_since_ms = now;
  k.problem = redact_secrets(problem);
  k.checked_unix_ms = now;
}

void Metrics::set_stopping(const std::string& error, bool fatal) {
  {
    std::lock_guard lk(mu_);
    s_.stopping = redact_secrets(error);
  }
  stopping_fatal = fatal;
  stopping_on_error = true;
}

void Metrics::set_doris_fe_problem(const std::string& problem) {
  std::lock_guard lk(mu_);
  s_.doris_fe_problem = redact_secrets(problem);
}

Snapshot Metrics::snapshot() const {
  std::lock_guard lk(mu_);
  Snapshot copy = s_;
  if (copy.commit_latency_buckets.empty()) copy.commit_latency_buckets.assign(kCommitLatencyBucketCount, 0);
  return copy;
}

}  // namespace cdc2doris::pipeline
