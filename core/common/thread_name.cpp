#include "core/common/thread_name.hpp"

#include <pthread.h>

#include <cstring>

namespace cdc2doris {

void name_this_thread(const char* name) {
  char buf[16];
  std::strncpy(buf, name, sizeof buf - 1);
  buf[sizeof buf - 1] = '\0';
  // Only fails for a name over 15 bytes, which the copy rules out.
  pthread_setname_np(pthread_self(), buf);
}

}  // namespace cdc2doris
