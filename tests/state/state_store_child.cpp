// Test helper for tests/state: `state_store_child <dir> hold|crash-after-writes`.
//   hold                 open the store, print "ready", wait to be killed
//   crash-after-writes   write epochs 1..3 (1,2 committed, 3 precommitted with
//                        one txn marked committed), print "ready", SIGKILL self
#include <csignal>
#include <cstdio>
#include <cstring>
#include <unistd.h>

#include "state/rocksdb_store.hpp"

using namespace cdc2doris::state;

namespace {
EpochRecord epoch(uint64_t e) {
  EpochRecord r;
  r.epoch = e;
  r.label_prefix = "child";
  r.created_unix_ms = 1000 + static_cast<int64_t>(e);
  r.txns = {{"db", "a", "child_db_a_" + std::to_string(e), static_cast<int64_t>(100 + e), false},
            {"db", "b", "child_db_b_" + std::to_string(e), static_cast<int64_t>(200 + e), false}};
  r.partitions = {{"t", 0, static_cast<int64_t>(e * 10), static_cast<int64_t>(e * 10 + 10)}};
  return r;
}
}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s <dir> hold|crash-after-writes\n", argv[0]);
    return 2;
  }
  try {
    RocksCheckpointStore store(RocksStoreOptions{argv[1]});
    if (std::strcmp(argv[2], "crash-after-writes") == 0) {
      for (uint64_t e = 1; e <= 3; ++e) {
        store.put_epoch(epoch(e));
        if (e < 3) store.set_state(e, EpochState::Committed);
      }
      store.mark_txn_committed(3, "db", "a");
      std::printf("ready\n");
      std::fflush(stdout);
      ::kill(::getpid(), SIGKILL);
    }
    std::printf("ready\n");
    std::fflush(stdout);
    for (;;) ::pause();
  } catch (const StateError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
