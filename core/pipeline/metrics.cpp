#include "core/pipeline/metrics.hpp"

namespace cdc2doris::pipeline {

void Metrics::add_table_load(const std::string& table, uint64_t rows, uint64_t bytes, int64_t now_ms) {
  std::lock_guard lk(mu_);
  auto& t = s_.tables[table];
  t.rows += rows;
  t.bytes += bytes;
  t.loads += 1;
  t.last_load_unix_ms = now_ms;
}

void Metrics::set_table_error(const std::string& table, const std::string& error) {
  std::lock_guard lk(mu_);
  s_.tables[table].last_error = error;
}

void Metrics::set_partition(const std::string& tp, const PartitionStats& s) {
  std::lock_guard lk(mu_);
  s_.partitions[tp] = s;
}

void Metrics::erase_partition(const std::string& tp) {
  std::lock_guard lk(mu_);
  s_.partitions.erase(tp);
}

void Metrics::add_rewind(const std::string& reason) {
  std::lock_guard lk(mu_);
  ++s_.rewinds_by_reason[reason];
}

void Metrics::add_bad_record(const std::string& reason, const std::string& policy) {
  std::lock_guard lk(mu_);
  ++s_.bad_records[reason + "|" + policy];
}

void Metrics::add_doris_error(const std::string& status) {
  std::lock_guard lk(mu_);
  ++s_.doris_errors[status];
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

Snapshot Metrics::snapshot() const {
  std::lock_guard lk(mu_);
  Snapshot copy = s_;
  if (copy.commit_latency_buckets.empty()) copy.commit_latency_buckets.assign(kCommitLatencyBucketCount, 0);
  return copy;
}

}  // namespace cdc2doris::pipeline
