#pragma once
// The last words of a dying daemon. Every exit path the code takes logs why;
// what is left are deaths the code does not choose: a fatal signal (a crash,
// abort() in a library, an operator's kill -SEGV) and std::terminate (an
// exception escaping a thread or a noexcept function). Without these hooks
// they end the process with no line in the log, and only a core file (if
// enabled) says what happened.

// Sanitizer builds keep the sanitizer's own fault handlers (ASan's report names
// the bad access and the allocation), so the signal handlers below exist only
// without one; the tests that expect them use the same condition.
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#define CDC2DORIS_REPORTS_FATAL_SIGNALS 1
#endif

namespace cdc2doris::daemon {

// Installs, once, for the whole process:
//  - a std::terminate handler that logs the uncaught exception (type and
//    message, through the default logger, so secrets stay redacted) before
//    abort()ing;
//  - handlers for SIGSEGV, SIGBUS, SIGFPE, SIGILL and SIGABRT that write the
//    signal and a backtrace to stderr (async-signal-safe writes on an
//    alternate stack, so a stack overflow is reported too), then re-raise it
//    with the default action: the exit status and the core dump stay those
//    of the signal. Only where CDC2DORIS_REPORTS_FATAL_SIGNALS is defined.
void install_fatal_reporting();

}  // namespace cdc2doris::daemon
