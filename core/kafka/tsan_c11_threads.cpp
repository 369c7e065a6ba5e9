// Compiled into the executables of ThreadSanitizer builds only
// (cdc2doris_tsan_c11_threads() in cmake/ProjectOptions.cmake).
//
// Debian's librdkafka creates its threads and locks with C11 <threads.h>
// (thrd_create, mtx_lock, cnd_wait). glibc implements those with its internal
// pthread entry points, which the GCC 12 (and clang 14) TSan runtime does not
// intercept: a librdkafka thread then runs without TSan's thread state and
// crashes in TSan's allocator on its first malloc, and its locks would be
// invisible. These definitions in the executable take precedence over glibc's
// and route the calls through the public pthread functions TSan intercepts.
// glibc's mtx_t and cnd_t hold a pthread_mutex_t / pthread_cond_t at offset 0
// (glibc's own mtx_lock casts the same way).
#include <cerrno>
#include <cstdint>
#include <ctime>
#include <pthread.h>
#include <threads.h>

namespace {

int to_c11(int rc) {
  switch (rc) {
    case 0: return thrd_success;
    case EBUSY: return thrd_busy;
    case ETIMEDOUT: return thrd_timedout;
    case ENOMEM:
    case EAGAIN: return thrd_nomem;
  }
  return thrd_error;
}

struct Start {
  thrd_start_t func;
  void* arg;
};

void* trampoline(void* p) {
  const Start s = *static_cast<Start*>(p);
  delete static_cast<Start*>(p);
  return reinterpret_cast<void*>(static_cast<intptr_t>(s.func(s.arg)));
}

pthread_mutex_t* native(mtx_t* m) { return reinterpret_cast<pthread_mutex_t*>(m); }
pthread_cond_t* native(cnd_t* c) { return reinterpret_cast<pthread_cond_t*>(c); }

}  // namespace

extern "C" {

int thrd_create(thrd_t* thr, thrd_start_t func, void* arg) {
  auto* s = new Start{func, arg};
  const int rc = ::pthread_create(thr, nullptr, trampoline, s);
  if (rc != 0) delete s;
  return to_c11(rc);
}

int thrd_join(thrd_t thr, int* res) {
  void* r = nullptr;
  const int rc = ::pthread_join(thr, &r);
  if (rc == 0 && res != nullptr) *res = static_cast<int>(reinterpret_cast<intptr_t>(r));
  return to_c11(rc);
}

int mtx_init(mtx_t* m, int type) {
  pthread_mutexattr_t attr;
  ::pthread_mutexattr_init(&attr);
  if ((type & mtx_recursive) != 0) ::pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
  const int rc = ::pthread_mutex_init(native(m), &attr);
  ::pthread_mutexattr_destroy(&attr);
  return to_c11(rc);
}
int mtx_lock(mtx_t* m) { return to_c11(::pthread_mutex_lock(native(m))); }
int mtx_trylock(mtx_t* m) { return to_c11(::pthread_mutex_trylock(native(m))); }
int mtx_timedlock(mtx_t* __restrict m, const struct timespec* __restrict t) {
  return to_c11(::pthread_mutex_timedlock(native(m), t));
}
int mtx_unlock(mtx_t* m) { return to_c11(::pthread_mutex_unlock(native(m))); }
void mtx_destroy(mtx_t* m) { ::pthread_mutex_destroy(native(m)); }

int cnd_init(cnd_t* c) { return to_c11(::pthread_cond_init(native(c), nullptr)); }
int cnd_signal(cnd_t* c) { return to_c11(::pthread_cond_signal(native(c))); }
int cnd_broadcast(cnd_t* c) { return to_c11(::pthread_cond_broadcast(native(c))); }
int cnd_wait(cnd_t* c, mtx_t* m) { return to_c11(::pthread_cond_wait(native(c), native(m))); }
int cnd_timedwait(cnd_t* __restrict c, mtx_t* __restrict m, const struct timespec* __restrict t) {
  return to_c11(::pthread_cond_timedwait(native(c), native(m), t));
}
void cnd_destroy(cnd_t* c) { ::pthread_cond_destroy(native(c)); }

}  // extern "C"
