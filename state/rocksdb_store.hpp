#pragma once
// CheckpointStore over RocksDB. Key schema, durability, retention and locking
// are documented in docs/state.md; keep both in sync.
#include <cstddef>
#include <filesystem>
#include <memory>
#include <mutex>

#include "state/checkpoint_store.hpp"

namespace rocksdb {
class DB;
}

namespace cdc2doris::state {

struct RocksStoreOptions {
  std::filesystem::path path;
  // Epochs kept after a commit. Only Committed/Aborted epochs are pruned; a
  // Precommitted epoch is kept until it is resolved, whatever its age.
  size_t retain_epochs = 100;
  // Reads every table file's checksums at open, so corruption is reported at
  // start instead of in the middle of recovery. The state is small (bounded
  // by retention), so this costs milliseconds.
  bool verify_on_open = true;
};

// Current on-disk format version written to the "m/format" key.
inline constexpr uint32_t kStateFormatVersion = 2;

class RocksCheckpointStore final : public CheckpointStore {
 public:
  // Creates the directory if needed. Throws StateError: Locked (with the pid
  // of the holder and the path), Corrupt, NewerFormat or Io.
  explicit RocksCheckpointStore(RocksStoreOptions opts);
  ~RocksCheckpointStore() override;  // flushes and closes; releases the lock
  RocksCheckpointStore(const RocksCheckpointStore&) = delete;
  RocksCheckpointStore& operator=(const RocksCheckpointStore&) = delete;

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

  // Closes the DB now and reports a failed close (the destructor only logs).
  void close();
  const std::filesystem::path& path() const { return opts_.path; }

 private:
  class Impl;
  RocksStoreOptions opts_;
  std::unique_ptr<Impl> impl_;
  std::mutex mu_;
};

}  // namespace cdc2doris::state
