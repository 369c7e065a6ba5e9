// The build_info the binary reports matches what CMake built it from.
#include "core/common/build_info.hpp"

#include <catch2/catch.hpp>
#include <regex>
#include <string>

TEST_CASE("build_info: version is the CMake project version") {
  CHECK(cdc2doris::build_info::version() == CDC2DORIS_EXPECTED_VERSION);
}

TEST_CASE("build_info: commit is the override, a short hash (maybe -dirty) from a checkout, or unknown") {
  const std::string commit(cdc2doris::build_info::commit());
  const std::string override_commit = CDC2DORIS_EXPECTED_COMMIT_OVERRIDE;
  INFO("commit: " << commit);
  if (!override_commit.empty()) {
    CHECK(commit == override_commit);
  } else if (CDC2DORIS_EXPECTED_FROM_GIT) {
    CHECK(std::regex_match(commit, std::regex("[0-9a-f]{7,40}(-dirty)?")));
  } else {
    CHECK(commit == "unknown");
  }
}

TEST_CASE("build_info: crash points follow the build option") {
  CHECK(cdc2doris::build_info::crash_points() == CDC2DORIS_EXPECTED_CRASH_POINTS);
}
