/* The stat, mmap/munmap and descriptor-copy (dup, fcntl F_DUPFD) wrappers of
 * libioprobe_record.so (ioprobe_record.c's top comment says what is recorded). */
#include "record_internal.h"

/* ---- stat family ---- */
static void record_stat(int call, uint64_t id, int dirfd, const char* path, int ret, int err, int is_reg, uint64_t size,
                        Call c) {
  IoprobeRec r;
  char buf[PATH_MAX];
  const char* abs = NULL;
  if (!id) {
    if (ret != 0 || !is_reg || is_null(path)) return;
    abs = absolute(dirfd, path, buf, sizeof buf);
    if (!path_is_data(abs)) return;
  }
  fill(&r, IOPROBE_REC_STAT, call, c, err);
  r.open_id = id;
  r.ret = ret;
  r.size = size;
  if (abs) {
    size_t pl = strlen(abs);
    r.path_len = (uint16_t)(pl > 4095 ? 4095 : pl);
  }
  emit(&r, abs);
}

/* A path-based stat: cheap checks first (the path rule on an absolute path) so Python's many
 * import stats pass through with a few string compares. */
#define PATH_STAT(CALL, DIRFD, PATH, ST, EXPR)                                                      \
  if (!g_on || t_busy || is_null(PATH) || ((PATH)[0] == '/' && !path_is_data(PATH))) return (EXPR); \
  t_busy = 1;                                                                                       \
  Call c = begin();                                                                                 \
  int ret = (EXPR);                                                                                 \
  int err = ret != 0 ? errno : 0;                                                                   \
  record_stat(CALL, 0, DIRFD, PATH, ret, err, ret == 0 && S_ISREG((ST)->st_mode),                   \
              ret == 0 ? (uint64_t)(ST)->st_size : 0, c);                                           \
  t_busy = 0;                                                                                       \
  if (err) errno = err;                                                                             \
  return ret;

#define FD_STAT(CALL, FD, ST, EXPR)                                                              \
  uint64_t id = fd_id(FD);                                                                       \
  if (!id || t_busy) return (EXPR);                                                              \
  t_busy = 1;                                                                                    \
  Call c = begin();                                                                              \
  int ret = (EXPR);                                                                              \
  int err = ret != 0 ? errno : 0;                                                                \
  record_stat(CALL, id, AT_FDCWD, NULL, ret, err, 1, ret == 0 ? (uint64_t)(ST)->st_size : 0, c); \
  t_busy = 0;                                                                                    \
  if (err) errno = err;                                                                          \
  return ret;

EXPORT int stat(const char* p, struct stat* st) {
  RESOLVE(stat);
  PATH_STAT(IOPROBE_CALL_STAT, AT_FDCWD, p, st, REAL(stat)(p, st))
}
EXPORT int stat64(const char* p, struct stat64* st) {
  RESOLVE(stat64);
  PATH_STAT(IOPROBE_CALL_STAT64, AT_FDCWD, p, st, REAL(stat64)(p, st))
}
EXPORT int lstat(const char* p, struct stat* st) {
  RESOLVE(lstat);
  PATH_STAT(IOPROBE_CALL_LSTAT, AT_FDCWD, p, st, REAL(lstat)(p, st))
}
EXPORT int lstat64(const char* p, struct stat64* st) {
  RESOLVE(lstat64);
  PATH_STAT(IOPROBE_CALL_LSTAT64, AT_FDCWD, p, st, REAL(lstat64)(p, st))
}
EXPORT int fstat(int fd, struct stat* st) {
  RESOLVE(fstat);
  FD_STAT(IOPROBE_CALL_FSTAT, fd, st, REAL(fstat)(fd, st))
}
EXPORT int fstat64(int fd, struct stat64* st) {
  RESOLVE(fstat64);
  FD_STAT(IOPROBE_CALL_FSTAT64, fd, st, REAL(fstat64)(fd, st))
}
/* fstatat with an empty path and AT_EMPTY_PATH is an fstat of dirfd. */
EXPORT int fstatat(int d, const char* p, struct stat* st, int fl) {
  RESOLVE(fstatat);
  if ((fl & AT_EMPTY_PATH) && !is_null(p) && !*p) {
    FD_STAT(IOPROBE_CALL_FSTATAT, d, st, REAL(fstatat)(d, p, st, fl))
  }
  PATH_STAT(IOPROBE_CALL_FSTATAT, d, p, st, REAL(fstatat)(d, p, st, fl))
}
EXPORT int fstatat64(int d, const char* p, struct stat64* st, int fl) {
  RESOLVE(fstatat64);
  if ((fl & AT_EMPTY_PATH) && !is_null(p) && !*p) {
    FD_STAT(IOPROBE_CALL_FSTATAT64, d, st, REAL(fstatat64)(d, p, st, fl))
  }
  PATH_STAT(IOPROBE_CALL_FSTATAT64, d, p, st, REAL(fstatat64)(d, p, st, fl))
}
EXPORT int statx(int d, const char* p, int fl, unsigned mask, struct statx* sx) {
  RESOLVE(statx);
  if ((fl & AT_EMPTY_PATH) && !is_null(p) && !*p) {
    uint64_t id = fd_id(d);
    if (!id || t_busy) return REAL(statx)(d, p, fl, mask, sx);
    t_busy = 1;
    Call c = begin();
    int ret = REAL(statx)(d, p, fl, mask, sx);
    int err = ret != 0 ? errno : 0;
    record_stat(IOPROBE_CALL_STATX, id, d, NULL, ret, err, 1, ret == 0 ? sx->stx_size : 0, c);
    t_busy = 0;
    if (err) errno = err;
    return ret;
  }
  if (!g_on || t_busy || is_null(p) || (p[0] == '/' && !path_is_data(p))) return REAL(statx)(d, p, fl, mask, sx);
  t_busy = 1;
  Call c = begin();
  int ret = REAL(statx)(d, p, fl, mask, sx);
  int err = ret != 0 ? errno : 0;
  record_stat(IOPROBE_CALL_STATX, 0, d, p, ret, err, ret == 0 && S_ISREG(sx->stx_mode), ret == 0 ? sx->stx_size : 0, c);
  t_busy = 0;
  if (err) errno = err;
  return ret;
}
/* The pre-2.33 entry points old binaries still call. */
EXPORT int __xstat(int v, const char* p, struct stat* st) {
  RESOLVE(__xstat);
  PATH_STAT(IOPROBE_CALL_XSTAT, AT_FDCWD, p, st, REAL(__xstat)(v, p, st))
}
EXPORT int __xstat64(int v, const char* p, struct stat64* st) {
  RESOLVE(__xstat64);
  PATH_STAT(IOPROBE_CALL_XSTAT, AT_FDCWD, p, st, REAL(__xstat64)(v, p, st))
}
EXPORT int __lxstat(int v, const char* p, struct stat* st) {
  RESOLVE(__lxstat);
  PATH_STAT(IOPROBE_CALL_LXSTAT, AT_FDCWD, p, st, REAL(__lxstat)(v, p, st))
}
EXPORT int __lxstat64(int v, const char* p, struct stat64* st) {
  RESOLVE(__lxstat64);
  PATH_STAT(IOPROBE_CALL_LXSTAT, AT_FDCWD, p, st, REAL(__lxstat64)(v, p, st))
}
EXPORT int __fxstat(int v, int fd, struct stat* st) {
  RESOLVE(__fxstat);
  FD_STAT(IOPROBE_CALL_FXSTAT, fd, st, REAL(__fxstat)(v, fd, st))
}
EXPORT int __fxstat64(int v, int fd, struct stat64* st) {
  RESOLVE(__fxstat64);
  FD_STAT(IOPROBE_CALL_FXSTAT, fd, st, REAL(__fxstat64)(v, fd, st))
}
EXPORT int __fxstatat(int v, int d, const char* p, struct stat* st, int fl) {
  RESOLVE(__fxstatat);
  PATH_STAT(IOPROBE_CALL_FXSTATAT, d, p, st, REAL(__fxstatat)(v, d, p, st, fl))
}
EXPORT int __fxstatat64(int v, int d, const char* p, struct stat64* st, int fl) {
  RESOLVE(__fxstatat64);
  PATH_STAT(IOPROBE_CALL_FXSTATAT, d, p, st, REAL(__fxstatat64)(v, d, p, st, fl))
}

/* ---- mmap ---- */
static void* do_mmap(int call, void* a, size_t len, int prot, int flags, int fd, off64_t o) {
  RESOLVE(mmap64);
  uint64_t id = (flags & MAP_ANONYMOUS) ? 0 : fd_id(fd);
  if (!id || t_busy) return REAL(mmap64)(a, len, prot, flags, fd, o);
  t_busy = 1;
  Call c = begin();
  void* ret = REAL(mmap64)(a, len, prot, flags, fd, o);
  int err = ret == MAP_FAILED ? errno : 0;
  if (ret != MAP_FAILED) {
    for (int i = 0; i < kMaxMaps; ++i) {
      uintptr_t expected = 0;
      if (__atomic_compare_exchange_n(&g_maps[i].addr, &expected, (uintptr_t)ret, 0, __ATOMIC_ACQ_REL,
                                      __ATOMIC_ACQUIRE)) {
        g_maps[i].len = len;
        __atomic_store_n(&g_maps[i].open_id, id, __ATOMIC_RELEASE);
        break;
      }
    }
  }
  IoprobeRec r;
  fill(&r, IOPROBE_REC_MMAP, call, c, err);
  r.open_id = id;
  r.offset = (uint64_t)o;
  r.len = len;
  r.ret = ret == MAP_FAILED ? -1 : 0;
  emit(&r, NULL);
  t_busy = 0;
  if (err) errno = err;
  return ret;
}
EXPORT void* mmap(void* a, size_t len, int prot, int flags, int fd, off_t o) {
  return do_mmap(IOPROBE_CALL_MMAP, a, len, prot, flags, fd, o);
}
EXPORT void* mmap64(void* a, size_t len, int prot, int flags, int fd, off64_t o) {
  return do_mmap(IOPROBE_CALL_MMAP64, a, len, prot, flags, fd, o);
}
EXPORT int munmap(void* a, size_t len) {
  RESOLVE(munmap);
  uint64_t id = 0;
  if (g_on && !t_busy && a) {
    for (int i = 0; i < kMaxMaps; ++i) {
      uintptr_t expected = (uintptr_t)a;
      if (__atomic_load_n(&g_maps[i].addr, __ATOMIC_ACQUIRE) == expected) {
        id = __atomic_load_n(&g_maps[i].open_id, __ATOMIC_ACQUIRE);
        __atomic_store_n(&g_maps[i].addr, 0, __ATOMIC_RELEASE);
        break;
      }
    }
  }
  if (!id) return REAL(munmap)(a, len);
  t_busy = 1;
  Call c = begin();
  int ret = REAL(munmap)(a, len);
  int err = ret != 0 ? errno : 0;
  IoprobeRec r;
  fill(&r, IOPROBE_REC_MUNMAP, IOPROBE_CALL_MUNMAP, c, err);
  r.open_id = id;
  r.len = len;
  r.ret = ret;
  emit(&r, NULL);
  t_busy = 0;
  if (err) errno = err;
  return ret;
}

/* ---- descriptors that name the same open file ---- */
static void copy_slot(int from, int to) {
  if (!g_on || to < 0 || to >= kMaxFds) return;
  uint64_t id = fd_id(from);
  uint64_t pos = id ? __atomic_load_n(&g_fds[from].pos, __ATOMIC_RELAXED) : 0;
  __atomic_store_n(&g_fds[to].pos, pos, __ATOMIC_RELAXED);
  __atomic_store_n(&g_fds[to].open_id, id, __ATOMIC_RELAXED);
  __atomic_store_n(&g_fds[to].closed_id, 0, __ATOMIC_RELAXED);
}
EXPORT int dup(int fd) {
  RESOLVE(dup);
  int r = REAL(dup)(fd);
  if (r >= 0) copy_slot(fd, r);
  return r;
}
EXPORT int dup2(int fd, int to) {
  RESOLVE(dup2);
  int r = REAL(dup2)(fd, to);
  if (r >= 0 && r != fd) copy_slot(fd, r);
  return r;
}
EXPORT int dup3(int fd, int to, int fl) {
  RESOLVE(dup3);
  int r = REAL(dup3)(fd, to, fl);
  if (r >= 0) copy_slot(fd, r);
  return r;
}
static int do_fcntl(int use64, int fd, int cmd, void* arg) {
  int r;
  if (use64) {
    RESOLVE(fcntl64);
    r = REAL(fcntl64)(fd, cmd, arg);
  } else {
    RESOLVE(fcntl);
    r = REAL(fcntl)(fd, cmd, arg);
  }
  if (r >= 0 && (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC)) copy_slot(fd, r);
  return r;
}
/* Every fcntl argument is an int or a pointer, passed in the same register on x86-64 and arm64. */
EXPORT int fcntl(int fd, int cmd, ...) {
  va_list ap;
  va_start(ap, cmd);
  void* arg = va_arg(ap, void*);
  va_end(ap);
  return do_fcntl(0, fd, cmd, arg);
}
EXPORT int fcntl64(int fd, int cmd, ...) {
  va_list ap;
  va_start(ap, cmd);
  void* arg = va_arg(ap, void*);
  va_end(ap);
  return do_fcntl(1, fd, cmd, arg);
}
