/* The open, close, read, lseek and stdio wrappers of libioprobe_record.so (ioprobe_record.c's
 * top comment says what is recorded and how). */
#include "record_internal.h"

/* ---- open family ---- */
static int do_open(int call, int dirfd, const char* path, int flags, mode_t mode) {
  int fd;
  /* An absolute path the rule rejects (Python's imports, shared libraries) costs no clock read. */
  int busy = !g_on || t_busy || is_null(path) || (path[0] == '/' && !path_is_data(path));
  Call c = {0, 0};
  if (!busy) {
    t_busy = 1;
    c = begin();
  }
  switch (call) {
    case IOPROBE_CALL_OPEN:
      RESOLVE(open);
      fd = REAL(open)(path, flags, mode);
      break;
    case IOPROBE_CALL_OPEN64:
      RESOLVE(open64);
      fd = REAL(open64)(path, flags, mode);
      break;
    case IOPROBE_CALL_OPENAT:
      RESOLVE(openat);
      fd = REAL(openat)(dirfd, path, flags, mode);
      break;
    case IOPROBE_CALL_OPENAT64:
      RESOLVE(openat64);
      fd = REAL(openat64)(dirfd, path, flags, mode);
      break;
    case IOPROBE_CALL_CREAT:
      RESOLVE(creat);
      fd = REAL(creat)(path, mode);
      break;
    default:
      RESOLVE(creat64);
      fd = REAL(creat64)(path, mode);
      break;
  }
  if (busy) {
    /* A new descriptor number no longer names what it named before (closed by a way not wrapped). */
    if (g_on && fd >= 0 && fd < kMaxFds) {
      __atomic_store_n(&g_fds[fd].open_id, 0, __ATOMIC_RELAXED);
      __atomic_store_n(&g_fds[fd].closed_id, 0, __ATOMIC_RELAXED);
    }
    return fd;
  }
  int err = fd < 0 ? errno : 0;
  /* A file made new by this open (O_CREAT|O_EXCL: tempfile's way; O_TMPFILE) holds no input data. */
  int made_new = ((flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL)) || ((flags & O_TMPFILE) == O_TMPFILE);
  if (fd >= 0 && fd < kMaxFds) {
    __atomic_store_n(&g_fds[fd].open_id, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&g_fds[fd].closed_id, 0, __ATOMIC_RELAXED);
  }
  if (!made_new) after_open(call, dirfd, path, fd, err, c);
  t_busy = 0;
  errno = err ? err : errno;
  return fd;
}

static mode_t mode_arg(int flags, va_list ap) { return (flags & (O_CREAT | O_TMPFILE)) ? (mode_t)va_arg(ap, int) : 0; }

EXPORT int open(const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  mode_t m = mode_arg(flags, ap);
  va_end(ap);
  return do_open(IOPROBE_CALL_OPEN, AT_FDCWD, path, flags, m);
}
EXPORT int open64(const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  mode_t m = mode_arg(flags, ap);
  va_end(ap);
  return do_open(IOPROBE_CALL_OPEN64, AT_FDCWD, path, flags, m);
}
EXPORT int openat(int dirfd, const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  mode_t m = mode_arg(flags, ap);
  va_end(ap);
  return do_open(IOPROBE_CALL_OPENAT, dirfd, path, flags, m);
}
EXPORT int openat64(int dirfd, const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  mode_t m = mode_arg(flags, ap);
  va_end(ap);
  return do_open(IOPROBE_CALL_OPENAT64, dirfd, path, flags, m);
}
EXPORT int creat(const char* path, mode_t mode) { return do_open(IOPROBE_CALL_CREAT, AT_FDCWD, path, 0, mode); }
EXPORT int creat64(const char* path, mode_t mode) { return do_open(IOPROBE_CALL_CREAT64, AT_FDCWD, path, 0, mode); }
/* _FORTIFY_SOURCE entry points. */
EXPORT int __open_2(const char* path, int flags) { return do_open(IOPROBE_CALL_OPEN, AT_FDCWD, path, flags, 0); }
EXPORT int __open64_2(const char* path, int flags) { return do_open(IOPROBE_CALL_OPEN64, AT_FDCWD, path, flags, 0); }
EXPORT int __openat_2(int d, const char* path, int flags) { return do_open(IOPROBE_CALL_OPENAT, d, path, flags, 0); }
EXPORT int __openat64_2(int d, const char* path, int flags) {
  return do_open(IOPROBE_CALL_OPENAT64, d, path, flags, 0);
}

/* ---- close ---- */
static void record_close(int call, uint64_t id, int fd, int ret, int err, Call c) {
  IoprobeRec r;
  fill(&r, IOPROBE_REC_CLOSE, call, c, err);
  r.open_id = id;
  r.ret = ret;
  (void)fd;
  emit(&r, NULL);
}

EXPORT int close(int fd) {
  RESOLVE(close);
  uint64_t id = fd_id(fd);
  if (!id && g_on && !t_busy && fd >= 0 && fd < kMaxFds) {
    /* A second close of a data file's descriptor: recorded when the kernel says EBADF. */
    uint64_t last = __atomic_load_n(&g_fds[fd].closed_id, __ATOMIC_RELAXED);
    if (last) {
      t_busy = 1;
      Call c = begin();
      int ret = REAL(close)(fd);
      int err = ret < 0 ? errno : 0;
      if (err == EBADF) record_close(IOPROBE_CALL_CLOSE, last, fd, ret, err, c);
      __atomic_store_n(&g_fds[fd].closed_id, 0, __ATOMIC_RELAXED);
      t_busy = 0;
      if (err) errno = err;
      return ret;
    }
  }
  if (!id || t_busy) return REAL(close)(fd);
  t_busy = 1;
  Call c = begin();
  __atomic_store_n(&g_fds[fd].open_id, 0, __ATOMIC_RELAXED);
  __atomic_store_n(&g_fds[fd].closed_id, id, __ATOMIC_RELAXED);
  int ret = REAL(close)(fd);
  int err = ret < 0 ? errno : 0;
  record_close(IOPROBE_CALL_CLOSE, id, fd, ret, err, c);
  t_busy = 0;
  if (err) errno = err;
  return ret;
}

/* ---- read family ---- */
static void record_read(int call, uint64_t id, uint64_t off, uint64_t len, ssize_t ret, int err, Call c) {
  IoprobeRec r;
  fill(&r, IOPROBE_REC_READ, call, c, err);
  r.open_id = id;
  r.offset = off;
  r.len = len;
  r.ret = ret;
  emit(&r, NULL);
}

static uint64_t iov_len(const struct iovec* iov, int n) {
  uint64_t s = 0;
  for (int i = 0; i < n; ++i) s += iov[i].iov_len;
  return s;
}

/* Reads at the tracked position: the position moves by what was read. */
#define POS_READ(CALL, LEN, EXPR)                                                   \
  uint64_t id = fd_id(fd);                                                          \
  if (!id || t_busy) return (EXPR);                                                 \
  t_busy = 1;                                                                       \
  uint64_t off = __atomic_load_n(&g_fds[fd].pos, __ATOMIC_RELAXED);                 \
  Call c = begin();                                                                 \
  ssize_t ret = (EXPR);                                                             \
  int err = ret < 0 ? errno : 0;                                                    \
  if (ret > 0) __atomic_add_fetch(&g_fds[fd].pos, (uint64_t)ret, __ATOMIC_RELAXED); \
  record_read(CALL, id, off, LEN, ret, err, c);                                     \
  t_busy = 0;                                                                       \
  if (err) errno = err;                                                             \
  return ret;

#define AT_READ(CALL, OFF, LEN, EXPR)                       \
  uint64_t id = fd_id(fd);                                  \
  if (!id || t_busy) return (EXPR);                         \
  t_busy = 1;                                               \
  Call c = begin();                                         \
  ssize_t ret = (EXPR);                                     \
  int err = ret < 0 ? errno : 0;                            \
  record_read(CALL, id, (uint64_t)(OFF), LEN, ret, err, c); \
  t_busy = 0;                                               \
  if (err) errno = err;                                     \
  return ret;

EXPORT ssize_t read(int fd, void* buf, size_t n) {
  RESOLVE(read);
  POS_READ(IOPROBE_CALL_READ, n, REAL(read)(fd, buf, n))
}
EXPORT ssize_t __read_chk(int fd, void* buf, size_t n, size_t buflen) {
  (void)buflen;
  return read(fd, buf, n);
}
EXPORT ssize_t readv(int fd, const struct iovec* iov, int cnt) {
  RESOLVE(readv);
  POS_READ(IOPROBE_CALL_READV, iov_len(iov, cnt), REAL(readv)(fd, iov, cnt))
}
EXPORT ssize_t pread(int fd, void* buf, size_t n, off_t o) {
  RESOLVE(pread);
  AT_READ(IOPROBE_CALL_PREAD, o, n, REAL(pread)(fd, buf, n, o))
}
EXPORT ssize_t pread64(int fd, void* buf, size_t n, off64_t o) {
  RESOLVE(pread64);
  AT_READ(IOPROBE_CALL_PREAD64, o, n, REAL(pread64)(fd, buf, n, o))
}
EXPORT ssize_t __pread_chk(int fd, void* buf, size_t n, off_t o, size_t buflen) {
  (void)buflen;
  return pread(fd, buf, n, o);
}
EXPORT ssize_t __pread64_chk(int fd, void* buf, size_t n, off64_t o, size_t buflen) {
  (void)buflen;
  return pread64(fd, buf, n, o);
}
EXPORT ssize_t preadv(int fd, const struct iovec* iov, int cnt, off_t o) {
  RESOLVE(preadv);
  AT_READ(IOPROBE_CALL_PREADV, o, iov_len(iov, cnt), REAL(preadv)(fd, iov, cnt, o))
}
EXPORT ssize_t preadv64(int fd, const struct iovec* iov, int cnt, off64_t o) {
  RESOLVE(preadv64);
  AT_READ(IOPROBE_CALL_PREADV64, o, iov_len(iov, cnt), REAL(preadv64)(fd, iov, cnt, o))
}
/* preadv2 with offset -1 reads at the current position. */
static ssize_t do_preadv2(int call, int fd, const struct iovec* iov, int cnt, off64_t o, int flags) {
  RESOLVE(preadv2);
  RESOLVE(preadv64v2);
#define PV2                                                                    \
  (call == IOPROBE_CALL_PREADV2 ? REAL(preadv2)(fd, iov, cnt, (off_t)o, flags) \
                                : REAL(preadv64v2)(fd, iov, cnt, o, flags))
  if (o == -1) {
    POS_READ(call, iov_len(iov, cnt), PV2)
  } else {
    AT_READ(call, o, iov_len(iov, cnt), PV2)
  }
#undef PV2
}
EXPORT ssize_t preadv2(int fd, const struct iovec* iov, int cnt, off_t o, int flags) {
  return do_preadv2(IOPROBE_CALL_PREADV2, fd, iov, cnt, o, flags);
}
EXPORT ssize_t preadv64v2(int fd, const struct iovec* iov, int cnt, off64_t o, int flags) {
  return do_preadv2(IOPROBE_CALL_PREADV64V2, fd, iov, cnt, o, flags);
}

/* ---- lseek ---- */
static off64_t do_lseek(int call, int fd, off64_t o, int whence) {
  RESOLVE(lseek64);
  uint64_t id = fd_id(fd);
  if (!id || t_busy) return REAL(lseek64)(fd, o, whence);
  t_busy = 1;
  Call c = begin();
  off64_t ret = REAL(lseek64)(fd, o, whence);
  int err = ret < 0 ? errno : 0;
  if (ret >= 0) __atomic_store_n(&g_fds[fd].pos, (uint64_t)ret, __ATOMIC_RELAXED);
  IoprobeRec r;
  fill(&r, IOPROBE_REC_LSEEK, call, c, err);
  r.open_id = id;
  r.offset = ret >= 0 ? (uint64_t)ret : 0;
  r.ret = ret;
  emit(&r, NULL);
  t_busy = 0;
  if (err) errno = err;
  return ret;
}
EXPORT off_t lseek(int fd, off_t o, int whence) { return do_lseek(IOPROBE_CALL_LSEEK, fd, o, whence); }
EXPORT off64_t lseek64(int fd, off64_t o, int whence) { return do_lseek(IOPROBE_CALL_LSEEK64, fd, o, whence); }

/* ---- stdio ---- */
static FILE* do_fopen(int call, const char* path, const char* mode) {
  int busy = !g_on || t_busy || is_null(path) || (path[0] == '/' && !path_is_data(path));
  Call c = {0, 0};
  if (!busy) {
    t_busy = 1;
    c = begin();
  }
  FILE* f;
  if (call == IOPROBE_CALL_FOPEN) {
    RESOLVE(fopen);
    f = REAL(fopen)(path, mode);
  } else {
    RESOLVE(fopen64);
    f = REAL(fopen64)(path, mode);
  }
  if (busy) return f;
  int err = f ? 0 : errno;
  int fd = f ? fileno(f) : -1;
  if (fd >= 0 && fd < kMaxFds) {
    __atomic_store_n(&g_fds[fd].open_id, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&g_fds[fd].closed_id, 0, __ATOMIC_RELAXED);
  }
  after_open(call, AT_FDCWD, path, fd, err, c);
  t_busy = 0;
  if (err) errno = err;
  return f;
}
EXPORT FILE* fopen(const char* path, const char* mode) { return do_fopen(IOPROBE_CALL_FOPEN, path, mode); }
EXPORT FILE* fopen64(const char* path, const char* mode) { return do_fopen(IOPROBE_CALL_FOPEN64, path, mode); }

EXPORT size_t fread(void* ptr, size_t size, size_t n, FILE* f) {
  RESOLVE(fread);
  int fd = f ? fileno_unlocked(f) : -1;
  uint64_t id = fd_id(fd);
  if (!id || t_busy) return REAL(fread)(ptr, size, n, f);
  t_busy = 1;
  uint64_t off = __atomic_load_n(&g_fds[fd].pos, __ATOMIC_RELAXED);
  Call c = begin();
  size_t got = REAL(fread)(ptr, size, n, f);
  int err = (got < n && ferror_unlocked(f)) ? errno : 0;
  uint64_t bytes = (uint64_t)got * size;
  __atomic_add_fetch(&g_fds[fd].pos, bytes, __ATOMIC_RELAXED);
  record_read(IOPROBE_CALL_FREAD, id, off, (uint64_t)size * n, err ? -1 : (ssize_t)bytes, err, c);
  t_busy = 0;
  if (err) errno = err;
  return got;
}
EXPORT size_t __fread_chk(void* ptr, size_t buflen, size_t size, size_t n, FILE* f) {
  (void)buflen;
  return fread(ptr, size, n, f);
}

static int do_fseek(int call, FILE* f, off64_t o, int whence) {
  RESOLVE(fseeko64);
  int fd = f ? fileno_unlocked(f) : -1;
  uint64_t id = fd_id(fd);
  if (!id || t_busy) return REAL(fseeko64)(f, o, whence);
  t_busy = 1;
  Call c = begin();
  int ret = REAL(fseeko64)(f, o, whence);
  int err = ret < 0 ? errno : 0;
  off64_t pos = ret == 0 ? ftello64(f) : -1;
  if (pos >= 0) __atomic_store_n(&g_fds[fd].pos, (uint64_t)pos, __ATOMIC_RELAXED);
  IoprobeRec r;
  fill(&r, IOPROBE_REC_LSEEK, call, c, err);
  r.open_id = id;
  r.offset = pos >= 0 ? (uint64_t)pos : 0;
  r.ret = ret;
  emit(&r, NULL);
  t_busy = 0;
  if (err) errno = err;
  return ret;
}
EXPORT int fseek(FILE* f, long o, int whence) { return do_fseek(IOPROBE_CALL_FSEEK, f, o, whence); }
EXPORT int fseeko(FILE* f, off_t o, int whence) { return do_fseek(IOPROBE_CALL_FSEEKO, f, o, whence); }
EXPORT int fseeko64(FILE* f, off64_t o, int whence) { return do_fseek(IOPROBE_CALL_FSEEKO64, f, o, whence); }

EXPORT int fclose(FILE* f) {
  RESOLVE(fclose);
  int fd = f ? fileno_unlocked(f) : -1;
  uint64_t id = fd_id(fd);
  if (!id || t_busy) return REAL(fclose)(f);
  t_busy = 1;
  Call c = begin();
  __atomic_store_n(&g_fds[fd].open_id, 0, __ATOMIC_RELAXED);
  __atomic_store_n(&g_fds[fd].closed_id, id, __ATOMIC_RELAXED);
  int ret = REAL(fclose)(f);
  int err = ret != 0 ? errno : 0;
  record_close(IOPROBE_CALL_FCLOSE, id, fd, ret, err, c);
  t_busy = 0;
  if (err) errno = err;
  return ret;
}
