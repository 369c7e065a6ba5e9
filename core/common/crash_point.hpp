#pragma once
// Deterministic crash points for the exactly-once crash tests. In builds with
// CDC2DORIS_CRASH_POINTS, CDC2DORIS_CRASH_POINT("name") kills the process with
// SIGKILL when the environment variable CDC2DORIS_CRASH_AT equals "name"
// (optionally "name:N" to crash on the N-th hit), and blocks the calling
// thread for good when CDC2DORIS_HANG_AT names it (a call that never returns,
// e.g. librdkafka's close). In other builds it compiles
// to nothing, so production binaries cannot be crashed from the environment.
namespace cdc2doris::crash {
void hit(const char* name);
}

#if defined(CDC2DORIS_CRASH_POINTS)
#define CDC2DORIS_CRASH_POINT(name) ::cdc2doris::crash::hit(name)
#else
#define CDC2DORIS_CRASH_POINT(name) ((void)0)
#endif
