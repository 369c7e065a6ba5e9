#pragma once
// The standard process_* metrics (as the Prometheus client libraries export
// them), read from /proc/self at scrape time. Linux only; fields that cannot
// be read are left out.
#include <optional>
#include <string>

namespace cdc2doris::daemon {

struct ProcessStats {
  std::optional<double> cpu_seconds;       // user + system
  std::optional<double> resident_bytes;
  std::optional<double> virtual_bytes;
  std::optional<double> open_fds;
  std::optional<double> max_fds;
  std::optional<double> start_time_seconds;  // since the Unix epoch
};

ProcessStats read_process_stats();
// Exposition lines (HELP/TYPE/sample) for what could be read.
std::string render_process_metrics(const ProcessStats& s);

}  // namespace cdc2doris::daemon
