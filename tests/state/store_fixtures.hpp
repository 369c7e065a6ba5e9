#pragma once
// Fixtures that give the shared store tests a RocksDB and an in-memory store
// behind the same shape. reopen() closes and reopens the RocksDB store, so
// every shared test also checks that what it wrote survived a restart.
#include <memory>

#include "state/memory_store.hpp"
#include "state/rocksdb_store.hpp"
#include "tools/fixtures/temp_dir.hpp"

namespace cdc2doris::state::testing {

inline EpochRecord make_epoch(uint64_t e, std::vector<std::string> tables = {"a", "b"},
                              std::vector<PartitionRange> parts = {}, std::string prefix = "pfx") {
  EpochRecord r;
  r.epoch = e;
  r.label_prefix = prefix;
  r.state = EpochState::Precommitted;
  r.created_unix_ms = 1'700'000'000'000 + static_cast<int64_t>(e);
  for (const auto& t : tables) {
    r.txns.push_back(TableTxn{"db", t, prefix + "_db_" + t + "_" + std::to_string(e),
                              static_cast<int64_t>(e * 1000 + t.size()), false});
  }
  if (parts.empty()) {
    parts = {{"orders", 0, static_cast<int64_t>(e * 100), static_cast<int64_t>(e * 100 + 100)},
             {"orders", 1, static_cast<int64_t>(e * 50), static_cast<int64_t>(e * 50 + 50)}};
  }
  r.partitions = std::move(parts);
  return r;
}

struct RocksFixture {
  explicit RocksFixture(size_t retain = 100) : retain_(retain) { open(); }
  CheckpointStore& store() { return *store_; }
  void reopen() {
    store_.reset();
    open();
  }
  static constexpr const char* name = "rocksdb";

 private:
  void open() {
    RocksStoreOptions o;
    o.path = dir_ / "state";
    o.retain_epochs = retain_;
    store_ = std::make_unique<RocksCheckpointStore>(o);
  }
  test::TempDir dir_{"cdc2doris-state"};
  size_t retain_;
  std::unique_ptr<RocksCheckpointStore> store_;
};

struct MemoryFixture {
  explicit MemoryFixture(size_t retain = 100) : store_(retain) {}
  CheckpointStore& store() { return store_; }
  void reopen() {}
  static constexpr const char* name = "memory";

 private:
  MemoryCheckpointStore store_;
};

}  // namespace cdc2doris::state::testing
