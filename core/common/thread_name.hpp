#pragma once
// Names the calling thread (/proc/PID/task/*/comm): `top -H`, `ps -L`, perf,
// gdb and the bench's per-thread CPU figures tell the daemon's threads
// apart by it. Linux keeps 15 bytes; a longer name is cut. The pipeline
// (main) thread keeps the process name: renaming it would rename the
// process in `ps` and `top`.
namespace cdc2doris {

void name_this_thread(const char* name);

}  // namespace cdc2doris
