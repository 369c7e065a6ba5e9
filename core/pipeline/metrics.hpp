#pragma once
// What the pipeline counts, for /metrics and /status (issue 7). Written by the
// pipeline thread, read by the admin server's thread: counters are atomics,
// per-table and per-partition details sit behind one mutex and are copied out
// as a snapshot.
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace cdc2doris::pipeline {

struct TableStats {
  uint64_t rows = 0;
  uint64_t bytes = 0;
  uint64_t loads = 0;
  int64_t last_load_unix_ms = 0;
  std::string last_error;
};

struct PartitionStats {
  int64_t position = -1;   // next offset to process
  int64_t committed = -1;  // end offset of the last committed epoch
  int64_t lag = -1;
  bool paused = false;
};

// Commit-latency histogram buckets (seconds), Prometheus style.
inline constexpr double kCommitLatencyBuckets[] = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30};
inline constexpr size_t kCommitLatencyBucketCount = sizeof(kCommitLatencyBuckets) / sizeof(double);

struct Snapshot {
  std::map<std::string, TableStats> tables;          // "db.table"
  std::map<std::string, PartitionStats> partitions;  // "topic[p]"
  std::map<std::string, uint64_t> rewinds_by_reason;
  std::map<std::string, uint64_t> bad_records;       // "reason|policy"
  std::map<std::string, uint64_t> doris_errors;      // Doris status / error kind
  std::vector<uint64_t> commit_latency_buckets;      // cumulative counts
  uint64_t commit_latency_count = 0;
  double commit_latency_sum = 0;
  uint64_t current_epoch = 0;
  uint64_t last_committed_epoch = 0;
  std::string phase;
};

class Metrics {
 public:
  std::atomic<uint64_t> records_consumed{0};
  std::atomic<uint64_t> bytes_consumed{0};
  std::atomic<uint64_t> epochs_committed{0};
  std::atomic<uint64_t> epochs_aborted{0};
  std::atomic<uint64_t> epochs_replayed{0};
  std::atomic<uint64_t> lingering_txns_aborted{0};
  std::atomic<uint64_t> records_skipped{0};  // tombstones, heartbeats, excluded tables...
  std::atomic<uint64_t> buffered_bytes{0};
  std::atomic<bool> recovered{false};
  // When the Kafka client last reported a connectivity problem (readiness).
  std::atomic<int64_t> kafka_error_unix_ms{0};

  void add_table_load(const std::string& table, uint64_t rows, uint64_t bytes, int64_t now_ms);
  void set_table_error(const std::string& table, const std::string& error);
  void set_partition(const std::string& tp, const PartitionStats& s);
  void erase_partition(const std::string& tp);
  void add_rewind(const std::string& reason);
  void add_bad_record(const std::string& reason, const std::string& policy);
  void add_doris_error(const std::string& status);
  void observe_commit_latency(double seconds);
  void set_epochs(uint64_t current, uint64_t last_committed);
  void set_phase(const std::string& phase);
  Snapshot snapshot() const;

 private:
  mutable std::mutex mu_;
  Snapshot s_;
};

}  // namespace cdc2doris::pipeline
