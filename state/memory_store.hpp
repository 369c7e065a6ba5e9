#pragma once
// In-memory CheckpointStore with the same semantics as RocksCheckpointStore
// (the store tests run against both), for pipeline unit tests. Write failures
// can be injected to exercise the pipeline's handling of a failed checkpoint.
#include <map>
#include <mutex>

#include "state/checkpoint_store.hpp"

namespace cdc2doris::state {

class MemoryCheckpointStore final : public CheckpointStore {
 public:
  explicit MemoryCheckpointStore(size_t retain_epochs = 100) : retain_(retain_epochs) {}

  void put_epoch(const EpochRecord& rec) override;
  void set_state(uint64_t epoch, EpochState state) override;
  void mark_txn_committed(uint64_t epoch, const std::string& db, const std::string& table,
                          uint32_t part = 0) override;
  std::optional<EpochRecord> latest() override;
  std::optional<EpochRecord> get(uint64_t epoch) override;
  std::vector<EpochRecord> list() override;
  std::map<TopicPartition, CommittedOffset> committed_offsets() override;
  std::vector<LabelPrefixUse> label_prefixes() override;
  std::map<TableKey, uint64_t> table_epochs() override;
  void reset() override;
  void put_ddl(const DdlRecord& rec) override;
  std::vector<DdlRecord> ddl_records() override;

  // The next `count` writes (put_epoch, set_state, mark_txn_committed) throw
  // StateError(Io) without changing anything.
  void fail_next_writes(int count);
  size_t write_count() const;  // successful writes so far

 private:
  void before_write();  // requires mu_
  size_t retain_;
  mutable std::mutex mu_;
  std::map<uint64_t, EpochRecord> epochs_;
  std::map<TopicPartition, CommittedOffset> offsets_;
  std::map<std::string, LabelPrefixUse> prefixes_;
  std::map<TableKey, uint64_t> table_epochs_;
  std::map<TableKey, DdlRecord> ddl_;
  int fail_writes_ = 0;
  size_t writes_ = 0;
};

}  // namespace cdc2doris::state
