#pragma once
// The metadata string cdc2doris commits with each partition's offset to the
// Kafka consumer group (docs/architecture.md, "Multi-instance protocol").
//
// Two kinds, both starting with "c2d1 ":
//   pending   "c2d1 P <epoch> <end> <prefix> <tables>"  — committed with the
//             epoch's *start* offset at the fenced commit point, before any
//             of its txns commits. <tables> lists what the epoch loaded so a
//             new owner can derive every label: "db:t1,t2*3;db2:t9" (a table
//             with n > 1 parts is written t*n; "t*3/0.2.1" when its parts
//             commit in another order than their labels' part numbers, the
//             label parts in commit order), or "?" when the list would
//             not fit into the broker's offset.metadata.max.bytes (4096 by
//             default; kMaxMetadataBytes keeps well below it).
//   committed "c2d1 C <epoch> <prefix>"                  — committed with the
//             end offset once every txn of the epoch committed.
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
  enum class Kind { Legacy, Pending, Committed };
  Kind kind = Kind::Legacy;
  uint64_t epoch = 0;
  int64_t end_offset = 0;  // Pending: the next offset after the epoch
  std::string label_prefix;
  std::vector<EpochTable> tables;  // Pending: sorted by (db, table)
  bool tables_listed = true;       // Pending: false when the list did not fit ("?")
  bool operator==(const GroupMeta&) const = default;
};

// Pending metadata; drops the table list ("?") when the result would exceed
// max_bytes.
std::string encode_pending(uint64_t epoch, int64_t end_offset, std::string_view prefix,
                           const std::vector<EpochTable>& tables, size_t max_bytes = kMaxMetadataBytes);
std::string encode_committed(uint64_t epoch, std::string_view prefix);
// Legacy for anything that is not a well-formed c2d1 string.
GroupMeta decode_group_meta(std::string_view s);

}  // namespace cdc2doris::state
