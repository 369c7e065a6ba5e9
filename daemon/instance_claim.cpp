#include "daemon/instance_claim.hpp"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <cstddef>

namespace cdc2doris::daemon {

namespace {

// The abstract address: a leading NUL, then the name (FNV-1a hashed when it
// would not fit into sun_path).
socklen_t make_address(const std::string& name, sockaddr_un& addr) {
  std::memset(&addr, 0, sizeof addr);
  addr.sun_family = AF_UNIX;
  std::string path = "cdc2doris/" + name;
  if (path.size() > sizeof addr.sun_path - 1) {
    uint64_t h = 1469598103934665603ull;
    for (unsigned char c : name) h = (h ^ c) * 1099511628211ull;
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
    path = "cdc2doris/" + name.substr(0, 60) + "#" + hex;
  }
  std::memcpy(addr.sun_path + 1, path.data(), path.size());
  return static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + path.size());
}

// Who listens on it: the peer credentials of a connection to it.
std::optional<pid_t> holder_of(const sockaddr_un& addr, socklen_t len) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return std::nullopt;
  std::optional<pid_t> pid;
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), len) == 0) {
    ucred cred{};
    socklen_t cl = sizeof cred;
    if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) == 0 && cred.pid > 0) pid = cred.pid;
  }
  ::close(fd);
  return pid;
}

}  // namespace

IdentityClaim::IdentityClaim(const std::string& name) {
  sockaddr_un addr;
  const socklen_t len = make_address(name, addr);
  fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) throw std::runtime_error(std::string("identity claim: socket: ") + std::strerror(errno));
  if (::bind(fd_, reinterpret_cast<const sockaddr*>(&addr), len) != 0) {
    const int err = errno;
    ::close(fd_);
    fd_ = -1;
    if (err == EADDRINUSE) throw ClaimTaken(name, holder_of(addr, len));
    throw std::runtime_error("identity claim " + name + ": bind: " + std::strerror(err));
  }
  // Listening, so that a refused newcomer can learn the holder's pid.
  ::listen(fd_, 16);
}

IdentityClaim::~IdentityClaim() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace cdc2doris::daemon
