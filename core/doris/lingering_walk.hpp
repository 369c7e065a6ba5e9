#pragma once
// The walk over the labels of one label prefix and table that may hold
// lingering txns. Start-up recovery and `cdc2doris state abort-lingering`
// both use it, so the operator command never leaves a txn that recovery
// would have aborted (issue 32: they walked by different rules).
//
//   epoch first_epoch:  part 0, part 1, part 2, ...  until a part is unused
//   epoch first_epoch+1: ...                          while the epoch before
//   ...                                               had any label in use
//
// Part 0 unused does not end an epoch's walk: part n is begun after part
// n-1, but a stream's first bytes may reach Doris in another order, so part
// 1 can hold a txn while part 0 holds none. Epochs the caller skips (e.g.
// ones the consumer group names as pending: their owner commits them) are
// passed over without probing and do not end the walk. Every probe counts
// against max_labels; a table Doris does not know ends the walk (it holds
// no txns).
#include <cstdint>
#include <functional>
#include <string>
#include <variant>

#include "core/doris/client.hpp"

namespace cdc2doris::doris {

// Probes per walk unless the caller says otherwise: an instance that crashed
// mid-epoch leaves at most its tables' parts of one or two epochs.
inline constexpr int kDefaultLabelWalkProbes = 1000;

struct LabelWalk {
  std::string prefix;
  std::string db;
  std::string table;
  std::string sequence_col;  // a table with a (hidden) sequence column refuses loads that do not name it
  uint64_t first_epoch = 1;
  int max_probes = kDefaultLabelWalkProbes;
  std::function<bool(uint64_t epoch)> skip_epoch;  // optional
};

struct LabelInUse {
  std::string label;
  uint64_t epoch = 0;
  uint32_t part = 0;
  LabelState state;  // never Unused
};

enum class WalkNext { Continue, Stop };

struct WalkSummary {
  size_t probed = 0;
  uint64_t last_epoch = 0;  // the epoch the walk ended in
  bool table_unknown = false;
  bool budget_spent = false;
  bool stopped = false;  // on_in_use said Stop
};

// Calls on_in_use for every label in use, in walk order. Fails with the
// probe's error (other than an unknown table).
DorisResult<WalkSummary> walk_labels(DorisClient& client, const LabelWalk& walk,
                                                  const std::function<WalkNext(const LabelInUse&)>& on_in_use);

}  // namespace cdc2doris::doris
