#pragma once
// The Doris half of `cdc2doris state abort-lingering`: walks a retired
// instance's labels with the walker recovery uses (core/doris/
// lingering_walk.hpp) and aborts every RUNNING/PRECOMMITTED txn found.
#include <cstdint>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "core/doris/client.hpp"

namespace cdc2doris::daemon {

struct LingeringTable {
  std::string db;
  std::string table;
  std::string sequence_col;
};

struct AbortLingering {
  std::string prefix;
  uint64_t from_epoch = 1;
  std::set<uint64_t> pending;  // epochs the consumer group names as pending: their owner commits them
  std::vector<LingeringTable> tables;
};

// Prints each abort to `out` and failures to `err`; returns an exit code
// (kExitOk, or kExitFatal on a Doris error).
int abort_lingering_txns(doris::DorisClient& client, const AbortLingering& what, std::ostream& out,
                         std::ostream& err);

}  // namespace cdc2doris::daemon
