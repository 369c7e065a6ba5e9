#include "tests/support/cleanup.hpp"

#include <csignal>
#include <filesystem>
#include <mutex>
#include <set>
#include <unistd.h>

namespace cdc2doris::test::cleanup {
namespace {
std::mutex mu;
std::set<pid_t>& pids() {
  static std::set<pid_t> s;
  return s;
}
std::set<std::string>& dirs() {
  static std::set<std::string> s;
  return s;
}

void on_signal(int sig) {
  // Not strictly async-signal-safe (mutex, filesystem), but the process is
  // about to die and leaving a JVM or a temp tree behind is the worse outcome.
  run_all();
  std::signal(sig, SIG_DFL);
  ::raise(sig);
}
}  // namespace

void add_pid(pid_t pid) {
  std::lock_guard lk(mu);
  pids().insert(pid);
}
void remove_pid(pid_t pid) {
  std::lock_guard lk(mu);
  pids().erase(pid);
}
void add_dir(const std::string& path) {
  std::lock_guard lk(mu);
  dirs().insert(path);
}
void remove_dir(const std::string& path) {
  std::lock_guard lk(mu);
  dirs().erase(path);
}

void run_all() {
  std::unique_lock lk(mu, std::try_to_lock);
  for (pid_t p : pids()) ::kill(p, SIGKILL);
  for (const auto& d : dirs()) {
    std::error_code ec;
    std::filesystem::remove_all(d, ec);
  }
}

void install_signal_handlers() {
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) std::signal(sig, on_signal);
}
}  // namespace cdc2doris::test::cleanup
