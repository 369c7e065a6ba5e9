#include "tests/support/run_command.hpp"

#include <atomic>
#include <cstdlib>
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

HttpAnswer curl_http(const std::string& method, const std::string& url, const std::string& body,
                     const std::filesystem::path& scratch_dir) {
  std::vector<std::string> argv{"curl", "-sS", "--max-time", "30", "-o", "-", "-w", "\n%{http_code}", "-X", method};
  if (!body.empty()) {
    // No `Expect: 100-continue` (curl adds it above 1 KiB): Connect's Jetty
    // resets such a connection.
    argv.insert(argv.end(), {"-H", "Content-Type: application/json", "-H", "Expect:", "--data-binary", body});
  }
  argv.push_back(url);
  auto r = run_command(argv, scratch_dir, std::chrono::seconds(40));
  HttpAnswer h;
  if (r.status != 0) {
    h.body = "curl exit " + std::to_string(r.status) + ": " + r.err;
    return h;
  }
  auto nl = r.out.rfind('\n');
  h.status = std::atoi(r.out.c_str() + nl + 1);
  h.body = r.out.substr(0, nl);
  return h;
}

}  // namespace cdc2doris::test
