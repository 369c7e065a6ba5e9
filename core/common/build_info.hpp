#pragma once
// What this binary was built from, for `cdc2doris version`, the startup log
// line and the cdc2doris_build_info metric. The commit is captured by CMake on
// every build (cmake/BuildCommit.cmake), so it is current without a
// reconfigure; only build_info.cpp recompiles when it changes.
#include <string_view>

namespace cdc2doris::build_info {

// The project version from CMake, e.g. "0.1.0".
std::string_view version();

// The short git commit, with "-dirty" if tracked files differed from it at
// build time; "unknown" when not built from a git checkout (a tarball) and no
// CDC2DORIS_BUILD_COMMIT was given to CMake.
std::string_view commit();

// True in test builds, where CDC2DORIS_CRASH_AT can abort the process on
// purpose (core/common/crash_point.hpp). Shipped binaries are built without.
bool crash_points();

}  // namespace cdc2doris::build_info
