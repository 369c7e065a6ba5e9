#pragma once
// What the pipeline counts, for /metrics and /status (issues 7, 13). Error
// texts are stored through redact_secrets (core/common/redact.hpp). Written
// by the pipeline thread and the health monitor's thread, read by the admin
// server's thread: counters are atomics, per-table and per-partition details
// sit behind one mutex and are copied out as a snapshot.
#include <array>
#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace cdc2doris::pipeline {

struct TableStats {
  uint64_t rows = 0;
  uint64_t bytes = 0;
  uint64_t loads = 0;
  int64_t last_load_unix_ms = 0;    // last load pre-committed
  int64_t last_commit_unix_ms = 0;  // last epoch with a txn of this table committed
  // source.ts_ms of the newest row committed to Doris (0: none known yet).
  int64_t newest_source_ms = 0;
  // The current problem; cleared once a txn of the table commits again.
  std::string last_error;
  int64_t last_error_unix_ms = 0;  // kept after the error is over
  // Schema changes this pipeline applied to the table (its DDL record's
  // version; docs/schema-evolution.md), and source columns the table lacks
  // that the policy does not add (schema_evolution: off, or refused).
  uint64_t schema_version = 0;
  uint64_t columns_not_loaded = 0;
  // Non-empty while the table waits on a schema-change job in Doris.
  std::string schema_change;
};

struct PartitionStats {
  int64_t position = -1;   // next offset to process
  int64_t committed = -1;  // end offset of the last committed epoch (in Doris)
  // Refreshed by the health monitor from the partition leader and the group.
  int64_t low_watermark = -1;
  int64_t high_watermark = -1;
  int64_t group_committed = -1;
  int64_t offsets_unix_ms = 0;  // when the three above were queried
  // Records not yet in Doris: high watermark - committed (or, before the
  // first commit, the group's committed offset, else the log start). -1: unknown.
  int64_t lag = -1;
  bool paused = false;
};

// Commit-latency histogram buckets (seconds), Prometheus style.
inline constexpr double kCommitLatencyBuckets[] = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30};
inline constexpr size_t kCommitLatencyBucketCount = sizeof(kCommitLatencyBuckets) / sizeof(double);

// Why a consumed record loaded nothing (bad records are counted apart).
enum class SkipReason { Tombstone, Heartbeat, TransactionMetadata, SchemaChange, Truncate, Message, NotRouted, KeyOnlyDelete,
                        DeleteIgnored, Filtered };
inline constexpr size_t kSkipReasonCount = 10;
const char* to_string(SkipReason r);

// Reasons the pipeline rewinds for (cdc2doris_rewinds_total{reason}).
inline constexpr const char* kRewindReasons[] = {"kafka",         "load",           "pre-commit",
                                                 "schema lookup", "dead-letter",    "replay pre-commit",
                                                 "stopping",      "partitions lost", "partition revocation while stopping",
                                                 "truncate"};

// A run of consecutive failures of one kind; since_unix_ms == 0: none now.
struct FailureStreak {
  int64_t since_unix_ms = 0;
  int64_t last_unix_ms = 0;
  uint64_t count = 0;      // every failure since start
  uint64_t in_streak = 0;  // failures since the last success
  std::string last_error;
};

struct EpochView {
  uint64_t epoch = 0;
  std::string phase;
  size_t tables = 0;
  uint64_t rows = 0;
  int64_t since_unix_ms = 0;  // opened / committing since
  int attempts = 0;           // commit rounds that failed so far
};

struct ErrorEvent {
  int64_t unix_ms = 0;
  std::string where;  // "load", "commit", "kafka", ...
  std::string message;
};

struct KafkaHealth {
  bool probed = false;              // the monitor answered at least once
  int64_t unreachable_since_ms = 0;  // 0: the last probe reached a broker
  std::string problem;              // the last probe's error
  std::vector<std::string> missing_topics;
  int64_t missing_since_ms = 0;
  int64_t checked_unix_ms = 0;
};

struct Snapshot {
  std::map<std::string, TableStats> tables;          // "db.table"
  std::map<std::string, PartitionStats> partitions;  // "topic[p]"
  std::map<std::string, uint64_t> rewinds_by_reason;
  std::map<std::string, uint64_t> epochs_ended_early;  // by reason (not the interval, not shutdown)
  std::map<std::string, uint64_t> bad_records;       // "reason|policy"
  std::map<std::string, uint64_t> doris_errors;      // Doris status / error kind
  std::map<std::string, uint64_t> ddl;               // "db.table|kind": statements run (create, add, drop, ...)
  // "db.table|action": source TRUNCATEs (applied, ignored, failed,
  // already_applied: read again after it ran, e.g. after a restart).
  std::map<std::string, uint64_t> truncates;
  std::map<std::string, uint64_t> truncated_rows_dropped;  // "db.table": rows read after a truncate that precede it
  std::vector<uint64_t> commit_latency_buckets;      // cumulative counts
  uint64_t commit_latency_count = 0;
  double commit_latency_sum = 0;
  uint64_t current_epoch = 0;
  uint64_t last_committed_epoch = 0;
  std::string phase;
  std::optional<EpochView> open_epoch;
  std::vector<EpochView> committing;
  std::optional<EpochView> replaying;
  // records_consumed when the epoch views above were published: a pipeline
  // thread stuck in a call before its next publish has consumed more.
  uint64_t records_consumed_at_views = 0;
  FailureStreak load_failures;
  FailureStreak commit_failures;
  KafkaHealth kafka;
  std::string doris_fe_problem = "Doris FE not checked yet";
  // The fatal error the pipeline is stopping on (empty while it runs):
  // /readyz names it until the process exits.
  std::string stopping;
  std::deque<ErrorEvent> recent_errors;  // newest last
};

class Metrics {
 public:
  Metrics();

  std::atomic<uint64_t> records_consumed{0};
  std::atomic<uint64_t> bytes_consumed{0};
  std::atomic<uint64_t> epochs_committed{0};
  std::atomic<uint64_t> epochs_aborted{0};
  std::atomic<uint64_t> epochs_replayed{0};
  std::atomic<uint64_t> lingering_txns_aborted{0};
  // Multi-instance: epochs whose group commit this member's generation lost,
  // and pending epochs of other owners resolved on assignment.
  std::atomic<uint64_t> epochs_fenced{0};
  std::atomic<uint64_t> pending_epochs_resolved{0};
  // Partitions whose next offset retention had deleted, continued at the log
  // start under kafka.on_offset_gap: skip; and partitions whose offset was
  // above the high watermark (topic deleted and re-created), read from the
  // log start (issue 31).
  std::atomic<uint64_t> offset_gaps_skipped{0};
  std::atomic<uint64_t> topics_recreated{0};
  std::atomic<uint64_t> buffered_bytes{0};
  std::atomic<bool> recovered{false};
  // Set (by set_stopping) once the pipeline stops on an error, before it
  // aborts its loads and closes Kafka: the daemon bounds that shutdown as it
  // does a signalled one (cmd_run), with the exit the error implies.
  std::atomic<bool> stopping_on_error{false};
  std::atomic<bool> stopping_fatal{false};
  // When the Kafka client last reported a connectivity problem.
  std::atomic<int64_t> kafka_error_unix_ms{0};
  // Written by the pipeline thread only (never by the admin, monitor or
  // signal thread): /healthz and the systemd watchdog judge it.
  std::atomic<int64_t> heartbeat_steady_ms{0};
  // When the epoch machine last advanced: an epoch committed, or an epoch end
  // found nothing to do (idle). /readyz judges it.
  std::atomic<int64_t> advanced_unix_ms{0};

  void beat();
  void advanced();

  void add_skipped(SkipReason r) { skipped_[static_cast<size_t>(r)].fetch_add(1, std::memory_order_relaxed); }
  uint64_t skipped(SkipReason r) const { return skipped_[static_cast<size_t>(r)].load(); }
  uint64_t skipped_total() const;

  void add_table_load(const std::string& table, uint64_t rows, uint64_t bytes, int64_t now_ms);
  // A txn of the table committed; newest_source_ms 0 keeps the previous value.
  void table_committed(const std::string& table, int64_t newest_source_ms, int64_t now_ms);
  void set_table_error(const std::string& table, const std::string& error);
  // Full replace (tests, and partitions the pipeline sets up).
  void set_partition(const std::string& tp, const PartitionStats& s);
  // The pipeline's part; keeps what the health monitor measured.
  void update_partition(const std::string& tp, int64_t position, int64_t committed, bool paused);
  // The health monitor's part; ignored for a partition no longer assigned.
  void set_partition_offsets(const std::string& tp, int64_t low, int64_t high, int64_t group_committed,
                             int64_t now_ms);
  void erase_partition(const std::string& tp);
  std::vector<std::string> partition_names() const;
  void add_rewind(const std::string& reason);
  void add_epoch_ended_early(const std::string& reason);
  void add_bad_record(const std::string& reason, const std::string& policy);
  void add_doris_error(const std::string& status);
  void add_ddl(const std::string& table, const std::string& kind);
  void set_schema_version(const std::string& table, uint64_t version);
  void set_schema_change(const std::string& table, const std::string& waiting_on);
  void add_column_not_loaded(const std::string& table);
  void add_truncate(const std::string& table, const std::string& action);
  void add_truncated_rows_dropped(const std::string& table, uint64_t rows);
  // Labelled counters appear at 0 before their first event.
  void preset_bad_record(const std::string& reason, const std::string& policy);
  void preset_doris_error(const std::string& kind);
  void observe_commit_latency(double seconds);
  void set_epochs(uint64_t current, uint64_t last_committed);
  void set_phase(const std::string& phase);
  void set_epoch_views(std::optional<EpochView> open, std::vector<EpochView> committing,
                       std::optional<EpochView> replaying);

  void load_failed(const std::string& error);
  void load_succeeded();
  void commit_failed(const std::string& error);
  void commit_succeeded();
  void note_error(const std::string& where, const std::string& message);

  void set_kafka_reachable(const std::vector<std::string>& missing_topics);
  void set_kafka_unreachable(const std::string& problem);
  void set_doris_fe_problem(const std::string& problem);
  void set_stopping(const std::string& error, bool fatal);

  Snapshot snapshot() const;

 private:
  mutable std::mutex mu_;
  Snapshot s_;
  std::array<std::atomic<uint64_t>, kSkipReasonCount> skipped_{};
};

int64_t unix_now_ms();
int64_t steady_now_ms();

}  // namespace cdc2doris::pipeline
