#include "state/memory_store.hpp"

#include <algorithm>

#include "state/detail.hpp"

namespace cdc2doris::state {

void MemoryCheckpointStore::before_write() {
  if (fail_writes_ > 0) {
    --fail_writes_;
    throw StateError(StateError::Kind::Io, "injected write failure (MemoryCheckpointStore)");
  }
}

void MemoryCheckpointStore::fail_next_writes(int count) {
  std::lock_guard lk(mu_);
  fail_writes_ = count;
}

size_t MemoryCheckpointStore::write_count() const {
  std::lock_guard lk(mu_);
  return writes_;
}

void MemoryCheckpointStore::put_epoch(const EpochRecord& rec_in) {
  EpochRecord rec = detail::normalized(rec_in);
  std::lock_guard lk(mu_);
  if (auto it = epochs_.find(rec.epoch); it != epochs_.end()) {
    detail::check_transition(rec.epoch, it->second.state, rec.state);
  }
  before_write();
  auto [pit, inserted] = prefixes_.try_emplace(rec.label_prefix, LabelPrefixUse{rec.label_prefix, rec.epoch, rec.epoch});
  if (!inserted) {
    pit->second.first_epoch = std::min(pit->second.first_epoch, rec.epoch);
    pit->second.last_epoch = std::max(pit->second.last_epoch, rec.epoch);
  }
  for (const auto& t : rec.txns) {
    auto& e = table_epochs_[TableKey{t.db, t.table}];
    e = std::max(e, rec.epoch);
  }
  epochs_[rec.epoch] = rec;
  if (rec.state == EpochState::Committed) {
    for (const auto& p : rec.partitions) {
      auto [oit, fresh] = offsets_.try_emplace(TopicPartition{p.topic, p.partition}, CommittedOffset{p.end_offset, rec.epoch});
      if (!fresh && oit->second.epoch <= rec.epoch) oit->second = CommittedOffset{p.end_offset, rec.epoch};
    }
  }
  if (rec.state != EpochState::Precommitted) {
    for (uint64_t e : detail::to_prune(epochs_, retain_, [](const auto& kv) { return kv.second.state; })) {
      epochs_.erase(e);
    }
  }
  ++writes_;
}

void MemoryCheckpointStore::set_state(uint64_t epoch, EpochState state) {
  std::lock_guard lk(mu_);
  auto it = epochs_.find(epoch);
  if (it == epochs_.end()) {
    throw StateError(StateError::Kind::NotFound, "set_state: no epoch " + std::to_string(epoch));
  }
  detail::check_transition(epoch, it->second.state, state);
  if (it->second.state == state) return;
  before_write();
  it->second.state = state;
  if (state == EpochState::Committed) {
    for (const auto& p : it->second.partitions) {
      auto [oit, fresh] = offsets_.try_emplace(TopicPartition{p.topic, p.partition}, CommittedOffset{p.end_offset, epoch});
      if (!fresh && oit->second.epoch <= epoch) oit->second = CommittedOffset{p.end_offset, epoch};
    }
  }
  for (uint64_t e : detail::to_prune(epochs_, retain_, [](const auto& kv) { return kv.second.state; })) {
    epochs_.erase(e);
  }
  ++writes_;
}

void MemoryCheckpointStore::mark_txn_committed(uint64_t epoch, const std::string& db, const std::string& table,
                                               uint32_t part) {
  std::lock_guard lk(mu_);
  auto it = epochs_.find(epoch);
  if (it == epochs_.end()) {
    throw StateError(StateError::Kind::NotFound, "mark_txn_committed: no epoch " + std::to_string(epoch));
  }
  for (auto& t : it->second.txns) {
    if (t.db == db && t.table == table && t.part == part) {
      before_write();
      t.committed = true;
      ++writes_;
      return;
    }
  }
  throw StateError(StateError::Kind::NotFound,
                   "mark_txn_committed: epoch " + std::to_string(epoch) + " has no table " + db + "." + table +
                       " part " + std::to_string(part));
}

std::optional<EpochRecord> MemoryCheckpointStore::latest() {
  std::lock_guard lk(mu_);
  if (epochs_.empty()) return std::nullopt;
  return epochs_.rbegin()->second;
}

std::optional<EpochRecord> MemoryCheckpointStore::get(uint64_t epoch) {
  std::lock_guard lk(mu_);
  auto it = epochs_.find(epoch);
  if (it == epochs_.end()) return std::nullopt;
  return it->second;
}

std::vector<EpochRecord> MemoryCheckpointStore::list() {
  std::lock_guard lk(mu_);
  std::vector<EpochRecord> out;
  for (const auto& [_, r] : epochs_) out.push_back(r);
  return out;
}

std::map<TopicPartition, CommittedOffset> MemoryCheckpointStore::committed_offsets() {
  std::lock_guard lk(mu_);
  return offsets_;
}

std::vector<LabelPrefixUse> MemoryCheckpointStore::label_prefixes() {
  std::lock_guard lk(mu_);
  std::vector<LabelPrefixUse> out;
  for (const auto& [_, p] : prefixes_) out.push_back(p);
  return out;
}

std::map<TableKey, uint64_t> MemoryCheckpointStore::table_epochs() {
  std::lock_guard lk(mu_);
  return table_epochs_;
}

void MemoryCheckpointStore::reset() {
  std::lock_guard lk(mu_);
  before_write();
  epochs_.clear();
  offsets_.clear();
  prefixes_.clear();
  table_epochs_.clear();
  ddl_.clear();
  ++writes_;
}

void MemoryCheckpointStore::put_ddl(const DdlRecord& rec) {
  std::lock_guard lk(mu_);
  before_write();
  ddl_[{rec.db, rec.table}] = rec;
  ++writes_;
}

std::vector<DdlRecord> MemoryCheckpointStore::ddl_records() {
  std::lock_guard lk(mu_);
  std::vector<DdlRecord> out;
  for (const auto& [_, r] : ddl_) out.push_back(r);
  return out;
}

}  // namespace cdc2doris::state
