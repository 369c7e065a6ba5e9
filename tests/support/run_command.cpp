#include "tests/support/run_command.hpp"

#include <atomic>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "tools/fixtures/process.hpp"

namespace cdc2doris::test {

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string file_tail(const std::filesystem::path& p, size_t bytes) {
  std::string s = read_file(p);
  return s.size() > bytes ? s.substr(s.size() - bytes) : s;
}

CommandResult run_command(const std::vector<std::string>& argv, const std::filesystem::path& scratch_dir,
                          std::chrono::milliseconds timeout) {
  static std::atomic<unsigned> counter{0};
  const std::string n = std::to_string(counter++);
  const auto out = scratch_dir / ("cmd-" + n + ".out");
  const auto err = scratch_dir / ("cmd-" + n + ".err");
  CommandResult r;
  {
    Process p({argv, {}, out.string(), err.string(), ""});
    auto st = p.wait(timeout);
    r.status = st.value_or(-1);
  }  // a child still running after the timeout is killed here
  r.out = read_file(out);
  r.err = read_file(err);
  std::error_code ec;
  std::filesystem::remove(out, ec);
  std::filesystem::remove(err, ec);
  return r;
}

std::string run_checked(const std::vector<std::string>& argv, const std::filesystem::path& scratch_dir,
                        std::chrono::milliseconds timeout) {
  auto r = run_command(argv, scratch_dir, timeout);
  if (r.status != 0) {
    std::string cmd;
    for (const auto& a : argv) cmd += (cmd.empty() ? "" : " ") + a;
    if (cmd.size() > 300) cmd = cmd.substr(0, 300) + "...";
    throw std::runtime_error(cmd + ": " + (r.status < 0 ? std::string("timed out") : "exit " + std::to_string(r.status)) +
                             ": " + r.err.substr(0, 4000));
  }
  return r.out;
}

}  // namespace cdc2doris::test
