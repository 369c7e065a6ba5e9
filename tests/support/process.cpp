#include "tests/support/process.hpp"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <stdexcept>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include "tests/support/cleanup.hpp"

extern char** environ;

namespace cdc2doris::test {

namespace {
int decode_status(int st) {
  if (WIFEXITED(st)) return WEXITSTATUS(st);
  if (WIFSIGNALED(st)) return 128 + WTERMSIG(st);
  return -1;
}

// In a forked child: every signal back to its default action and unblocked
// (exec keeps ignored signals and the mask; the program must start as if
// from a shell). Async-signal-safe calls only.
void reset_inherited_signals() {
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  ::sigemptyset(&dfl.sa_mask);
  for (int sig = 1; sig < NSIG; ++sig)
    if (sig != SIGKILL && sig != SIGSTOP) ::sigaction(sig, &dfl, nullptr);
  sigset_t none;
  ::sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
}

// Waits until the child's exec closed the pipe (0) or it wrote exec's errno;
// nullopt when it did neither in time.
std::optional<int> await_exec(int fd) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return std::nullopt;
    pollfd pfd{fd, POLLIN, 0};
    const int r = ::poll(&pfd, 1, static_cast<int>(left.count()));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) continue;
    int err = 0;
    const ssize_t n = ::read(fd, &err, sizeof err);
    if (n < 0 && errno == EINTR) continue;
    return n == static_cast<ssize_t>(sizeof err) ? err : 0;
  }
}
}  // namespace

Process::Process(ProcessOptions opts) : opts_(std::move(opts)) {
  if (opts_.argv.empty()) throw std::runtime_error("Process: empty argv");
  int out_pipe[2] = {-1, -1};
  if (opts_.stdout_file.empty() && ::pipe2(out_pipe, O_CLOEXEC) != 0)
    throw std::runtime_error("Process: pipe failed");

  // Everything the child needs is prepared before fork: only async-signal-safe
  // calls happen between fork and exec.
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string kv(*e);
    auto eq = kv.find('=');
    if (eq != std::string::npos && opts_.env.count(kv.substr(0, eq))) continue;
    env_strings.push_back(std::move(kv));
  }
  for (const auto& [k, v] : opts_.env) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp, argv;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  for (auto& s : opts_.argv) argv.push_back(s.data());
  argv.push_back(nullptr);
  const pid_t parent = ::getpid();
  // Closed by a successful exec (O_CLOEXEC); carries errno when it fails.
  int exec_pipe[2];
  if (::pipe2(exec_pipe, O_CLOEXEC) != 0) throw std::runtime_error("Process: pipe failed");

  pid_t pid = ::fork();
  if (pid < 0) {
    for (int fd : {exec_pipe[0], exec_pipe[1], out_pipe[0], out_pipe[1]})
      if (fd >= 0) ::close(fd);
    throw std::runtime_error("Process: fork failed");
  }
  if (pid == 0) {
    // Until exec the child runs the test's signal handlers: Catch's report
    // and cleanup::run_all(), which kills every registered process (the
    // broker) and removes the temp dirs. A signal meant for the child must
    // only end the child.
    reset_inherited_signals();
    // Dies with the test even when the test is SIGKILLed.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    if (!opts_.stdout_file.empty()) {
      int fd = ::open(opts_.stdout_file.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      if (fd >= 0) ::dup2(fd, 1);
    } else {
      ::dup2(out_pipe[1], 1);
    }
    if (!opts_.stderr_file.empty()) {
      int fd = ::open(opts_.stderr_file.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      if (fd >= 0) ::dup2(fd, 2);
    }
    if (opts_.cwd.empty() || ::chdir(opts_.cwd.c_str()) == 0) ::execvpe(argv[0], argv.data(), envp.data());
    const int err = errno;
    [[maybe_unused]] auto n = ::write(exec_pipe[1], &err, sizeof err);
    ::_exit(127);
  }
  pid_ = pid;
  cleanup::add_pid(pid_);
  ::close(exec_pipe[1]);
  if (out_pipe[1] >= 0) ::close(out_pipe[1]);
  stdout_fd_ = out_pipe[0];
  // Returns once the child runs the program: a signal sent through this
  // object (stop(), kill9()) then reaches the program, never a half-started
  // copy of the test.
  const std::optional<int> exec_errno = await_exec(exec_pipe[0]);
  ::close(exec_pipe[0]);
  if (exec_errno != 0) {
    // The destructor does not run for a constructor that throws.
    if (!exec_errno) ::kill(pid_, SIGKILL);
    wait(std::chrono::seconds(30));
    if (stdout_fd_ >= 0) ::close(stdout_fd_);
    throw std::runtime_error("Process: cannot run " + opts_.argv[0] + ": " +
                             (exec_errno ? std::strerror(*exec_errno) : "the child did not reach exec within 60 s"));
  }
}

Process::~Process() {
  if (pid_ > 0 && !status_) {
    ::kill(pid_, SIGKILL);
    wait(std::chrono::seconds(30));
  }
  if (stdout_fd_ >= 0) ::close(stdout_fd_);
  cleanup::remove_pid(pid_);
}

bool Process::running() {
  if (status_) return false;
  int st = 0;
  pid_t r = ::waitpid(pid_, &st, WNOHANG);
  if (r == pid_) {
    status_ = decode_status(st);
    raw_status_ = st;
    cleanup::remove_pid(pid_);
    return false;
  }
  return true;
}

std::optional<std::string> Process::read_line(std::chrono::milliseconds timeout) {
  if (stdout_fd_ < 0) return std::nullopt;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (auto nl = buffered_.find('\n'); nl != std::string::npos) {
      std::string line = buffered_.substr(0, nl);
      buffered_.erase(0, nl + 1);
      return line;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return std::nullopt;
    pollfd pfd{stdout_fd_, POLLIN, 0};
    int r = ::poll(&pfd, 1, static_cast<int>(left.count()));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return std::nullopt;
    char buf[4096];
    ssize_t n = ::read(stdout_fd_, buf, sizeof buf);
    if (n <= 0) return std::nullopt;
    buffered_.append(buf, static_cast<size_t>(n));
  }
}

void Process::signal(int sig) {
  if (running()) ::kill(pid_, sig);
}

std::optional<int> Process::wait(std::chrono::milliseconds timeout) {
  if (status_) return status_;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    int st = 0;
    pid_t r = ::waitpid(pid_, &st, WNOHANG);
    if (r == pid_) {
      status_ = decode_status(st);
      raw_status_ = st;
      cleanup::remove_pid(pid_);
      return status_;
    }
    if (r < 0 && errno != EINTR) return std::nullopt;
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

int Process::stop(std::chrono::milliseconds grace) {
  if (status_) return *status_;
  ::kill(pid_, SIGTERM);
  if (auto st = wait(grace)) return *st;
  ::kill(pid_, SIGKILL);
  return wait(std::chrono::seconds(30)).value_or(-1);
}

void Process::kill9() {
  if (status_) return;
  ::kill(pid_, SIGKILL);
  wait(std::chrono::seconds(30));
}

std::string Process::how_ended() {
  if (running()) return "still running";
  if (WIFEXITED(raw_status_)) return "exited with status " + std::to_string(WEXITSTATUS(raw_status_));
  if (WIFSIGNALED(raw_status_)) {
    const int sig = WTERMSIG(raw_status_);
    const char* name = ::strsignal(sig);
    return "killed by signal " + std::to_string(sig) + " (" + (name ? name : "?") + ")" +
           (WCOREDUMP(raw_status_) ? ", core dumped" : "");
  }
  return "ended with wait status " + std::to_string(raw_status_);
}

}  // namespace cdc2doris::test
