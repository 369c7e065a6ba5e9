#pragma once
// Rules shared by every CheckpointStore implementation, so the RocksDB store
// and the in-memory fake cannot drift apart.
#include <string>
#include <string_view>

#include "state/checkpoint_store.hpp"

namespace cdc2doris::state::detail {

// Sorts txns by (db, table) and partitions by (topic, partition); throws
// std::invalid_argument on a duplicate table or partition or an end offset
// before its start offset.
EpochRecord normalized(const EpochRecord& rec);

// Throws StateError(InvalidTransition) if an existing epoch may not become
// `to` (put_epoch over a Committed epoch, or an invalid set_state).
void check_transition(uint64_t epoch, EpochState from, EpochState to);

// Epochs to prune: the terminal ones (Committed/Aborted) among `epochs`
// (ascending, with states) that are older than the newest `retain`.
template <class Range, class StateOf>
std::vector<uint64_t> to_prune(const Range& epochs, size_t retain, StateOf state_of) {
  std::vector<uint64_t> out;
  size_t n = epochs.size();
  if (n <= retain) return out;
  size_t i = 0;
  for (const auto& e : epochs) {
    if (i++ >= n - retain) break;
    EpochState s = state_of(e);
    if (s == EpochState::Committed || s == EpochState::Aborted) out.push_back(e.first);
  }
  return out;
}

// A DDL record's value (ddl_record.cpp; the key holds db and table). Decoding
// throws codec::DecodeError.
std::string encode_ddl(const DdlRecord& rec);
DdlRecord decode_ddl(std::string_view value);

}  // namespace cdc2doris::state::detail
