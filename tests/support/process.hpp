#pragma once
// Child processes for tests (Kafka broker JVM, doris-emulator, cdc2doris).
// Every child gets PR_SET_PDEATHSIG(SIGKILL) and is registered with the
// cleanup registry, so neither a failed assertion, a crash of the test nor
// Ctrl-C leaves an orphan behind.
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace cdc2doris::test {

struct ProcessOptions {
  std::vector<std::string> argv;            // argv[0] is the program (PATH lookup)
  std::map<std::string, std::string> env;   // added to / overriding the parent's environment
  std::string stdout_file;                  // empty: stdout is a pipe readable via read_line()
  std::string stderr_file;                  // empty: inherit the test's stderr
  std::string cwd;
};

class Process {
 public:
  explicit Process(ProcessOptions opts);  // spawns; throws std::runtime_error on failure
  ~Process();                             // SIGKILL + reap if still running
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  pid_t pid() const { return pid_; }
  bool running();
  // Reads one line from the child's stdout pipe (only when stdout_file is empty).
  // Returns nullopt on EOF or timeout.
  std::optional<std::string> read_line(std::chrono::milliseconds timeout);
  void signal(int sig);
  // Waits for exit; returns the exit code, 128+signal when killed, nullopt on timeout.
  std::optional<int> wait(std::chrono::milliseconds timeout);
  // SIGTERM, wait up to grace, then SIGKILL. Returns the exit status as wait().
  int stop(std::chrono::milliseconds grace = std::chrono::seconds(10));
  void kill9();
  // How the child ended, in words ("exited with status 1", "killed by signal
  // 11 (Segmentation fault), core dumped"); "still running" while it runs.
  // A child that dies without logging a reason is explained by this.
  std::string how_ended();

 private:
  ProcessOptions opts_;
  pid_t pid_ = -1;
  int stdout_fd_ = -1;
  std::string buffered_;
  std::optional<int> status_;
  int raw_status_ = 0;  // waitpid()'s status, once status_ is set
};

}  // namespace cdc2doris::test
