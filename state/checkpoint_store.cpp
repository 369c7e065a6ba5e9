#include "state/checkpoint_store.hpp"

#include <algorithm>
#include <stdexcept>

#include "state/detail.hpp"

namespace cdc2doris::state {

CheckpointStore::~CheckpointStore() = default;

const char* to_string(EpochState s) {
  switch (s) {
    case EpochState::Precommitted: return "PRECOMMITTED";
    case EpochState::Committed: return "COMMITTED";
    case EpochState::Aborted: return "ABORTED";
  }
  return "UNKNOWN";
}

const char* to_string(StateError::Kind k) {
  switch (k) {
    case StateError::Kind::Locked: return "locked";
    case StateError::Kind::Corrupt: return "corrupt";
    case StateError::Kind::NewerFormat: return "newer-format";
    case StateError::Kind::Io: return "io";
    case StateError::Kind::NotFound: return "not-found";
    case StateError::Kind::InvalidTransition: return "invalid-transition";
  }
  return "unknown";
}

bool is_transition_valid(EpochState from, EpochState to) {
  switch (from) {
    case EpochState::Precommitted:
      return true;  // to Committed/Aborted, or rewritten by a replay
    case EpochState::Aborted:
      return to == EpochState::Aborted || to == EpochState::Precommitted;
    case EpochState::Committed:
      return to == EpochState::Committed;
  }
  return false;
}

namespace detail {

EpochRecord normalized(const EpochRecord& rec) {
  EpochRecord r = rec;
  std::sort(r.txns.begin(), r.txns.end(), [](const TableTxn& a, const TableTxn& b) {
    return std::tie(a.db, a.table, a.part) < std::tie(b.db, b.table, b.part);
  });
  for (size_t i = 1; i < r.txns.size(); ++i) {
    if (r.txns[i].db == r.txns[i - 1].db && r.txns[i].table == r.txns[i - 1].table &&
        r.txns[i].part == r.txns[i - 1].part) {
      throw std::invalid_argument("epoch " + std::to_string(r.epoch) + " lists table " + r.txns[i].db + "." +
                                  r.txns[i].table + " part " + std::to_string(r.txns[i].part) + " twice");
    }
  }
  std::sort(r.partitions.begin(), r.partitions.end(), [](const PartitionRange& a, const PartitionRange& b) {
    return std::tie(a.topic, a.partition) < std::tie(b.topic, b.partition);
  });
  for (size_t i = 0; i < r.partitions.size(); ++i) {
    const auto& p = r.partitions[i];
    if (i > 0 && p.topic == r.partitions[i - 1].topic && p.partition == r.partitions[i - 1].partition) {
      throw std::invalid_argument("epoch " + std::to_string(r.epoch) + " lists partition " + p.topic + "[" +
                                  std::to_string(p.partition) + "] twice");
    }
    if (p.end_offset < p.start_offset) {
      throw std::invalid_argument("epoch " + std::to_string(r.epoch) + " partition " + p.topic + "[" +
                                  std::to_string(p.partition) + "] ends before it starts");
    }
  }
  return r;
}

void check_transition(uint64_t epoch, EpochState from, EpochState to) {
  if (!is_transition_valid(from, to)) {
    throw StateError(StateError::Kind::InvalidTransition, std::string("epoch ") + std::to_string(epoch) +
                                                              " cannot go from " + to_string(from) + " to " +
                                                              to_string(to));
  }
}

}  // namespace detail
}  // namespace cdc2doris::state
