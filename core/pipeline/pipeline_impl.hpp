#pragma once
// Private to core/pipeline: the pipeline's implementation class, shared by
// the files that define its parts (recovery.cpp, rebalance.cpp, run_loop.cpp,
// loads.cpp, epoch_driver.cpp, replay.cpp, failures.cpp, pipeline.cpp).
#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include <spdlog/spdlog.h>

#include "core/common/retry.hpp"
#include "core/pipeline/epoch_machine.hpp"
#include "core/pipeline/column_types.hpp"
#include "core/pipeline/table_ddl.hpp"
#include "core/pipeline/table_routing.hpp"
#include "core/pipeline/pipeline.hpp"
#include "state/group_meta.hpp"

namespace cdc2doris::pipeline {

using Clock = std::chrono::steady_clock;
using kafka::TopicPartition;

inline int64_t unix_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

inline TopicPartition to_kafka(const state::TopicPartition& tp) { return {tp.topic, tp.partition}; }

// A fatal condition that unwinds to run(): the pipeline stops, nothing past
// it is committed.
struct FatalStop {
  Error error;
};

// How one table's rows of an epoch are split into Stream Loads (see
// docs/architecture.md, "Column sets").
enum class LoadMode {
  // One load: unique_key_update_mode UPDATE_FLEXIBLE_COLUMNS, every row
  // carries its own column set (Doris 3.1+, enable_unique_key_skip_bitmap_column).
  Flexible,
  // A sequence column filled from the source position: one load per column
  // set of full rows and deletes, committed first; partial rows in runs of
  // equal column sets after them, in source order.
  Sequence,
  // A new load per run of equal column sets, committed in source order.
  Runs,
};
const char* to_string(LoadMode m);

// A record kept whole while its table's rows are isolated (isolation.cpp):
// the bytes outlive the consumer's batch, for the dead-letter topic.
struct KeptRecord {
  std::string topic;
  int32_t partition = 0;
  int64_t offset = 0;
  std::optional<std::string> key, value;
  std::vector<std::pair<std::string, std::optional<std::string>>> headers;
  int64_t timestamp_ms = -1;
  kafka::TimestampType timestamp_type = kafka::TimestampType::None;
};

// The rows of a load of an isolated table: buffered with the record each
// came from, sent only when the epoch ends (isolation.cpp).
struct IsolatedRows {
  std::vector<KeptRecord> records;
  std::vector<size_t> row_end;       // where each row (its newline included) ends in OpenLoad::pending
  std::vector<uint32_t> row_record;  // the index in `records` each row came from
  std::optional<doris::LoadResult> result;  // once pre-committed
  std::vector<bool> sent;                   // per record: its rows are in `result`'s txn
};

// One Stream Load of the epoch being filled.
struct OpenLoad {
  Target target;
  doris::LoadSpec spec;
  std::unique_ptr<doris::LoadStream> stream;  // null: a replay skips the rows of a committed part
  std::string pending;  // rows gathered before they are handed to the stream
  uint64_t rows = 0;
  uint64_t bytes = 0;
  int64_t newest_source_ms = 0;  // source.ts_ms of the newest row, for freshness
  // The highest source position (SourcePosition::sequence()) of its rows:
  // a truncate ordered before it must not run after them (truncate.cpp).
  std::optional<int64_t> newest_seq;
  // Full rows and deletes: their effect does not depend on what Doris
  // stores for the key (Sequence mode commits their loads first).
  bool dominating = false;
  bool skip = false;  // replay: this part is already committed; its rows are dropped
  uint32_t part = 0;  // its label's part number (make_label)
  // Non-null while the table's rows are isolated: no stream, rows buffered.
  std::unique_ptr<IsolatedRows> isolated;
};

// A table's loads of one epoch, in commit order.
struct TableLoads {
  LoadMode mode = LoadMode::Runs;
  std::vector<OpenLoad> loads;
  uint32_t labels = 0;  // parts created so far (part n has label make_label(.., n))
};
using LoadMap = std::map<Target, TableLoads>;

// What is known of a target table, asked once per table.
struct TableInfo {
  bool unique = false;
  LoadMode mode = LoadMode::Runs;
};

// The epoch being filled.
struct OpenEpoch {
  uint64_t epoch = 0;
  Phase phase = Phase::Open;
  state::EpochRecord record;  // built when its loads are pre-committed
  LoadMap loads;
  Clock::time_point started = Clock::now();
  bool end_requested = false;
  bool dead_letters = false;  // dead letters produced since the last flush
  std::map<std::string, int64_t> newest_source_ms;  // per table, set when pre-committed
  std::map<Target, int64_t> newest_seq;              // per table: the highest source position, likewise
};

// The epoch being committed (at most one; its record is in the store).
struct ClosingEpoch {
  state::EpochRecord record;
  Phase phase = Phase::Committing;
  std::vector<std::pair<size_t, std::future<doris::TxnResult>>> inflight;  // index into record.txns
  Clock::time_point committing_since = Clock::now();
  Clock::time_point retry_at{};
  int attempt = 0;
  std::set<size_t> lost;
  std::map<std::string, int64_t> newest_source_ms;  // per table; empty after a restart
  std::map<Target, int64_t> newest_seq;              // per table; empty after a restart
};

// Re-reading one recorded epoch's offset range for the tables whose txn
// Doris lost (aborted after a pre-commit timeout, label expired...).
struct Replay {
  Phase phase = Phase::Replaying;
  state::EpochRecord record;
  std::set<Target> tables;
  std::map<TopicPartition, std::pair<int64_t, int64_t>> ranges;  // [start, end)
  std::set<TopicPartition> remaining;
  LoadMap loads;
  std::set<std::string> committed_labels;  // parts of the lost tables that committed before
  bool positioned = false;  // partitions sought to their start offsets
  int attempt = 0;
  // Read through Source::read_range, synchronously, whoever owns the
  // partitions now (issue 31: a replay that waited for its partitions to come
  // back from a rebalance stalled forever).
  bool by_range = false;
};

class Pipeline::Impl : public kafka::RebalanceListener {
 public:
  Impl(PipelineConfig config, decode::DecoderOptions decoder_options, Dependencies deps)
      : cfg_(std::move(config)),
        deps_(deps),
        decoder_(std::move(decoder_options)),
        column_types_(deps.router, deps.doris),
        routing_(deps.router, deps.column_types != nullptr ? deps.column_types : &column_types_),
        log_(spdlog::default_logger()->clone("pipeline")),
        backoff_{cfg_.backoff_base, cfg_.backoff_cap} {
    if (cfg_.bad_record_policy == BadRecordPolicy::DeadLetter &&
        (deps_.dead_letters == nullptr || cfg_.dead_letter_topic.empty()))
      throw std::invalid_argument("bad-record policy dead_letter needs a dead-letter topic and producer");
    preset_metric_labels();
  }

  RunResult run();
  void request_stop() { stop_.store(true); }
  bool stop_requested() const { return stop_.load(); }

  // RebalanceListener (called inside source.poll() on this thread)
  kafka::OffsetMap on_assign(const std::vector<TopicPartition>& added) override;
  void on_revoke(const std::vector<TopicPartition>& revoked, bool lost) override;
  void on_rebalance() override;

 private:
  enum class Who { Open, Closing, Replay };
  enum class LostCheck { Committed, Lost, Retry };
  // Whether the table is UNIQUE KEY (a replay is idempotent there); nullopt: Doris could not be asked.
  std::optional<bool> unique_key(const Target& t);

  kafka::OffsetMap assign_partitions(const std::vector<TopicPartition>& added);
  void revoke_partitions(const std::vector<TopicPartition>& revoked, bool lost);
  // --- the consumer group (group.cpp)
  enum class PendingFate { Committed, Aborted };
  std::variant<kafka::GroupOffsetMap, Error> read_group(const std::vector<TopicPartition>& tps);
  // The fenced commit point: GroupCommitted, Fenced, or LoadFailedFatal (undecidable).
  Event commit_group_point(const state::EpochRecord& rec);
  void abort_record(const state::EpochRecord& rec);
  // Recovery: did this instance's PRECOMMITTED record pass its commit point?
  bool own_record_passed(const state::EpochRecord& rec);
  std::optional<PendingFate> known_fate(const state::GroupMeta& m);
  PendingFate resolve_pending(const state::GroupMeta& m);
  // Where now stands against the pre-commit timeout of an epoch whose txns
  // were all pre-committed after `floor_ms` (0: not known).
  //   Young:   none can have expired: a label Doris does not know was
  //            committed and forgotten (label_num_threshold).
  //   Unsure:  within the clock-skew allowance of the expiry: decided later.
  //   Expired: an unknown label may have expired or been committed.
  enum class ForgetWindow { Young, Unsure, Expired };
  ForgetWindow forget_window(int64_t floor_ms) const;
  // The operator's delivery.unproven_epoch verdict on this epoch, if any.
  std::optional<bool> unproven_verdict(const std::string& prefix, uint64_t epoch) const;
  // A partition whose metadata refers to the epoch's anchor partition
  // (state/group_meta.hpp); `known` is what the group was already asked.
  PendingFate resolve_reference(const state::GroupMeta& m, const kafka::GroupOffsetMap& known);
  // Where newly assigned partitions start, decided by the group.
  kafka::OffsetMap group_starts(const std::vector<TopicPartition>& tps);
  // Moves or refuses start offsets that are no longer in the log (retention
  // gap, re-created topic); see group.cpp.
  // store_only: partitions whose start is this instance's stored offset
  // because the group has none.
  void check_start_offsets(kafka::OffsetMap& starts, bool replaying,
                           const std::set<TopicPartition>& store_only = {});
  // Whether an end offset of tp may be committed to the group now.
  bool may_commit_end(const TopicPartition& tp, int64_t end) const;
  // --- recovery
  void recover();
  void abort_lingering();
  // --- main loop
  void process(const kafka::Message& msg);
  // Topic names compared by the source's pointer first: librdkafka hands out
  // one name per topic, so a per-record string compare is rarely needed. Only
  // within one batch, whose records keep their names alive: two live names
  // cannot share an address, while a freed one could be reused.
  bool same_topic(std::string_view a, const std::string& b) const {
    if (a.data() == current_topic_name_.data() && a.size() == current_topic_name_.size()) return true;
    return a == b;
  }
  // Both records of the same batch (alive), so equal pointers mean equal names.
  static bool same_partition(const kafka::Message& a, std::string_view topic, int32_t partition) {
    return a.partition == partition && ((a.topic.data() == topic.data() && a.topic.size() == topic.size()) || a.topic == topic);
  }
  // A decoded change of routed_'s target.
  void handle_change(const kafka::Message& msg, const Target& target);
  // record_ viewing msg, for decoder_.
  decode::KafkaRecord& fill_record(const kafka::Message& msg);
  // msg into change_ (through deps_.avro first when records are Avro):
  // identified, routed once (routed_), converted with its target's context.
  // `failed`: the schema registry failed and fail() ran (the partitions are
  // rewound or the pipeline stops); the record was not decoded.
  std::optional<decode::DecodeError> decode_record(const kafka::Message& msg, bool& failed);
  // The only way entries leave pos_ and base_: process() holds pointers into them.
  void erase_position(const TopicPartition& tp, bool with_base);
  void bad_record(const kafka::Message& msg, const decode::DecodeError& err);
  // nullptr when opening failed and the epoch was aborted (the record is re-read).
  OpenLoad* load_for(LoadMap& loads, const Target& target, const decode::Row& row, uint64_t epoch,
                     bool may_end_epoch);
  OpenLoad* new_load(TableLoads& table, const Target& target, const decode::Row& row, uint64_t epoch, bool unique,
                     bool replaying);
  void append_row(OpenLoad& load, const decode::Row& row, const kafka::Message& msg);
  std::optional<doris::DorisError> flush_pending(OpenLoad& load);
  // A load failed: the error gets the load's table and label if it lacks
  // them, and every signal of it is set here: the failure streak /readyz
  // judges, the table's error, the error history, the Doris error counter.
  doris::DorisError load_failed(const OpenLoad& load, doris::DorisError err);
  bool should_end_epoch() const;
  // Ends the open epoch when a backlog has just been read to its end.
  void end_epoch_if_caught_up(size_t polled, size_t polled_bytes);
  bool open_epoch_progressed() const;
  void apply_memory_cap();
  // --- epoch lifecycle, driven by transition()
  void step(Who who, Event event);
  void end_open_epoch(const char* reason);
  // A failure is a Retry when it isolates a table (below).
  std::optional<Error> finish_loads(LoadMap& loads, std::vector<state::TableTxn>& txns);
  // --- rows Doris rejects (isolation.cpp, docs/decoding.md "What Doris still rejects")
  // A data-quality failure of `target`'s load under a bad-record policy
  // that is not `fail`: the table is isolated and the Retry error to fail
  // the attempt with is returned; nullopt when the error stands as it is.
  std::optional<Error> isolate_after(const Target& target, const doris::DorisError& err);
  // The row that ends at `end` in the load's buffer came from msg.
  static void keep_row(IsolatedRows& rows, size_t end, const kafka::Message& msg);
  // Sends the isolated loads of a table, finding the records whose rows
  // Doris rejects by halving, and handles those as bad records.
  std::optional<Error> finish_isolated(const Target& target, TableLoads& tl, bool replaying);
  // Tables whose rows are buffered per record and sent at the epoch's end.
  std::set<Target> isolate_;
  // Bad records handled (skipped, or dead-lettered and handed to the
  // producer) since their partition's last commit: a range read again after
  // a failure (a rewind, an isolated table) does not send them again. Pruned
  // as epochs commit; emptied when the dead-letter flush fails (a letter
  // handed over may not have arrived).
  std::map<TopicPartition, std::set<int64_t>> handled_bad_;
  bool handled_before(std::string_view topic, int32_t partition, int64_t offset) const;
  void note_handled(std::string_view topic, int32_t partition, int64_t offset);
  void start_commits(ClosingEpoch& closing);
  void drive_closing(bool block);
  // known_aborted: Doris answered the commit with "already aborted" (the
  // txn never became visible); else it did not know the txn at all.
  LostCheck classify_lost(const state::TableTxn& txn, const state::EpochRecord& rec, bool known_aborted);
  void mark_committed(ClosingEpoch& closing);
  void commit_offsets(const ClosingEpoch& closing);
  void open_next_epoch();
  // --- replay
  void begin_replay();
  void position_replay();
  void process_replay(const kafka::Message& msg);
  void finish_replay();
  void resume_after_replay();
  // The replay of replay_ through Source::read_range, to its end (or until
  // the group shows the epoch resolved by someone else).
  void replay_by_range();
  // Before a replay reads or records anything: the consumer group must still
  // name the epoch pending on every partition it covers. False when it does
  // not (the epoch was resolved meanwhile; replay_ is dropped and the
  // epoch settled as the group says), or when the group cannot be read now.
  bool replay_still_owned();
  // --- failures
  void fail(const Error& error, const std::string& reason);
  void abort_loads(LoadMap& loads);
  void abort_open_epoch_for_replay();
  void rewind(const std::string& reason);
  // Seeks every assigned partition back to its epoch start (rewind()).
  void seek_to_epoch_starts(const std::string& reason);
  // After a fenced commit point: the deferred seeks once the group has
  // rebalanced (or the wait ran out); true when the batch just polled was
  // fetched before them and must be dropped.
  bool end_fenced_wait_if_due();
  void sleep_backoff(int attempt);
  // retry_blocking()'s hooks here: stop_ (or `stopped`) ends the retries,
  // a backoff is slept in slices with the heartbeat, `on_retry` (e.g. a
  // warning) runs before it.
  RetryHooks retry_hooks(std::function<void(const Error&, int)> on_retry = {},
                         std::function<bool()> stopped = {});
  // The consumer group's calls (group.cpp): for a minute, Fail retried too.
  RetryPolicy group_retry() const;
  // Probing and committing the labels of another member's epoch.
  RetryPolicy resolve_retry() const { return RetryPolicy{backoff_, 9}; }
  // --- table creation and schema evolution (table_ddl.cpp)
  enum class Prepared { Proceed, Skip, Stop };
  // Before a change's rows are placed: the target exists and has the columns
  // they carry, a DDL running between epochs if not. Skip: the record is a
  // bad record the policy skipped; Stop: it is not processed now (rewound,
  // or stopping).
  Prepared prepare_table(const Target& t, const kafka::Message& msg);
  // After prepare_table: the record's columns an applied rename moved, or null.
  const ColumnRenames* row_renames_ = nullptr;
  void rename_row_columns(const ColumnRenames& renames);
  // false: a row of the record does not fit its Doris column (a bad record,
  // handled) or the table's columns could not be read (failed).
  bool rows_fit(const Target& t, const kafka::Message& msg);
  // A VARCHAR too short for `v`'s value widened (Proceed) or refused (Skip,
  // the record handled by refuse()) or interrupted (Stop); nullopt: no
  // widening applies.
  // For a replay: whether the record's rows fit, without reading Doris more
  // than once, widening or handling a bad record (that happened when the
  // record was first read); true when the columns cannot be read.
  bool rows_fit_quietly(const Target& t);
  std::optional<Prepared> widen_for_value(const Target& t, TableDdl& td, const decode::RowViolation& v,
                                          const kafka::Message& msg);
  // A replayed record's renames (replays run no DDL, so prepare_table is not asked).
  const ColumnRenames* replay_renames(const Target& t);
  TableDdl& table_ddl(const Target& t);
  // The columns a row schema loads into the table: its fields under the
  // table's column transforms (excluded ones left out, renamed, case mapped).
  std::vector<schema::Column> loaded_columns(const decode::SchemaNode& row, const std::vector<std::string>& keys,
                                             const TableDdl& td) const;
  const decode::ColumnTransforms& transforms_of(const TableDdl& td) const {
    return td.settings.transforms ? *td.settings.transforms : decoder_.options().transforms;
  }
  std::optional<doris::DorisError> read_shape(const Target& t, TableDdl& td);
  Prepared run_ddl(const Target& t, TableDdl& td, std::vector<state::DdlStep> steps, const kafka::Message* msg,
                   const TruncateMark* truncate = nullptr);
  Prepared converge(state::DdlRecord& rec, TableDdl& td, const kafka::Message* msg);
  Prepared refuse(state::DdlRecord& rec, TableDdl& td, const std::string& statement, const std::string& why,
                  const kafka::Message* msg);
  Prepared schemaless_keys(const Target& t, TableDdl& td, const kafka::Message& msg);
  // A key-only delete row for a table that cannot take it (run_loop.cpp).
  enum class KeyOnly { Load, Skip, Failed };
  KeyOnly key_only_delete(const Target& target, const decode::Row& row);
  // auto_create of a table whose database is missing too: the database
  // first. nullopt when it exists now; else what becomes of the record.
  std::optional<Prepared> create_database(const Target& t, TableDdl& td, const schema::CreateOptions& opt,
                                          const kafka::Message& msg);
  // Waits until the table has no unfinished schema-change job in Doris (a
  // heavy ALTER runs as one); *cancelled gets a cancelled job's message.
  Prepared await_alter_job(const Target& t, const std::string& statement, std::string* cancelled);
  void report_once(const Target& t, TableDdl& td, const std::string& column, const std::string& what);
  // Recovery: DDL records still PENDING are brought to their end.
  void resume_ddl();
  // Recovery, first: schema versions and the truncates applied, from the DDL records.
  void load_ddl_state();
  // --- source TRUNCATE (truncate.cpp, docs/schema-evolution.md "TRUNCATE")
  void handle_truncate(const kafka::Message& msg, const Target& t);
  std::optional<TruncatePolicy> truncate_policy(const Target& t, TableDdl& td);
  // A truncate of t is applied (its record is DONE): td and the row filter learn it.
  void note_truncate(const Target& t, TableDdl& td, const state::DdlRecord& rec);
  // Whether the change just decoded (rows of t, read from msg) precedes an
  // applied truncate of t in source order: its rows are dropped.
  bool truncated_before(const Target& t, const kafka::Message& msg);
  // --- helpers
  std::optional<TableInfo> table_info(const Target& t, const TableSettings& s);
  std::optional<LoadMode> detect_mode(const Target& t, const TableSettings& s);
  int open_txns_in_db(const std::string& db) const;
  // Whether adding `added` to the open epoch could make its table list
  // exceed state::kMaxMetadataBytes.
  bool table_list_full(const Target& added) const;
  // delivery.open_transaction_budget, lowered for a database once Doris
  // refused a begin with its running-txn limit (max_running_txn_num_per_db,
  // shared with every other client of the database): an epoch that needs
  // more loads than Doris lets run would otherwise be retried forever.
  int txn_budget(const std::string& db) const;
  void note_txn_limit(const doris::DorisError& err, const std::string& db);
  std::map<std::string, int> txn_limit_budget_;
  state::EpochRecord make_record(uint64_t epoch, std::vector<state::TableTxn> txns, int64_t precommit_floor_ms) const;
  void publish_partitions();
  // Phase and epochs for /status; cheap unless something changed.
  void publish_state();
  void preset_metric_labels();
  void shutdown(RunResult& result);
  Clock::time_point stop_deadline();
  bool stop_deadline_passed();
  // A load cannot be placed because the closing epoch did not commit before
  // the shutdown deadline: abort the open epoch (it is re-read by the next start).
  void abort_open_epoch_stopping();

  PipelineConfig cfg_;
  Dependencies deps_;
  decode::Decoder decoder_;
  DorisColumnTypes column_types_;
  TableRouting routing_;
  decode::Change change_;
  // change_'s target and context (decode_record); nullptr: not routed.
  const RoutedTable* routed_ = nullptr;
  // Moves when a DDL the pipeline ran changed a table's columns, which type
  // schemaless records (DorisColumnTypes).
  uint64_t column_types_version_ = 0;
  std::shared_ptr<spdlog::logger> log_;
  Backoff backoff_;
  std::atomic<bool> stop_{false};

  uint64_t last_committed_epoch_ = 0;
  OpenEpoch open_;
  std::optional<ClosingEpoch> closing_;
  std::optional<Replay> replay_;
  // Per assigned partition: next offset to process, and where the open epoch
  // started (the rewind target: the end of the last recorded epoch).
  std::map<TopicPartition, int64_t> pos_;
  std::map<TopicPartition, int64_t> base_;
  TopicPartition current_tp_{"", -1};  // process(): the previous record's partition
  // process(): current_tp_'s entries of pos_ and base_ (null: not looked up
  // or absent). Map nodes stay put until erased, so a value assigned by a
  // rewind, an epoch end or an assignment is seen through them; every erase
  // goes through erase_position(), which drops them.
  int64_t* current_pos_ = nullptr;
  int64_t* current_base_ = nullptr;
  decode::KafkaRecord record_;  // process(): reused, its header vector keeps its capacity
  decode::KafkaRecord avro_record_;  // record_ as Connect JSON (Avro records)
  std::string_view current_topic_name_;  // the source's view of its topic name (librdkafka: one per topic)
  // End offsets of committed epochs, for partitions (re)assigned later.
  std::map<TopicPartition, int64_t> committed_;
  // Per assigned partition: where its current ownership began (the group's
  // offset then; INT64_MIN when it starts per auto.offset.reset). See
  // may_commit_end().
  std::map<TopicPartition, int64_t> owned_from_;
  std::map<Target, TableInfo> table_info_cache_;
  DdlTracking ddl_;
  // Per table with an applied truncate: which rows read from now on precede it.
  struct TruncateFilter {
    std::optional<int64_t> seq;  // the truncate's source position
    TopicPartition tp{"", -1};   // its record
    int64_t offset = -1;
    // Per other partition: the offset of its first row after it (the
    // partition is in source order from there on).
    std::map<TopicPartition, int64_t> passed;
  };
  std::map<Target, TruncateFilter> truncate_filters_;
  // Per table: the highest source position of its rows committed since this
  // process started (a truncate below it empties rows that follow it).
  std::map<Target, int64_t> committed_newest_seq_;
  uint64_t rewind_generation_ = 0;
  // Set when the group refused this member's generation at a commit point:
  // its partitions are probably another member's already (a zombie, paused
  // past its session). Seeking them back would re-read ranges their new
  // owners commit past, which retention may delete meanwhile (librdkafka
  // then reports an offset gap and leaves the partition in an error state
  // that fails the next seek). So the rewind's seeks wait for the rebalance
  // librdkafka starts on such a refusal, or until this deadline; records
  // polled meanwhile are dropped (issue 31, the group campaign).
  // librdkafka's session.timeout.ms is 45 s by default: a member whose
  // generation was refused hears of the rebalance at its next heartbeat, so a
  // full session plus a rebalance is ample.
  static constexpr std::chrono::seconds kFencedWaitFor{60};
  std::optional<Clock::time_point> fenced_wait_until_;
  bool rebalanced_since_fence_ = false;
  bool paused_ = false;
  bool subscribed_ = false;
  bool catching_up_ = false;  // a poll came at least half full since the last empty one (end_epoch_if_caught_up)
  int consecutive_failures_ = 0;
  std::optional<Error> failure_;  // what the next failure event is about
  std::optional<Clock::time_point> stop_deadline_;  // set once the stop request is seen
  bool closing_source_ = false;  // inside the final source.close()
  std::optional<Error> deferred_stop_;  // raised inside a rebalance callback
  kafka::GroupOffsetMap group_offsets_pending_;
  std::map<std::pair<std::string, uint64_t>, PendingFate> resolved_;  // pending epochs, by (prefix, epoch)
  Clock::time_point last_publish_{};  // committed during recovery, before subscribe
  std::string failure_reason_;
  std::string published_state_;  // publish_state(): what was published last, and when
  Clock::time_point last_state_publish_{};
};

}  // namespace cdc2doris::pipeline
