#include "daemon/fatal_report.hpp"

#include <cxxabi.h>
#include <execinfo.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <exception>
#include <mutex>
#include <string>
#include <typeinfo>

namespace cdc2doris::daemon {
namespace {

// Only async-signal-safe calls from here on in the signal path.
void write_str(const char* s) {
  size_t n = std::strlen(s);
  while (n > 0) {
    const ssize_t w = ::write(STDERR_FILENO, s, n);
    if (w <= 0) return;
    s += w;
    n -= static_cast<size_t>(w);
  }
}

#if defined(CDC2DORIS_REPORTS_FATAL_SIGNALS)
constexpr int kFatalSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};

void write_int(int v) {
  char buf[16];
  char* p = buf + sizeof buf;
  *--p = '\0';
  unsigned u = v < 0 ? 0u - static_cast<unsigned>(v) : static_cast<unsigned>(v);
  do {
    *--p = static_cast<char>('0' + u % 10);
    u /= 10;
  } while (u != 0 && p > buf + 1);
  if (v < 0) *--p = '-';
  write_str(p);
}

const char* signal_name(int sig) {
  switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGABRT: return "SIGABRT";
  }
  return "?";
}

void on_fatal_signal(int sig, siginfo_t* info, void*) {
  // SA_RESETHAND has restored the default action: a fault inside this
  // handler ends the process instead of looping.
  write_str("cdc2doris: fatal signal ");
  write_int(sig);
  write_str(" (");
  write_str(signal_name(sig));
  write_str(")");
  if (info != nullptr && info->si_code <= 0) {  // sent, not a fault
    if (info->si_pid == ::getpid()) {
      write_str(" raised by the process itself (abort)");
    } else {
      write_str(" sent by pid ");
      write_int(static_cast<int>(info->si_pid));
    }
  }
  write_str("; the process dies with it. Backtrace:\n");
  void* frames[64];
  const int n = ::backtrace(frames, 64);
  ::backtrace_symbols_fd(frames, n, STDERR_FILENO);
  // Delivered with the default action once this handler returns (a fault
  // re-executes the faulting instruction; a sent signal needs the raise).
  ::raise(sig);
}
#endif

void on_terminate() {
  static std::once_flag once;  // a throw from the logger must not recurse
  std::call_once(once, [] {
    std::string what = "std::terminate called without an active exception";
    if (std::exception_ptr e = std::current_exception()) {
      const std::type_info* t = abi::__cxa_current_exception_type();
      std::string type = t != nullptr ? t->name() : "?";
      int status = 0;
      if (char* d = abi::__cxa_demangle(type.c_str(), nullptr, nullptr, &status); d != nullptr) {
        if (status == 0) type = d;
        std::free(d);
      }
      try {
        std::rethrow_exception(e);
      } catch (const std::exception& x) {
        what = "uncaught exception of type " + type + ": " + x.what();
      } catch (...) {
        what = "uncaught exception of type " + type;
      }
    }
    try {
      spdlog::critical("fatal: {}; aborting", what);
      spdlog::default_logger()->flush();
    } catch (...) {
      write_str("cdc2doris: fatal: std::terminate (the logger failed too)\n");
    }
  });
  std::abort();
}

}  // namespace

void install_fatal_reporting() {
  static std::once_flag once;
  std::call_once(once, [] {
    // backtrace() loads libgcc on its first call, which may allocate: not in
    // a signal handler.
    void* warm[1];
    (void)::backtrace(warm, 1);
    // Process-wide handlers run on the faulting thread; this alternate stack
    // is the main thread's (a stack overflow there is reported; other
    // threads' faults run on their own stacks).
#if defined(CDC2DORIS_REPORTS_FATAL_SIGNALS)
    static char alt_stack[64 * 1024];
    stack_t ss{};
    ss.ss_sp = alt_stack;
    ss.ss_size = sizeof alt_stack;
    ::sigaltstack(&ss, nullptr);
    struct sigaction sa{};
    sa.sa_sigaction = on_fatal_signal;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    for (int sig : kFatalSignals) ::sigaction(sig, &sa, nullptr);
#endif
    std::set_terminate(on_terminate);
  });
}

}  // namespace cdc2doris::daemon
