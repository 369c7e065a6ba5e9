#pragma once
// Durable record of checkpoint epochs (issue 6 §3, §5, §9).
//
// An epoch is written once, atomically and synced, after every table's load
// is pre-committed and before any txn is committed ("persist intent before
// the side effect"). Recovery reads it back to finish, replay or clean up.
//
// State machine of an epoch (validated by is_transition_valid):
//
//   put_epoch ──► Precommitted ──set_state──► Committed   (terminal)
//                     │    ▲
//                     │    └── put_epoch again (replay: new txn ids, same epoch)
//                     └──set_state──► Aborted ──put_epoch──► Precommitted
//
// Committed is terminal: rewriting a committed epoch is a bug in the caller
// and is refused with StateError(kind=InvalidTransition).
//
// Thread safety: implementations are safe to call from several threads (the
// RocksDB store serialises writes with a mutex), but the pipeline is expected
// to use one writer.
#include <compare>
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/common/error.hpp"

namespace cdc2doris::state {

struct TableTxn {
  std::string db;
  std::string table;
  std::string label;
  int64_t txn_id = 0;
  bool committed = false;  // set by mark_txn_committed; recovery skips it
  // A table may hold several loads in one epoch (column-set changes, see
  // docs/architecture.md); they commit in ascending `part`, each only after
  // the one before it. Records of format 1 hold part 0 only.
  uint32_t part = 0;
  bool operator==(const TableTxn&) const = default;
};

struct PartitionRange {
  std::string topic;
  int32_t partition = 0;
  int64_t start_offset = 0;  // first offset of the epoch
  int64_t end_offset = 0;    // next offset to read after the epoch
  bool operator==(const PartitionRange&) const = default;
};

enum class EpochState : uint8_t { Precommitted = 1, Committed = 2, Aborted = 3 };
const char* to_string(EpochState s);
bool is_transition_valid(EpochState from, EpochState to);

struct EpochRecord {
  uint64_t epoch = 0;
  std::string label_prefix;
  EpochState state = EpochState::Precommitted;
  std::vector<TableTxn> txns;              // sorted by (db, table, part) when read back
  std::vector<PartitionRange> partitions;  // sorted by (topic, partition) when read back
  // Taken before the epoch's first pre-commit: no txn of it was pre-committed
  // earlier, so none expires in Doris before this + its pre-commit timeout.
  int64_t created_unix_ms = 0;
  bool operator==(const EpochRecord&) const = default;
};

struct TopicPartition {
  std::string topic;
  int32_t partition = 0;
  auto operator<=>(const TopicPartition&) const = default;
};

struct CommittedOffset {
  int64_t offset = 0;  // next offset to read
  uint64_t epoch = 0;  // the committed epoch that produced it
  bool operator==(const CommittedOffset&) const = default;
};

struct TableKey {
  std::string db;
  std::string table;
  auto operator<=>(const TableKey&) const = default;
};

// Every label prefix ever used, with the epoch range it was used for, so that
// lingering txns of an old prefix are still found after a prefix change.
struct LabelPrefixUse {
  std::string prefix;
  uint64_t first_epoch = 0;
  uint64_t last_epoch = 0;
  bool operator==(const LabelPrefixUse&) const = default;
};

// A schema change of one Doris table (issue 15), recorded before its first
// statement runs and marked when Doris has the new shape, so a restart at
// any point converges (docs/schema-evolution.md). One record per table: the
// newest; `version` counts the changes applied to the table so far.
enum class DdlState : uint8_t { Pending = 1, Done = 2, Refused = 3 };
const char* to_string(DdlState s);

struct DdlStep {
  // core/schema's OpKind (0 add, 1 drop, 2 rename, 3 modify), 4: create
  // table, 5: truncate (`arg` then names the record that asked for it,
  // `topic[partition]@offset`).
  uint8_t kind = 0;
  std::string column;     // add/drop/rename/modify: the column
  std::string arg;        // add/modify: the Doris type; rename: the new name
  std::string statement;  // the SQL sent to Doris
  bool operator==(const DdlStep&) const = default;
};

struct DdlRecord {
  std::string db;
  std::string table;
  uint64_t version = 0;  // 1 for the table's first change
  DdlState state = DdlState::Pending;
  uint64_t epoch = 0;    // the first epoch whose rows have the new shape
  std::vector<DdlStep> steps;
  std::string error;     // Refused: Doris' answer
  int64_t created_unix_ms = 0;
  // The newest TRUNCATE applied to the table (carried over by the table's
  // later records; docs/schema-evolution.md, "TRUNCATE"): its source position
  // (decode::SourcePosition::sequence(), when the connector has one) and the
  // Kafka record, `topic[partition]@offset`. A truncate at or before it is
  // not run again; rows of other partitions before it are dropped.
  std::optional<int64_t> truncate_seq;
  std::string truncate_at;
  bool operator==(const DdlRecord&) const = default;
};

// Thrown for every store failure. All are fatal to the daemon (the state is
// the source of truth for exactly-once); the kind lets the CLI print advice.
class StateError : public std::runtime_error {
 public:
  enum class Kind {
    Locked,             // another process holds the state directory
    Corrupt,            // checksum mismatch, undecodable value, missing format key
    NewerFormat,        // written by a newer cdc2doris
    Io,                 // open/read/write failed (disk full, permissions)
    NotFound,           // set_state/mark_txn_committed on an unknown epoch or table
    InvalidTransition,  // e.g. rewriting a Committed epoch
  };
  StateError(Kind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  Kind kind() const { return kind_; }
  Error to_error() const { return Error(Disposition::Fatal, what()); }

 private:
  Kind kind_;
};
const char* to_string(StateError::Kind k);

class CheckpointStore {
 public:
  virtual ~CheckpointStore();

  // One atomic, synced write of the whole record (state taken from the
  // record, normally Precommitted). Also records the label prefix and the
  // highest epoch per table. Rewriting an existing non-committed epoch
  // replaces it completely (used by replay).
  virtual void put_epoch(const EpochRecord& rec) = 0;

  // Synced. Committed also advances the per-partition committed offsets to
  // the epoch's end offsets (never backwards) and prunes epochs beyond the
  // retention, in the same atomic batch. Setting the current state again is a
  // no-op.
  virtual void set_state(uint64_t epoch, EpochState state) = 0;

  // Cheap, between table commits: one small write, WAL but not fsync'd. A
  // crash can lose the mark; recovery then commits the txn again, which Doris
  // answers with "already committed".
  virtual void mark_txn_committed(uint64_t epoch, const std::string& db, const std::string& table,
                                  uint32_t part = 0) = 0;

  virtual std::optional<EpochRecord> latest() = 0;  // highest epoch, any state
  virtual std::optional<EpochRecord> get(uint64_t epoch) = 0;
  virtual std::vector<EpochRecord> list() = 0;      // ascending by epoch

  // Next offset to read per partition, as of the newest Committed epoch that
  // covered the partition. A partition absent from later epochs keeps its
  // last committed offset.
  virtual std::map<TopicPartition, CommittedOffset> committed_offsets() = 0;
  virtual std::vector<LabelPrefixUse> label_prefixes() = 0;
  // Highest epoch ever written per table (any state): lingering-txn probing
  // starts after the last epoch recovery resolved and stops past this one.
  virtual std::map<TableKey, uint64_t> table_epochs() = 0;

  // Deletes everything (`cdc2doris state reset`); the format key is kept.
  virtual void reset() = 0;

  // Synced; replaces the table's DDL record. A store written before DDL
  // records existed simply has none.
  virtual void put_ddl(const DdlRecord& rec) = 0;
  virtual std::vector<DdlRecord> ddl_records() = 0;  // by (db, table)
};

}  // namespace cdc2doris::state
