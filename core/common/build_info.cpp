#include "core/common/build_info.hpp"

// Generated into the build tree by cmake/BuildCommit.cmake; defines
// CDC2DORIS_BUILD_VERSION and CDC2DORIS_BUILD_COMMIT as string literals.
#include "cdc2doris_build_commit.h"

namespace cdc2doris::build_info {

std::string_view version() { return CDC2DORIS_BUILD_VERSION; }

std::string_view commit() { return CDC2DORIS_BUILD_COMMIT; }

bool crash_points() {
#if defined(CDC2DORIS_CRASH_POINTS)
  return true;
#else
  return false;
#endif
}

}  // namespace cdc2doris::build_info
