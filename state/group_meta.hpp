#pragma once
// The metadata string cdc2doris commits with each partition's offset to the
// Kafka consumer group (docs/architecture.md, "Multi-instance protocol").
//
// Three kinds, all starting with "c2d1 ":
//   pending   "c2d1 P <epoch> <end> <prefix> <tables> <floor>" — committed with the
//             epoch's *start* offset at the fenced commit point, before any
//             of its txns commits, on ONE partition of the epoch (the
//             anchor: the first partition with records in it). <tables>
//             lists what the epoch loaded so a new owner can derive every
//             label: "db:t1,t2*3;db2:t9" (a table with n > 1 parts is written
//             t*n; "t*3/0.2.1" when its parts commit in another order than
//             their labels' part numbers: the label parts in commit order).
//             The list is never cut: an epoch ends early (reason "table
//             list") before its list would exceed kMaxMetadataBytes, below
//             the broker's offset.metadata.max.bytes (4096 by default).
//             Written by older daemons on every partition, and with "?"
//             instead of a list that did not fit (still read).
//   reference "c2d1 R <epoch> <end> <prefix> <anchor topic> <anchor partition> <db>:<table> <floor>"
//             — the same commit point on every other partition with records
//             in the epoch: where the list is, and one table of the epoch
//             (the witness) whose label tells the epoch's fate once the
//             anchor moved on (a resolved epoch is all committed or all
//             aborted). Bounded by the names, whatever the table count.
//   <floor>   (both kinds) the writer's Unix ms taken before the epoch's
//             first pre-commit: no txn of the epoch was pre-committed
//             earlier, so none can have expired in Doris before <floor> +
//             the pre-commit timeout, and a label Doris no longer knows
//             before then was committed and forgotten (docs/architecture.md,
//             "Forgotten labels"). Absent in an older daemon's metadata.
//   committed "c2d1 C <epoch> <prefix>"                  — committed with the
//             end offset once every txn of the epoch committed.
// A daemon before the reference kind reads R as Legacy: every member of a
// group must run a version that knows it (docs/operations.md, "Upgrades").
// Anything else (empty, or an older daemon's "cdc2doris epoch N") is Legacy.
// Names are percent-encoded where they hold a separator, so any name round
// trips.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cdc2doris::state {

inline constexpr size_t kMaxMetadataBytes = 3900;

struct EpochTable {
  std::string db;
  std::string table;
  uint32_t parts = 1;  // labels part 0 .. parts-1
  // The labels' part numbers in commit order, when that is not 0, 1, ...:
  // a sequence-mode table commits its loads of full rows and deletes before
  // the partial ones, whatever order they were created (and labelled) in.
  std::vector<uint32_t> order;
  bool operator==(const EpochTable&) const = default;
};

struct GroupMeta {
  enum class Kind { Legacy, Pending, Committed, Reference };
  Kind kind = Kind::Legacy;
  uint64_t epoch = 0;
  int64_t end_offset = 0;  // Pending: the next offset after the epoch
  std::string label_prefix;
  std::vector<EpochTable> tables;  // Pending: sorted by (db, table)
  bool tables_listed = true;       // Pending: false for an older daemon's "?" (never written now)
  std::string anchor_topic;        // Reference: the partition holding the list
  int32_t anchor_partition = 0;
  EpochTable witness;              // Reference: one table of the epoch (parts unused)
  int64_t precommit_floor_ms = 0;  // Pending, Reference: <floor>; 0 when not given
  bool operator==(const GroupMeta&) const = default;
};

// Pending metadata with the whole table list (the caller keeps it within
// kMaxMetadataBytes, see table_list_bytes()).
std::string encode_pending(uint64_t epoch, int64_t end_offset, std::string_view prefix,
                           const std::vector<EpochTable>& tables, int64_t precommit_floor_ms);
std::string encode_reference(uint64_t epoch, int64_t end_offset, std::string_view prefix,
                             std::string_view anchor_topic, int32_t anchor_partition, const EpochTable& witness,
                             int64_t precommit_floor_ms);
// Bytes of pending metadata for these tables, with room for every table to
// grow to `max_parts` parts, and for a commit order where a table's `order`
// is non-empty (any value: it marks a table that may need one): what may
// still be added to an open epoch.
size_t pending_bytes_bound(uint64_t epoch, int64_t end_offset, std::string_view prefix,
                           const std::vector<EpochTable>& tables, uint32_t max_parts);
std::string encode_committed(uint64_t epoch, std::string_view prefix);
// Legacy for anything that is not a well-formed c2d1 string.
GroupMeta decode_group_meta(std::string_view s);

}  // namespace cdc2doris::state
