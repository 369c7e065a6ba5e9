#pragma once
#include <filesystem>
#include <string>

namespace cdc2doris::test {

// A fresh directory under $TMPDIR (default /tmp), removed by the destructor and
// by the cleanup registry when the test is interrupted.
class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "cdc2doris-test");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& p) const { return path_ / p; }

 private:
  std::filesystem::path path_;
};

// A TCP port on 127.0.0.1 that was free a moment ago.
int free_port();

}  // namespace cdc2doris::test
