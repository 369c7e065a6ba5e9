#pragma once
// Runs a short-lived command (initdb, psql, mariadb, curl) to completion and
// captures its output, for the real-source fixtures. The child is a Process,
// so it dies with the test and is reaped on timeout.
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

namespace cdc2doris::test {

struct CommandResult {
  int status = -1;     // exit code; 128+signal; -1 on timeout
  std::string out;     // stdout
  std::string err;     // stderr
};

// Output goes through files in `scratch_dir` (a pipe could fill up and block
// the child while we wait for it). Never throws for a non-zero exit.
CommandResult run_command(const std::vector<std::string>& argv, const std::filesystem::path& scratch_dir,
                          std::chrono::milliseconds timeout = std::chrono::seconds(120));

// Like run_command, but throws std::runtime_error naming the command, its exit
// status and stderr unless it exits 0.
std::string run_checked(const std::vector<std::string>& argv, const std::filesystem::path& scratch_dir,
                        std::chrono::milliseconds timeout = std::chrono::seconds(120));

// One HTTP request with curl (Kafka Connect's REST API, the schema registry).
// A body goes as application/json. status 0: no HTTP answer (not listening
// yet, or a timeout); body then holds curl's message.
struct HttpAnswer {
  int status = 0;
  std::string body;
};
HttpAnswer curl_http(const std::string& method, const std::string& url, const std::string& body,
                     const std::filesystem::path& scratch_dir);

std::string read_file(const std::filesystem::path& p);
// The last `bytes` of a file ("" if it does not exist).
std::string file_tail(const std::filesystem::path& p, size_t bytes = 4000);

}  // namespace cdc2doris::test
