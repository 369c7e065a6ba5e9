#pragma once
// End-to-end harness: the real Kafka broker, the Doris emulator and the
// cdc2doris binary as a child process, fed by the shared workload generator.
//
// The oracle: the test decodes every produced record with the same decoder
// options the daemon uses and loads the rows, in partition order, with plain
// (non-2PC) Stream Loads into reference tables `ref_<db>.<table>` of the same
// emulator. Exactly-once holds when every target table's checksum equals its
// reference's (UNIQUE KEY) and the DUPLICATE KEY table holds exactly the
// reference's rows, each once.
#include <catch2/catch.hpp>

#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "tools/doris_emulator/launcher.hpp"
#include "tools/fixtures/kafka_broker.hpp"
#include "tools/fixtures/process.hpp"
#include "tools/fixtures/temp_dir.hpp"
#include "tools/workload/workload.hpp"

namespace cdc2doris::test {

// A campaign's size or seed from the environment (replaying a failure), else def.
long env_long(const char* name, long def);

struct E2eOptions {
  int tables = 8;
  int partitions = 4;
  std::string topic_prefix = "e2e";  // Debezium server name; unique per test case
  std::string duplicate_table = "orders_7";
  // TOAST-heavy tables (a third of their updates partial rows, key-only
  // deletes; workload::Options::toast_tables), one per way the daemon loads
  // rows of different column sets: orders_0 has flexible partial updates
  // (enable_unique_key_skip_bitmap_column), orders_1 a sequence column
  // filled from the source position, orders_2 neither (a load per run).
  int toast_tables = 3;
  std::string epoch_interval = "300ms";
  std::string extra_delivery_yaml;
  std::string extra_doris_yaml;  // appended to each member's `doris:` section
  // Environment CDC2DORIS_E2E_DORIS_LIMITS=small (ctest *_small_limits_test)
  // sets what is left at 0 here: label_num_threshold 50,
  // max_running_txns 20, txn_clean_interval_s 1.
  EmulatorOptions emulator;
  uint64_t seed = 7;
  // Tables whose topics are compacted while the daemon reads them (issue
  // 31): cleanup.policy=compact,delete, segments rolled every 200 ms, cleaned as
  // soon as 1% is dirty. Only UNIQUE KEY tables of whole rows: compaction
  // keeps a key's last record, the same final state; a DUPLICATE KEY table
  // loses history and a partial row loses the columns it left out.
  std::set<std::string> compacted_tables;
};

class E2eHarness {
 public:
  explicit E2eHarness(E2eOptions opts);
  ~E2eHarness();

  // Generates and produces `n` more records to Kafka (and remembers them).
  void produce(size_t n);
  // Starts the daemon. `env` adds environment variables (CDC2DORIS_CRASH_AT).
  Process& start_daemon(std::map<std::string, std::string> env = {});
  Process* daemon() { return daemon_.get(); }
  // SIGKILL the daemon (if running) and reap it.
  void kill_daemon();
  // Waits for the daemon to exit; returns its status (128+sig for signals).
  std::optional<int> wait_daemon(std::chrono::milliseconds timeout);
  // Waits until the consumer group committed every produced offset.
  bool wait_caught_up(std::chrono::milliseconds timeout);
  // SIGTERM and wait for a clean exit; returns the exit status.
  int stop_daemon();

  // Multi-instance: one more daemon in the same consumer group, with its own
  // state directory, label prefix "<topic_prefix>_<member>" and log
  // daemon-<member>.log (count_log/log_tail read every member's log too).
  // The caller owns the process.
  std::unique_ptr<Process> start_member(const std::string& member, std::map<std::string, std::string> env = {});
  std::string member_log_tail(const std::string& member, size_t bytes = 6000) const;
  // A member's kafka.instance_id (default "<topic_prefix>-<member>").
  void set_member_instance_id(const std::string& member, const std::string& id);
  std::string instance_id(const std::string& member) const;

  // Loads the reference tables from the produced records and compares.
  void verify();

  // Totals parsed from every daemon run's log.
  size_t count_log(const std::string& needle) const;
  std::string log_tail(size_t bytes = 6000) const;
  Emulator& emulator() { return *emu_; }
  KafkaBroker& broker() { return broker_; }
  // Retention: deletes every partition's records below the consumer group's
  // committed offset (what was loaded and committed). Returns how many.
  int64_t delete_committed_records();
  // A retention gap: deletes `count` records of `table`'s `partition` past
  // the group's committed offset (never loaded), which the reference then
  // leaves out too. Returns how many were deleted.
  int64_t delete_unloaded_records(const std::string& table, int32_t partition, int64_t count);
  // A topic deleted and created again, empty (a connector reset): its
  // offsets restart at 0 and the group's offsets for it are gone. What it
  // held that nobody loaded is lost (call it with the daemon caught up).
  void recreate_topic(const std::string& table);
  // Lines under `kafka:` in every configuration written from now on (e.g.
  // "  on_offset_gap: skip\n"); rewrites the single daemon's configuration.
  void set_kafka_yaml(const std::string& yaml);
  // Records the log cleaner removed from the compacted tables' topics so far.
  int64_t compacted_away() const;
  const std::string& db() const { return db_; }
  size_t produced() const { return records_.size(); }
  std::string config_path() const { return (dir_ / "config.yaml").string(); }

 private:
  void write_config(const std::string& member = "");
  std::map<std::string, std::map<int32_t, int64_t>> end_offsets() const;

  E2eOptions opts_;
  TempDir dir_;
  KafkaBroker& broker_;
  std::unique_ptr<Emulator> emu_;
  workload::Generator gen_;
  std::string db_ = "shop";
  std::vector<workload::Record> records_;
  std::unique_ptr<Process> daemon_;
  int runs_ = 0;
  std::set<std::string> members_;
  std::map<std::string, std::string> instance_ids_;
  std::string kafka_yaml_;
  // Retention gaps: per topic and partition, ranges [from, to) of records
  // nobody loaded, counted from the partition's first record ever produced.
  std::map<std::pair<std::string, int32_t>, std::vector<std::pair<int64_t, int64_t>>> gone_;
  // Records produced to a partition before its topic's current incarnation:
  // its broker offset 0 is that record.
  std::map<std::pair<std::string, int32_t>, int64_t> incarnation_base_;
};

}  // namespace cdc2doris::test
