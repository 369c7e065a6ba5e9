#include "core/common/crash_point.hpp"

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>

namespace cdc2doris::crash {

namespace {
struct Target {
  std::string name;
  long nth = 1;
  bool enabled = false;
};

Target parse(const char* variable) {
  Target r;
  const char* env = std::getenv(variable);
  if (env == nullptr || *env == '\0') return r;
  std::string s(env);
  if (auto colon = s.rfind(':'); colon != std::string::npos) {
    r.nth = std::strtol(s.c_str() + colon + 1, nullptr, 10);
    if (r.nth < 1) r.nth = 1;
    s.resize(colon);
  }
  r.name = s;
  r.enabled = true;
  return r;
}

bool reached(const Target& t, std::atomic<long>& hits, const char* name) {
  if (!t.enabled || t.name != name) return false;
  return hits.fetch_add(1) + 1 >= t.nth;
}
}  // namespace

void hit(const char* name) {
  static const Target crash = parse("CDC2DORIS_CRASH_AT"), hang = parse("CDC2DORIS_HANG_AT");
  static std::atomic<long> crash_hits{0}, hang_hits{0};
  if (reached(crash, crash_hits, name)) {
    static const char msg[] = "cdc2doris: crash point reached, SIGKILL\n";
    (void)!::write(2, msg, sizeof msg - 1);
    ::kill(::getpid(), SIGKILL);
  }
  if (reached(hang, hang_hits, name)) {
    static const char msg[] = "cdc2doris: hang point reached, blocking this thread for good\n";
    (void)!::write(2, msg, sizeof msg - 1);
    for (;;) ::pause();
  }
}

}  // namespace cdc2doris::crash
