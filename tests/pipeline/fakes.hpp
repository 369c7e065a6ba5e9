#pragma once
// In-memory fakes of the pipeline's seams (Kafka source, Doris client, dead
// letter queue) for fast, deterministic unit tests of pipeline::Pipeline.
//
// Threads: the pipeline runs on its own thread; tests inspect the fakes and
// turn fault knobs from the test thread. Every fake guards its state with a
// mutex, and no lock is held while a fake calls back into the pipeline
// (RebalanceListener), so the pipeline may call the fake from its callbacks.
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/doris/client.hpp"
#include "core/kafka/dlq.hpp"
#include "core/kafka/source.hpp"
#include "tests/pipeline/explicit_router.hpp"

namespace cdc2doris::test {

// ------------------------------------------------------------------ Kafka

class FakeSource final : public kafka::Source {
 public:
  struct Stored {
    std::optional<std::string> key;
    std::optional<std::string> value;
  };
  struct Stats {
    int polls = 0;
    int subscribes = 0;
    int closes = 0;
    int assigns = 0;
    int revokes = 0;
    int pauses = 0;
    int resumes = 0;
    int commits = 0;
    std::vector<std::pair<kafka::TopicPartition, int64_t>> seeks;
  };

  // --- data
  void add_topic(const std::string& topic, int partitions);
  int64_t produce(const std::string& topic, int32_t partition, std::optional<std::string> key,
                  std::optional<std::string> value);
  // All of them visible to the next poll together (a backlog, not a trickle).
  void produce_at_once(std::vector<std::pair<kafka::TopicPartition, Stored>> records);
  int64_t end_offset(const kafka::TopicPartition& tp) const;
  std::vector<kafka::TopicPartition> partitions() const;  // every partition of every topic
  std::vector<Stored> messages(const kafka::TopicPartition& tp) const;

  // --- behaviour
  // At most this many messages per partition in one poll (interleaves partitions).
  void set_chunk_per_partition(size_t n);
  // The next poll returns `e` in PollResult::errors; with_batch: together
  // with the messages it fetches, else with an empty batch.
  void inject_poll_error(Error e, bool with_batch = false);
  // At the `after_polls`-th poll from now: on_revoke(tps, lost) inside poll,
  // then the partitions are unassigned; reassign_after_polls >= 0: they are
  // assigned again (on_assign) that many polls later.
  void schedule_revoke(std::vector<kafka::TopicPartition> tps, bool lost, int after_polls = 0,
                       int reassign_after_polls = 1);
  // The next n commits carrying a generation are refused as fenced (this
  // member was rebalanced away); nothing is written, and the member rejoins
  // at the next poll (see rejoin_pending_). on_fence runs (on the
  // committing thread) at each refusal: what other members do meanwhile.
  void fence_next_group_commits(int n, std::function<void()> on_fence = {});
  kafka::GroupOffsetMap group_committed_with_metadata() const;
  // Every offset a commit_group() call wrote for tp, in order.
  std::vector<int64_t> group_commits(const kafka::TopicPartition& tp) const;
  // Writes the group's offset + metadata directly (another member's commit).
  void set_group_offset(const kafka::TopicPartition& tp, kafka::GroupOffset go);
  // The next n seeks fail with `e`; the fetch position stays where it was.
  void fail_next_seeks(int n, Error e);
  // Runs on the poll thread right after on_revoke returned.
  void set_after_revoke(std::function<void(const std::vector<kafka::TopicPartition>&, bool lost)> hook);

  // Retention: offsets below `offset` are gone as far as watermarks()
  // reports (poll() still serves them: the pipeline must not ask).
  void set_log_start(const kafka::TopicPartition& tp, int64_t offset);
  // The log cleaner removed the record at `offset` (compaction: a later
  // record has its key); its offset stays taken, nothing serves it.
  void compact(const kafka::TopicPartition& tp, int64_t offset);
  // The topic deleted and created again, empty: its records and the group's
  // offsets for it are gone (what the broker does on a topic deletion).
  void recreate_topic(const std::string& topic);

  // --- inspection
  Stats stats() const;
  kafka::OffsetMap group_committed() const;
  kafka::OffsetMap positions() const;
  std::set<kafka::TopicPartition> paused() const;
  bool closed() const;
  // Blocks until pred() holds, re-checking after every poll (bounded).
  bool wait_for(const std::function<bool()>& pred, std::chrono::milliseconds timeout);

  // --- kafka::Source
  void subscribe(kafka::RebalanceListener& listener) override;
  kafka::PollResult poll(std::chrono::milliseconds timeout, size_t max_messages) override;
  std::optional<Error> seek(const kafka::TopicPartition& tp, int64_t offset, std::chrono::milliseconds timeout) override;
  std::optional<Error> pause(const std::vector<kafka::TopicPartition>& tps) override;
  std::optional<Error> resume(const std::vector<kafka::TopicPartition>& tps) override;
  std::optional<Error> commit(const kafka::OffsetMap& offsets, const std::string& metadata) override;
  kafka::CommitResult commit_group(const kafka::GroupOffsetMap& offsets) override;
  std::variant<kafka::GroupOffsetMap, Error> committed_group(const std::vector<kafka::TopicPartition>& tps,
                                                             std::chrono::milliseconds timeout) override;
  std::variant<kafka::OffsetMap, Error> committed(const std::vector<kafka::TopicPartition>& tps,
                                                  std::chrono::milliseconds timeout) override;
  std::variant<kafka::WatermarkMap, Error> watermarks(const std::vector<kafka::TopicPartition>& tps,
                                                      std::chrono::milliseconds timeout) override;
  std::vector<kafka::TopicPartition> assignment() override;
  std::vector<kafka::PartitionLag> lag() override;
  bool can_read_range() const override { return range_reader_; }
  std::optional<Error> read_range(const Ranges& ranges, const std::function<void(const kafka::Message&)>& fn,
                                  std::chrono::milliseconds timeout) override;
  // Without it the source behaves like one that cannot read outside its
  // assignment (the pipeline replays through the subscribed consumer).
  void set_range_reader(bool on) { range_reader_ = on; }
  int range_reads() const;
  std::optional<Error> close(std::chrono::milliseconds timeout) override;

 private:
  struct Action {
    enum Kind { Revoke, Assign } kind;
    std::vector<kafka::TopicPartition> tps;
    bool lost = false;
    int at_poll = 0;
    int reassign_after = -1;
  };
  void assign(kafka::RebalanceListener& l, const std::vector<kafka::TopicPartition>& tps);
  void revoke(kafka::RebalanceListener& l, const std::vector<kafka::TopicPartition>& tps, bool lost);
  void notify_poll();

  mutable std::mutex mu_;
  std::condition_variable data_cv_;
  std::map<kafka::TopicPartition, std::vector<std::shared_ptr<const Stored>>> log_;
  std::map<kafka::TopicPartition, int64_t> pos_;  // assigned partitions -> next fetch offset
  std::set<kafka::TopicPartition> paused_;
  kafka::OffsetMap group_;
  kafka::OffsetMap log_start_;
  std::map<kafka::TopicPartition, std::string> group_meta_;
  std::map<kafka::TopicPartition, std::vector<int64_t>> group_commits_;
  int fence_commits_ = 0;
  // A refused generation makes librdkafka rejoin: the next poll without a
  // scheduled revoke calls back as a cooperative rejoin that keeps the
  // assignment does (RebalanceListener::on_rebalance only).
  bool rejoin_pending_ = false;
  std::function<void()> on_fence_;
  kafka::RebalanceListener* listener_ = nullptr;
  bool assigned_once_ = false;
  bool closed_ = false;
  size_t chunk_ = 3;
  std::deque<std::pair<Error, bool>> errors_;
  int seek_failures_ = 0;
  bool range_reader_ = true;
  int range_reads_ = 0;
  std::optional<Error> seek_error_;
  std::vector<Action> actions_;
  std::function<void(const std::vector<kafka::TopicPartition>&, bool)> after_revoke_;
  Stats stats_;

  std::mutex poll_mu_;
  std::condition_variable poll_cv_;
  uint64_t poll_seq_ = 0;
};

class FakeDlq final : public kafka::DeadLetterQueue {
 public:
  struct Letter {
    std::string topic;
    std::string source_topic;
    int32_t partition = 0;
    int64_t offset = 0;
    std::optional<std::string> value;
    std::string error;
    bool flushed = false;
    bool lost = false;  // its delivery failed (fail_next_flush): it never arrives
  };
  std::optional<Error> produce(const std::string& topic, const kafka::Message& original,
                               const std::string& error_text) override;
  std::optional<Error> flush(std::chrono::milliseconds timeout) override;
  std::vector<Letter> letters() const;
  int flushes() const;
  // Runs inside flush(), before the letters count as flushed.
  void set_on_flush(std::function<void()> hook);
  // The next flush reports `e`: the letters not yet flushed were not
  // delivered and never will be (librdkafka does not retry a failed delivery).
  void fail_next_flush(Error e);

 private:
  mutable std::mutex mu_;
  std::vector<Letter> letters_;
  int flushes_ = 0;
  std::function<void()> on_flush_;
  std::optional<Error> fail_flush_;
};

// ------------------------------------------------------------------ Doris

enum class TxnState { Prepare, Precommitted, Committed, Aborted };
const char* to_string(TxnState s);

class FakeDoris;

class FakeLoadStream final : public doris::LoadStream {
 public:
  FakeLoadStream(FakeDoris& doris, doris::LoadSpec spec) : doris_(doris), spec_(std::move(spec)) {}
  ~FakeLoadStream() override;
  doris::DorisResult<void> write(std::string_view rows) override;
  doris::DorisResult<doris::LoadResult> finish() override;
  void cancel() override;
  size_t buffered_bytes() const override { return 0; }
  const doris::LoadSpec& spec() const override { return spec_; }

 private:
  std::optional<doris::DorisError> begin();  // creates the txn on the first write/finish
  FakeDoris& doris_;
  doris::LoadSpec spec_;
  int64_t txn_id_ = -1;
  std::string body_;
  std::optional<doris::DorisError> failed_;
  bool done_ = false;
};

class FakeDoris final : public doris::DorisClient {
 public:
  struct Txn {
    int64_t id = 0;
    std::string db, table, label;
    TxnState state = TxnState::Prepare;
    std::vector<std::string> rows;
    std::map<std::string, std::string> headers;  // the load's extra headers (LoadSpec::headers)
    bool forgotten = false;  // Doris dropped it and its label (label_num_threshold): unknown to every call
  };
  struct Table {
    bool unique = true;
    std::map<std::string, std::string> rows;  // UNIQUE: key text -> row (no delete sign)
    std::vector<std::string> dup_rows;        // DUPLICATE: every row as loaded
    std::vector<doris::ColumnSchema> columns;  // what schema() reports
  };
  struct Stats {
    int streams_opened = 0;
    int writes = 0;
    int finishes = 0;
    int commits = 0;          // commit calls (any outcome)
    int aborts = 0;           // txns moved to ABORTED by an abort call
    int probes = 0;
    int label_conflicts = 0;  // "Label Already Exists" answers
    std::vector<std::string> lost_labels;  // txns lose_next_commit() made Doris abort
    std::map<std::string, int> max_open_per_db;  // PREPARE + PRECOMMITTED at once
  };

  // The model of a table: UNIQUE upserts/deletes by key (__DORIS_DELETE_SIGN__), DUPLICATE appends.
  static void apply_row(Table& table, const std::string& row);

  // --- schema
  void add_table(const std::string& db, const std::string& table, bool unique);
  // Columns schema() reports for a table (none by default).
  void set_columns(const std::string& db, const std::string& table, std::vector<doris::ColumnSchema> columns);

  // --- seeding (state left by an "earlier run")
  int64_t seed_txn(const std::string& db, const std::string& table, const std::string& label, TxnState state,
                   std::vector<std::string> rows = {});
  // Doris aborts a txn by itself (pre-commit timeout, expiry).
  void expire_txn(int64_t txn_id);
  // Doris forgets a finished (committed or aborted) txn and its label
  // (label_num_threshold): unknown to every call from now on.
  void forget_txn(int64_t txn_id);

  // --- fault knobs (each consumed by one call; `table` empty = any table)
  void fail_next_writes(int n, doris::DorisError e, const std::string& table = "", int after_ok = 0);
  void fail_next_finishes(int n, doris::DorisError e, const std::string& table = "");
  void fail_next_commits(int n, doris::DorisError e);
  void fail_all_commits(std::optional<doris::DorisError> e);  // until reset with nullopt
  // The next commit of `table`'s txn finds it aborted by Doris: NotFoundOrAborted.
  void lose_next_commit(const std::string& table);
  // The next commit of `table`'s txn goes through (its rows are applied), its
  // answer is lost and Doris forgets the txn and its label before the retry
  // (FE label_num_threshold): the commit answers "not found", the label probe "unused".
  void forget_next_commit(const std::string& table);
  // The next `n` label probes of `table` find the label held by another
  // member's probe of it (a txn of its own, begun and aborted at once):
  // Label Already Exists, RUNNING.
  void busy_next_probes(const std::string& table, int n);
  // Commits of `table`'s txns answer after `delay` (on another thread), so a
  // non-blocking collection round sees them still running.
  void delay_commits(const std::string& table, std::chrono::milliseconds delay);
  void heal();  // clears every knob

  // Retention: offsets below `offset` are gone as far as watermarks()
  // reports (poll() still serves them: the pipeline must not ask).
  void set_log_start(const kafka::TopicPartition& tp, int64_t offset);
  // The topic deleted and created again, empty: its records and the group's
  // offsets for it are gone (what the broker does on a topic deletion).
  void recreate_topic(const std::string& topic);

  // --- inspection
  Stats stats() const;
  std::vector<Txn> txns() const;
  std::optional<Txn> txn_by_label(const std::string& db, const std::string& label) const;
  int open_txns(const std::string& db) const;  // PREPARE + PRECOMMITTED now
  Table table(const std::string& db, const std::string& table) const;
  std::map<std::string, Table> tables() const;  // "db.table"

  // --- doris::DorisClient
  std::unique_ptr<doris::LoadStream> open_load(doris::LoadSpec spec) override;
  std::future<doris::TxnResult> commit_async(const std::string& db, int64_t txn_id) override;
  std::future<doris::TxnResult> abort_async(const std::string& db, int64_t txn_id) override;
  std::future<doris::TxnResult> commit_by_label_async(const std::string& db, const std::string& label) override;
  std::future<doris::TxnResult> abort_by_label_async(const std::string& db, const std::string& label) override;
  doris::DorisResult<doris::LabelState> probe_label(const doris::LoadSpec& spec) override;
  doris::DorisResult<doris::TableSchema> schema(const std::string& db, const std::string& table) override;
  doris::DorisResult<doris::SqlResult> sql(const std::string& db, const std::string& stmt) override;

 private:
  friend class FakeLoadStream;
  struct Fault {
    int remaining = 0;
    int skip = 0;
    std::string table;
    std::optional<doris::DorisError> error;
  };
  static std::optional<doris::DorisError> take(std::vector<Fault>& faults, const std::string& table);
  // Stream side (called by FakeLoadStream).
  doris::DorisResult<int64_t> begin_txn(const doris::LoadSpec& spec);
  std::optional<doris::DorisError> on_write(const doris::LoadSpec& spec);
  doris::DorisResult<doris::LoadResult> precommit(const doris::LoadSpec& spec, int64_t txn_id,
                                                               const std::string& body);
  doris::TxnResult commit_locked(Txn& t);
  doris::TxnResult abort_locked(Txn& t);
  void track_open_locked(const std::string& db);
  Txn* find_label_locked(const std::string& db, const std::string& label);
  void apply_locked(const Txn& t);

  mutable std::mutex mu_;
  std::map<std::string, Table> tables_;
  std::map<int64_t, Txn> txns_;
  int64_t next_txn_ = 1000;
  std::vector<Fault> write_faults_, finish_faults_, commit_faults_;
  std::optional<doris::DorisError> all_commits_fail_;
  std::multiset<std::string> lose_;
  std::multiset<std::string> forget_;
  std::multiset<std::string> busy_probes_;
  std::map<std::string, std::chrono::milliseconds> commit_delays_;
  Stats stats_;
};

}  // namespace cdc2doris::test
