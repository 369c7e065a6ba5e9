#include "daemon/process_metrics.hpp"

#include <unistd.h>

#include <filesystem>
#include <iterator>
#include <limits>
#include <fstream>
#include <sstream>
#include <vector>

namespace cdc2doris::daemon {

namespace {

std::optional<double> boot_time_seconds() {
  std::ifstream in("/proc/stat");
  std::string key;
  double value = 0;
  while (in >> key) {
    if (key == "btime" && in >> value) return value;
    in.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
  }
  return std::nullopt;
}

void line(std::ostringstream& os, const char* name, const char* type, const char* help, const std::optional<double>& v) {
  if (!v) return;
  os << "# HELP " << name << ' ' << help << "\n# TYPE " << name << ' ' << type << '\n' << name << ' ' << std::fixed
     << *v << std::defaultfloat << '\n';
}

}  // namespace

ProcessStats read_process_stats() {
  ProcessStats s;
  const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  const double page = static_cast<double>(sysconf(_SC_PAGESIZE));
  {
    std::ifstream in("/proc/self/stat");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    // The command name (field 2) may hold spaces and parentheses: fields
    // are counted from after its last ')'.
    auto close = text.rfind(')');
    if (close != std::string::npos && ticks > 0) {
      std::istringstream fields(text.substr(close + 2));
      std::vector<std::string> f((std::istream_iterator<std::string>(fields)), std::istream_iterator<std::string>());
      // f[0] is field 3 (state): utime 14, stime 15, starttime 22, vsize 23, rss 24.
      if (f.size() > 21) {
        try {
          s.cpu_seconds = (std::stod(f[11]) + std::stod(f[12])) / ticks;
          if (auto boot = boot_time_seconds()) s.start_time_seconds = *boot + std::stod(f[19]) / ticks;
          s.virtual_bytes = std::stod(f[20]);
          s.resident_bytes = std::stod(f[21]) * page;
        } catch (const std::exception&) {
        }
      }
    }
  }
  std::error_code ec;
  double fds = 0;
  for (auto it = std::filesystem::directory_iterator("/proc/self/fd", ec); !ec && it != std::filesystem::directory_iterator();
       it.increment(ec))
    ++fds;
  if (!ec) s.open_fds = fds;
  std::ifstream limits("/proc/self/limits");
  for (std::string l; std::getline(limits, l);) {
    if (l.rfind("Max open files", 0) != 0) continue;
    std::istringstream in(l.substr(14));
    std::string soft;
    if (in >> soft && soft != "unlimited") s.max_fds = std::stod(soft);
  }
  return s;
}

std::string render_process_metrics(const ProcessStats& s) {
  std::ostringstream os;
  line(os, "process_cpu_seconds_total", "counter", "Total user and system CPU time spent in seconds.", s.cpu_seconds);
  line(os, "process_resident_memory_bytes", "gauge", "Resident memory size in bytes.", s.resident_bytes);
  line(os, "process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.", s.virtual_bytes);
  line(os, "process_open_fds", "gauge", "Number of open file descriptors.", s.open_fds);
  line(os, "process_max_fds", "gauge", "Maximum number of open file descriptors.", s.max_fds);
  line(os, "process_start_time_seconds", "gauge", "Start time of the process since unix epoch in seconds.",
       s.start_time_seconds);
  return os.str();
}

}  // namespace cdc2doris::daemon
