#include "state/dir_lock.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "state/checkpoint_store.hpp"

namespace cdc2doris::state {

namespace {
std::string errno_text(int e) { return std::strerror(e); }
}  // namespace

std::optional<pid_t> DirLock::read_holder(const std::filesystem::path& dir) {
  int fd = ::open((dir / kFileName).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  char buf[32] = {};
  ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0) return std::nullopt;
  char* end = nullptr;
  long pid = std::strtol(buf, &end, 10);
  if (end == buf || pid <= 0) return std::nullopt;
  return static_cast<pid_t>(pid);
}

DirLock::DirLock(const std::filesystem::path& dir) {
  // The state directory is also RocksDB's: created 0700, as systemd's
  // StateDirectoryMode does, since its records name tables, offsets and
  // labels (issue 35). Its parents get the usual mode; a directory that
  // exists keeps the one its owner chose.
  std::error_code ec;
  if (!std::filesystem::exists(dir, ec)) {
    if (dir.has_parent_path()) std::filesystem::create_directories(dir.parent_path(), ec);
    if (!ec && ::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) ec = std::error_code(errno, std::generic_category());
  }
  if (ec) {
    throw StateError(StateError::Kind::Io, "cannot create state directory " + dir.string() + ": " + ec.message());
  }
  auto file = dir / kFileName;
  fd_ = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd_ < 0) {
    throw StateError(StateError::Kind::Io, "cannot open " + file.string() + ": " + errno_text(errno));
  }
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    int e = errno;
    ::close(fd_);
    fd_ = -1;
    if (e == EWOULDBLOCK) {
      auto holder = read_holder(dir);
      std::string who = holder ? "pid " + std::to_string(*holder) : "a process that has not written its pid yet";
      throw StateError(StateError::Kind::Locked, "state directory " + dir.string() + " is in use by " + who +
                                                     " (lock file " + file.string() +
                                                     "); stop that cdc2doris or set another state path");
    }
    throw StateError(StateError::Kind::Io, "cannot lock " + file.string() + ": " + errno_text(e));
  }
  std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
    int e = errno;
    ::close(fd_);
    fd_ = -1;
    throw StateError(StateError::Kind::Io, "cannot write " + file.string() + ": " + errno_text(e));
  }
}

DirLock::~DirLock() {
  if (fd_ < 0) return;
  // An empty pid file tells a reader nobody holds the directory; the flock
  // itself is released by close().
  (void)!::ftruncate(fd_, 0);
  ::close(fd_);
}

}  // namespace cdc2doris::state
