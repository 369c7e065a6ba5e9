// glibc malloc settings for `run`; see allocator.cpp for the measurement.
#pragma once

namespace cdc2doris::daemon {

// Keeps large freed blocks (librdkafka's fetch responses) in the heap for
// reuse. A setting the operator gave in GLIBC_TUNABLES is left as it is.
// Logs what it set.
void tune_allocator();

}  // namespace cdc2doris::daemon
