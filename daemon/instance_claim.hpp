#pragma once
// Host-wide claims of a running daemon's identity (issue 31): a second
// `cdc2doris run` with the same consumer-group member id or the same label
// prefix must be refused before it joins the group — a static member with
// the same group.instance.id fences the healthy one — and before it touches
// a Doris transaction.
//
// A claim is a listening abstract Unix socket (Linux): named, not a file,
// so it needs no writable directory, never goes stale (the kernel drops it
// with the process, also after kill -9), and is shared by exactly the
// processes of one network namespace — the scope in which the default
// kafka.instance_id (the host name) is the same.
#include <optional>
#include <stdexcept>
#include <string>
#include <sys/types.h>

namespace cdc2doris::daemon {

class ClaimTaken : public std::runtime_error {
 public:
  ClaimTaken(const std::string& what, std::optional<pid_t> holder) : std::runtime_error(what), holder_(holder) {}
  std::optional<pid_t> holder() const { return holder_; }

 private:
  std::optional<pid_t> holder_;
};

class IdentityClaim {
 public:
  // Claims `name` for the life of this object. Throws ClaimTaken (with the
  // holder's pid when the kernel tells it) if a live process holds it, and
  // std::runtime_error if the socket cannot be made at all.
  explicit IdentityClaim(const std::string& name);
  ~IdentityClaim();
  IdentityClaim(const IdentityClaim&) = delete;
  IdentityClaim& operator=(const IdentityClaim&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace cdc2doris::daemon
