#pragma once
// Exclusive lock on a state directory that names its holder. RocksDB's own
// LOCK file only says "lock hold by current process" or "Resource
// temporarily unavailable"; operators need the pid and the path.
#include <filesystem>
#include <optional>
#include <sys/types.h>

namespace cdc2doris::state {

class DirLock {
 public:
  static constexpr const char* kFileName = "cdc2doris.pid";
  // Creates `dir` if needed, takes an flock on dir/cdc2doris.pid and writes
  // our pid into it. flock (not fcntl) so a second open in the same process
  // also conflicts. Throws StateError(Locked) naming the holder's pid and the
  // path, StateError(Io) on other failures.
  explicit DirLock(const std::filesystem::path& dir);
  ~DirLock();
  DirLock(const DirLock&) = delete;
  DirLock& operator=(const DirLock&) = delete;

  // The pid written in dir/cdc2doris.pid, if any (for messages and tests).
  static std::optional<pid_t> read_holder(const std::filesystem::path& dir);

 private:
  int fd_ = -1;
};

}  // namespace cdc2doris::state
