#pragma once
// The exactly-once coordinator (issue 6). One pipeline thread — the caller of
// run() — polls Kafka, decodes, routes, streams rows into one Stream Load per
// target table and drives the checkpoint epochs through the pure transition
// function of epoch_machine.hpp. docs/architecture.md describes the protocol
// and every crash-recovery case.
//
// Threads: run() uses the calling thread for everything that touches Kafka,
// the decoder, the loads and the store. Doris commits run concurrently on the
// Doris client's I/O threads (futures); lingering-transaction probing at start
// uses a few short-lived worker threads joined before run() goes on.
// request_stop() may be called from any thread (a signal handler thread).
#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "core/common/error.hpp"
#include "core/decode/decoder.hpp"
#include "core/doris/client.hpp"
#include "core/doris/lingering_walk.hpp"
#include "core/kafka/dlq.hpp"
#include "core/kafka/source.hpp"
#include "core/pipeline/metrics.hpp"
#include "core/pipeline/router.hpp"
#include "state/checkpoint_store.hpp"

namespace cdc2doris::avro {
class AvroRecords;
}

namespace cdc2doris::pipeline {

class ColumnTypes;  // column_types.hpp

using BadRecordPolicy = decode::BadRecordPolicy;  // to_string() with it

struct PipelineConfig {
  std::string label_prefix = "cdc2doris";
  std::chrono::milliseconds epoch_interval{10'000};
  // Per table and epoch; Doris caps one load at 10 GB.
  uint64_t epoch_max_bytes = 2ull << 30;
  uint64_t epoch_max_rows = 10'000'000;
  // Rows buffered in the daemon (not yet on the wire); partitions are paused above it.
  uint64_t memory_cap_bytes = 256ull << 20;
  // Concurrently open (or pre-committed, not yet committed) txns per Doris
  // database; below Doris' max_running_txn_num_per_db (1000 on 2.1/3.0;
  // Doris 2.0 and older allow 100: set 80 there).
  int open_txn_budget_per_db = 800;
  // Stream Loads one table may hold within one epoch when its column set
  // changes (partial TOAST rows, key-only deletes) and Doris cannot take
  // them in one load; reaching it ends the epoch early (reason "load bound").
  int max_loads_per_table = 8;
  // A backlog read to its end ends the open epoch at once (reason "caught
  // up") instead of at the interval.
  bool end_epoch_when_caught_up = true;
  BadRecordPolicy bad_record_policy = BadRecordPolicy::Fail;
  std::string dead_letter_topic;
  // Rows checked against their Doris columns before loading (row_checks.cpp):
  // a value that cannot fit is a bad record of its source record instead of
  // a load Doris rejects.
  bool check_rows = true;
  std::chrono::milliseconds shutdown_deadline{30'000};
  std::chrono::milliseconds poll_timeout{100};
  size_t poll_max_messages = 10'000;
  // A poll this large (or half poll_max_messages) is reading a backlog (see
  // end_epoch_when_caught_up): half a fetch response at the default
  // fetch.max.bytes.
  size_t backlog_poll_bytes = 4u << 20;
  // Bytes of rows gathered per table before they are handed to its stream.
  size_t write_chunk_bytes = 64 << 10;
  std::chrono::milliseconds backoff_base{200};
  std::chrono::milliseconds backoff_cap{10'000};
  // Lingering-txn probing: parallel probes, and how many consecutive labels
  // per table at most (a guard against a runaway walk).
  int probe_parallelism = 8;
  int probe_max_labels = doris::kDefaultLabelWalkProbes;
  // kafka.on_offset_gap: skip — a partition whose next offset retention
  // deleted continues at the log start (logged, counted) instead of
  // stopping the daemon. Never inside a replay.
  bool skip_offset_gaps = false;
  // kafka.on_group_offsets_lost: a partition the consumer group has no
  // offset for while this instance's state has one, and that offset is
  // still inside the log. The topic was deleted and re-created (the group's
  // offsets vanish with it), or the group's offsets expired, or group_id
  // changed: Kafka cannot tell which (librdkafka 2.0 has no topic ids).
  // Fail: stop naming the partition; Stored: start at the stored offset
  // (right after an expiry or a group rename); Beginning: read the
  // partition from its log start (right for a re-created topic).
  enum class LostGroupOffsets { Fail, Stored, Beginning };
  LostGroupOffsets on_group_offsets_lost = LostGroupOffsets::Fail;
  // The operator's verdict on an epoch whose outcome Doris can no longer
  // prove (a txn Doris forgot, of a table where a replay duplicates rows;
  // docs/operations.md): applies to this epoch only (0: none), of this
  // instance, or of another instance's label prefix when one is given.
  uint64_t unproven_epoch = 0;
  std::string unproven_epoch_prefix;      // empty: this instance's own epoch
  bool unproven_epoch_committed = false;  // true: its rows are in Doris; false: replay it
  // Doris aborts a pre-committed txn this long after its pre-commit (FE
  // Config.java stream_load_default_precommit_timeout_second, 3600). Until
  // then a label Doris no longer knows was committed and forgotten
  // (docs/architecture.md, "Forgotten labels"); never set it above Doris'.
  int64_t precommit_timeout_ms = 3600 * 1000;
  // How far the clocks of the instances and Doris' FE may differ: the window
  // above is shortened by it, and an expiry is only assumed this much later.
  int64_t clock_skew_allowance_ms = 5 * 60 * 1000;
};

struct Dependencies {
  kafka::Source& source;
  doris::DorisClient& doris;
  state::CheckpointStore& store;
  Router& router;
  Metrics& metrics;
  kafka::DeadLetterQueue* dead_letters = nullptr;  // required for BadRecordPolicy::DeadLetter
  // decoding.format avro/auto, topic_formats: records go through it (Avro -> Connect JSON) before the decoder.
  avro::AvroRecords* avro = nullptr;
  // The column types of schemaless records; nullptr: the target tables' own
  // (DorisColumnTypes on `doris`).
  ColumnTypes* column_types = nullptr;
};

struct RunResult {
  // nullopt: clean shutdown (exit 0). Otherwise the error that stopped the
  // pipeline; nothing past it was committed.
  std::optional<Error> error;
};

class Pipeline {
 public:
  Pipeline(PipelineConfig config, decode::DecoderOptions decoder_options, Dependencies deps);
  ~Pipeline();
  Pipeline(const Pipeline&) = delete;
  Pipeline& operator=(const Pipeline&) = delete;

  // Recovers (roll forward, replay, lingering aborts), subscribes and runs
  // until request_stop() or a fatal error, then shuts down gracefully.
  RunResult run();
  void request_stop();
  bool stop_requested() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cdc2doris::pipeline
