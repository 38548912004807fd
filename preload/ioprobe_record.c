/* libioprobe_record.so: the LD_PRELOAD interposer behind `ioprobe record`.
 *
 * It wraps the libc calls a data loader reads files with (open family, close, read family, stdio
 * fopen/fread/fclose/fseek, lseek, stat family, mmap/munmap, dup family and fcntl's F_DUPFD so a
 * numpy fromfile's duplicated descriptor stays known) and records each call on a DATA FILE into a
 * per-thread buffer: start (CLOCK_MONOTONIC), duration, the thread's CPU time before and after
 * (CLOCK_THREAD_CPUTIME_ID, so the gap between calls can be split into CPU and waiting), the
 * file, offset, sizes and errno. Buffers are flushed, one write() each, to this process's file
 * DIR/p<PID>-<START_NS>.rec (DIR = $IOPROBE_RECORD_DIR; the layout is trace/record_abi.h) when
 * they fill, when the thread exits, at exit() and _exit(), and before exec. A fork child starts
 * with empty buffers and its own file (pthread_atfork).
 *
 * Which files are data files (the rule, decided from the path before or after the call):
 *  - not under /proc, /sys, /dev, /run, /etc, /usr, /lib, /lib64, /bin, /sbin, /opt/conda/lib,
 *    nor under the recording directory itself;
 *  - no path component "site-packages", "dist-packages", "__pycache__" or ".pyenv";
 *  - not ending in .py, .pyc, .so, or containing ".so." (shared libraries and Python imports);
 *  - not made new by the open itself (O_CREAT|O_EXCL, as tempfile does, or O_TMPFILE);
 *  - and, for a successful open, a regular file (fstat after the open: directories, pipes and
 *    sockets are not data files). Path-based stats are recorded only when they succeed on a
 *    regular file; a failed open of a path the rule accepts is recorded with its errno.
 * Calls on other descriptors pass straight through after one table look-up.
 *
 * Hot path: no allocation after a thread's first recorded call (its buffer is mmap'ed then), no
 * locks; the descriptor table is a fixed mmap'ed array of atomics. Only syscalls and atomics are
 * used inside the wrappers, so they are async-signal-safe; a call made while the same thread is
 * recording (a signal handler's read) passes through unrecorded.
 *
 * Not seen: descriptors beyond 65536, the position of a descriptor shared with another process
 * after fork (each process tracks its own copy), reads through io_uring or libaio, and page
 * faults on mappings (only the mapped range is recorded). Plain C, no exceptions. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "trace/record_abi.h"

#define EXPORT __attribute__((visibility("default")))
#define TLS __thread __attribute__((tls_model("initial-exec")))

enum { kMaxFds = 65536, kBufBytes = 512 * 1024, kMaxThreads = 4096, kMaxMaps = 4096 };

/* One descriptor: 0 = not a data file, else the open id (pid << 32 | n). pos = the tracked file
 * position for read/readv/fread. */
typedef struct FdSlot {
  uint64_t open_id;
  uint64_t pos;
  uint64_t closed_id; /* the data file this descriptor last named, after its close (a second close) */
} FdSlot;

typedef struct ThreadBuf {
  int32_t tid;
  uint64_t used; /* committed record bytes (release-stored by the owner) */
  char data[kBufBytes];
} ThreadBuf;

typedef struct MapSlot {
  uintptr_t addr; /* 0 = free */
  uint64_t len;
  uint64_t open_id;
} MapSlot;

static FdSlot* g_fds;             /* kMaxFds entries, mmap'ed */
static MapSlot* g_maps;           /* kMaxMaps entries */
static ThreadBuf* g_threads[kMaxThreads];
static int g_on;                  /* recording enabled */
static char g_dir[PATH_MAX];
static size_t g_dir_len;
static int g_out_fd = -1;         /* this process's file */
static int g_out_lock;
static int32_t g_pid, g_ppid, g_rank, g_forked;
static int64_t g_start_ns;
static uint32_t g_next_open;
static pthread_key_t g_key;

static TLS ThreadBuf* t_buf;
static TLS int t_busy;

/* ---- the real functions ---- */
#define REAL(name) real_##name
#define DECL_REAL(ret, name, args) static ret(*real_##name) args
DECL_REAL(int, open, (const char*, int, ...));
DECL_REAL(int, open64, (const char*, int, ...));
DECL_REAL(int, openat, (int, const char*, int, ...));
DECL_REAL(int, openat64, (int, const char*, int, ...));
DECL_REAL(int, creat, (const char*, mode_t));
DECL_REAL(int, creat64, (const char*, mode_t));
DECL_REAL(int, close, (int));
DECL_REAL(ssize_t, read, (int, void*, size_t));
DECL_REAL(ssize_t, pread, (int, void*, size_t, off_t));
DECL_REAL(ssize_t, pread64, (int, void*, size_t, off64_t));
DECL_REAL(ssize_t, readv, (int, const struct iovec*, int));
DECL_REAL(ssize_t, preadv, (int, const struct iovec*, int, off_t));
DECL_REAL(ssize_t, preadv64, (int, const struct iovec*, int, off64_t));
DECL_REAL(ssize_t, preadv2, (int, const struct iovec*, int, off_t, int));
DECL_REAL(ssize_t, preadv64v2, (int, const struct iovec*, int, off64_t, int));
DECL_REAL(FILE*, fopen, (const char*, const char*));
DECL_REAL(FILE*, fopen64, (const char*, const char*));
DECL_REAL(size_t, fread, (void*, size_t, size_t, FILE*));
DECL_REAL(int, fclose, (FILE*));
DECL_REAL(int, fseeko64, (FILE*, off64_t, int));
DECL_REAL(off64_t, lseek64, (int, off64_t, int));
DECL_REAL(int, stat, (const char*, struct stat*));
DECL_REAL(int, stat64, (const char*, struct stat64*));
DECL_REAL(int, fstat, (int, struct stat*));
DECL_REAL(int, fstat64, (int, struct stat64*));
DECL_REAL(int, lstat, (const char*, struct stat*));
DECL_REAL(int, lstat64, (const char*, struct stat64*));
DECL_REAL(int, fstatat, (int, const char*, struct stat*, int));
DECL_REAL(int, fstatat64, (int, const char*, struct stat64*, int));
DECL_REAL(int, statx, (int, const char*, int, unsigned, struct statx*));
DECL_REAL(int, __xstat, (int, const char*, struct stat*));
DECL_REAL(int, __xstat64, (int, const char*, struct stat64*));
DECL_REAL(int, __fxstat, (int, int, struct stat*));
DECL_REAL(int, __fxstat64, (int, int, struct stat64*));
DECL_REAL(int, __lxstat, (int, const char*, struct stat*));
DECL_REAL(int, __lxstat64, (int, const char*, struct stat64*));
DECL_REAL(int, __fxstatat, (int, int, const char*, struct stat*, int));
DECL_REAL(int, __fxstatat64, (int, int, const char*, struct stat64*, int));
DECL_REAL(void*, mmap64, (void*, size_t, int, int, int, off64_t));
DECL_REAL(int, munmap, (void*, size_t));
DECL_REAL(int, dup, (int));
DECL_REAL(int, dup2, (int, int));
DECL_REAL(int, dup3, (int, int, int));
DECL_REAL(int, fcntl, (int, int, ...));
DECL_REAL(int, fcntl64, (int, int, ...));
DECL_REAL(void, _exit, (int));
DECL_REAL(int, execve, (const char*, char* const[], char* const[]));
DECL_REAL(int, execv, (const char*, char* const[]));
DECL_REAL(int, execvp, (const char*, char* const[]));
DECL_REAL(int, execvpe, (const char*, char* const[], char* const[]));

/* The stat entry points before glibc 2.33 (__xstat...) are compat symbols now: dlsym finds only
 * default versions, so those are looked up by their first version too. */
#if defined(__x86_64__)
#define IOPROBE_GLIBC_BASE "GLIBC_2.2.5"
#else
#define IOPROBE_GLIBC_BASE "GLIBC_2.17"
#endif
static void* resolve(const char* name) {
  void* p = dlsym(RTLD_NEXT, name);
  if (!p) p = dlvsym(RTLD_NEXT, name, IOPROBE_GLIBC_BASE);
  return p;
}
#define RESOLVE(name)                                                    \
  do {                                                                   \
    if (!real_##name) *(void**)(&real_##name) = resolve(#name);          \
  } while (0)

/* A null check the compiler cannot drop for a parameter libc's headers declare nonnull. */
static __attribute__((noinline)) int is_null(const void* p) { return p == NULL; }

/* ---- clocks and small helpers (syscalls only) ---- */
static inline int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}
static inline int64_t cpu_ns(void) {
  struct timespec ts;
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return -1;
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}
static int32_t my_tid(void) { return (int32_t)syscall(SYS_gettid); }

static int starts_with(const char* s, const char* p) { return strncmp(s, p, strlen(p)) == 0; }
static int ends_with(const char* s, size_t n, const char* suf) {
  size_t m = strlen(suf);
  return n >= m && memcmp(s + n - m, suf, m) == 0;
}

/* The data-file rule on a path (see the top of this file). */
static int path_is_data(const char* p) {
  if (!p || !*p) return 0;
  static const char* const kPrefixes[] = {"/proc/", "/sys/", "/dev/", "/run/", "/etc/", "/usr/", "/lib/",
                                          "/lib64/", "/bin/", "/sbin/", "/opt/conda/lib/"};
  for (size_t i = 0; i < sizeof kPrefixes / sizeof *kPrefixes; ++i)
    if (starts_with(p, kPrefixes[i])) return 0;
  if (g_dir_len && strncmp(p, g_dir, g_dir_len) == 0) return 0;
  size_t n = strlen(p);
  if (ends_with(p, n, ".py") || ends_with(p, n, ".pyc") || ends_with(p, n, ".so") || strstr(p, ".so.")) return 0;
  if (strstr(p, "site-packages") || strstr(p, "dist-packages") || strstr(p, "__pycache__") || strstr(p, "/.pyenv/"))
    return 0;
  return 1;
}

/* ---- output ---- */
static void write_all(int fd, const void* data, size_t n) {
  const char* p = (const char*)data;
  while (n > 0) {
    ssize_t w = syscall(SYS_write, fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    p += w;
    n -= (size_t)w;
  }
}

static void put_dec(char** out, uint64_t v) {
  char tmp[24];
  int n = 0;
  do tmp[n++] = (char)('0' + v % 10), v /= 10;
  while (v);
  while (n) *(*out)++ = tmp[--n];
}

/* Opens this process's file under a spin lock (first flush only). */
static int out_fd(void) {
  int fd = __atomic_load_n(&g_out_fd, __ATOMIC_ACQUIRE);
  if (fd >= 0) return fd;
  while (__atomic_exchange_n(&g_out_lock, 1, __ATOMIC_ACQUIRE)) sched_yield();
  fd = g_out_fd;
  if (fd < 0) {
    char name[PATH_MAX + 64];
    char* o = name;
    memcpy(o, g_dir, g_dir_len);
    o += g_dir_len;
    *o++ = '/';
    *o++ = 'p';
    put_dec(&o, (uint64_t)g_pid);
    *o++ = '-';
    put_dec(&o, (uint64_t)g_start_ns);
    memcpy(o, ".rec", 5);
    fd = (int)syscall(SYS_openat, AT_FDCWD, name, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd >= 0) {
      IoprobeRecFileHeader h = {IOPROBE_REC_FILE_MAGIC, IOPROBE_REC_VERSION, g_pid, g_ppid, g_rank, g_forked,
                                g_start_ns};
      write_all(fd, &h, sizeof h);
      __atomic_store_n(&g_out_fd, fd, __ATOMIC_RELEASE);
    }
  }
  __atomic_store_n(&g_out_lock, 0, __ATOMIC_RELEASE);
  return fd;
}

/* Writes a buffer's committed records as one chunk (header and records in one writev). */
static void flush_buf(ThreadBuf* b) {
  if (!b) return;
  uint64_t used = __atomic_load_n(&b->used, __ATOMIC_ACQUIRE);
  if (used == 0) return;
  int fd = out_fd();
  if (fd >= 0) {
    IoprobeRecChunk c = {IOPROBE_REC_CHUNK_MAGIC, b->tid, used};
    struct iovec iov[2] = {{&c, sizeof c}, {b->data, used}};
    ssize_t w = syscall(SYS_writev, fd, iov, 2);
    (void)w;
  }
  __atomic_store_n(&b->used, 0, __ATOMIC_RELEASE);
}

static void flush_all(void) {
  for (int i = 0; i < kMaxThreads; ++i) flush_buf(__atomic_load_n(&g_threads[i], __ATOMIC_ACQUIRE));
}

/* The last flush of a process image (exit, _exit, exec): recording stops first, so a second
 * final flush (exit's destructor after _exit's) writes nothing twice. Returns whether it ran. */
static int final_flush(void) {
  if (!__atomic_exchange_n(&g_on, 0, __ATOMIC_ACQ_REL)) return 0;
  flush_all();
  return 1;
}

static void thread_exit(void* p) {
  ThreadBuf* b = (ThreadBuf*)p;
  flush_buf(b);
  for (int i = 0; i < kMaxThreads; ++i)
    if (__atomic_load_n(&g_threads[i], __ATOMIC_ACQUIRE) == b) __atomic_store_n(&g_threads[i], NULL, __ATOMIC_RELEASE);
  if (t_buf == b) t_buf = NULL;
  syscall(SYS_munmap, b, sizeof *b);
}

/* The calling thread's buffer, made on its first record. */
static ThreadBuf* my_buf(void) {
  if (t_buf) return t_buf;
  void* m = (void*)syscall(SYS_mmap, NULL, sizeof(ThreadBuf), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                           -1, 0);
  if (m == MAP_FAILED) return NULL;
  ThreadBuf* b = (ThreadBuf*)m;
  b->tid = my_tid();
  b->used = 0;
  for (int i = 0; i < kMaxThreads; ++i) {
    ThreadBuf* expected = NULL;
    if (__atomic_compare_exchange_n(&g_threads[i], &expected, b, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) break;
  }
  t_buf = b;
  pthread_setspecific(g_key, b);
  return b;
}

/* Appends one record (and its path) to the thread's buffer, flushing first when it would not fit. */
static void emit(const IoprobeRec* r, const char* path) {
  ThreadBuf* b = my_buf();
  if (!b) return;
  size_t plen = r->path_len;
  size_t total = (sizeof *r + plen + 7) & ~(size_t)7;
  if (b->used + total > sizeof b->data) flush_buf(b);
  char* at = b->data + b->used;
  memcpy(at, r, sizeof *r);
  if (plen) memcpy(at + sizeof *r, path, plen);
  memset(at + sizeof *r + plen, 0, total - sizeof *r - plen);
  __atomic_store_n(&b->used, b->used + total, __ATOMIC_RELEASE);
}

/* A call in progress. */
typedef struct Call {
  int64_t t0, c0;
} Call;
static inline Call begin(void) {
  Call c = {now_ns(), cpu_ns()};
  return c;
}
static inline void fill(IoprobeRec* r, int kind, int call, Call c, int err) {
  int64_t t1 = now_ns();
  int64_t c1 = cpu_ns();
  memset(r, 0, sizeof *r);
  r->kind = (uint8_t)kind;
  r->call = (uint8_t)call;
  r->err = err;
  r->t_ns = c.t0;
  r->dur_ns = t1 - c.t0;
  r->cpu_start_ns = c.c0;
  r->cpu_end_ns = c1;
}

static inline uint64_t fd_id(int fd) {
  if (!g_on || fd < 0 || fd >= kMaxFds) return 0;
  return __atomic_load_n(&g_fds[fd].open_id, __ATOMIC_RELAXED);
}

/* Makes `path` absolute into `out` (dirfd-relative paths through /proc/self/fd). */
static const char* absolute(int dirfd, const char* path, char* out, size_t cap) {
  if (path[0] == '/') return path;
  size_t n;
  if (dirfd == AT_FDCWD) {
    if (syscall(SYS_getcwd, out, cap) < 0) return path;
    n = strlen(out);
  } else {
    char link[64];
    char* o = link;
    memcpy(o, "/proc/self/fd/", 14);
    o += 14;
    put_dec(&o, (uint64_t)dirfd);
    *o = 0;
    ssize_t r = syscall(SYS_readlinkat, AT_FDCWD, link, out, cap - 1);
    if (r < 0) return path;
    n = (size_t)r;
    out[n] = 0;
  }
  size_t pl = strlen(path);
  if (n + 1 + pl + 1 > cap) return path;
  if (n == 0 || out[n - 1] != '/') out[n++] = '/';
  memcpy(out + n, path, pl + 1);
  return out;
}

/* After an open: decide (regular data file), assign an open id, record. */
static void after_open(int call, int dirfd, const char* path, int fd, int err, Call c) {
  char buf[PATH_MAX];
  const char* abs = absolute(dirfd, path, buf, sizeof buf);
  if (!path_is_data(abs)) return;
  IoprobeRec r;
  uint64_t size = 0;
  uint64_t id = 0;
  if (fd >= 0) {
    struct stat st;
    if (syscall(SYS_fstat, fd, &st) != 0 || !S_ISREG(st.st_mode)) return;
    size = (uint64_t)st.st_size;
    id = ((uint64_t)(uint32_t)g_pid << 32) | __atomic_add_fetch(&g_next_open, 1, __ATOMIC_RELAXED);
    if (fd < kMaxFds) {
      __atomic_store_n(&g_fds[fd].pos, 0, __ATOMIC_RELAXED);
      __atomic_store_n(&g_fds[fd].open_id, id, __ATOMIC_RELAXED);
    }
  }
  fill(&r, IOPROBE_REC_OPEN, call, c, err);
  r.open_id = id;
  r.ret = fd;
  r.size = size;
  size_t pl = strlen(abs);
  r.path_len = (uint16_t)(pl > 4095 ? 4095 : pl);
  emit(&r, abs);
}

#define GUARD_BEGIN \
  if (!g_on || t_busy) goto passthrough; \
  t_busy = 1;
#define GUARD_END t_busy = 0;

/* ---- open family ---- */
static int do_open(int call, int dirfd, const char* path, int flags, mode_t mode) {
  int fd;
  int busy = !g_on || t_busy || is_null(path);
  Call c = {0, 0};
  if (!busy) {
    t_busy = 1;
    c = begin();
  }
  switch (call) {
    case IOPROBE_CALL_OPEN: RESOLVE(open); fd = REAL(open)(path, flags, mode); break;
    case IOPROBE_CALL_OPEN64: RESOLVE(open64); fd = REAL(open64)(path, flags, mode); break;
    case IOPROBE_CALL_OPENAT: RESOLVE(openat); fd = REAL(openat)(dirfd, path, flags, mode); break;
    case IOPROBE_CALL_OPENAT64: RESOLVE(openat64); fd = REAL(openat64)(dirfd, path, flags, mode); break;
    case IOPROBE_CALL_CREAT: RESOLVE(creat); fd = REAL(creat)(path, mode); break;
    default: RESOLVE(creat64); fd = REAL(creat64)(path, mode); break;
  }
  if (busy) return fd;
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

static mode_t mode_arg(int flags, va_list ap) {
  return (flags & (O_CREAT | O_TMPFILE)) ? (mode_t)va_arg(ap, int) : 0;
}

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
#define POS_READ(CALL, LEN, EXPR)                                               \
  uint64_t id = fd_id(fd);                                                      \
  if (!id || t_busy) return (EXPR);                                             \
  t_busy = 1;                                                                   \
  uint64_t off = __atomic_load_n(&g_fds[fd].pos, __ATOMIC_RELAXED);             \
  Call c = begin();                                                             \
  ssize_t ret = (EXPR);                                                         \
  int err = ret < 0 ? errno : 0;                                                \
  if (ret > 0) __atomic_add_fetch(&g_fds[fd].pos, (uint64_t)ret, __ATOMIC_RELAXED); \
  record_read(CALL, id, off, LEN, ret, err, c);                                 \
  t_busy = 0;                                                                   \
  if (err) errno = err;                                                         \
  return ret;

#define AT_READ(CALL, OFF, LEN, EXPR)                \
  uint64_t id = fd_id(fd);                           \
  if (!id || t_busy) return (EXPR);                  \
  t_busy = 1;                                        \
  Call c = begin();                                  \
  ssize_t ret = (EXPR);                              \
  int err = ret < 0 ? errno : 0;                     \
  record_read(CALL, id, (uint64_t)(OFF), LEN, ret, err, c); \
  t_busy = 0;                                        \
  if (err) errno = err;                              \
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
#define PV2 (call == IOPROBE_CALL_PREADV2 ? REAL(preadv2)(fd, iov, cnt, (off_t)o, flags) \
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
  int busy = !g_on || t_busy || is_null(path);
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

/* ---- stat family ---- */
static void record_stat(int call, uint64_t id, int dirfd, const char* path, int ret, int err, int is_reg,
                        uint64_t size, Call c) {
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
#define PATH_STAT(CALL, DIRFD, PATH, ST, EXPR)                                       \
  if (!g_on || t_busy || is_null(PATH) || ((PATH)[0] == '/' && !path_is_data(PATH))) return (EXPR); \
  t_busy = 1;                                                                         \
  Call c = begin();                                                                   \
  int ret = (EXPR);                                                                   \
  int err = ret != 0 ? errno : 0;                                                     \
  record_stat(CALL, 0, DIRFD, PATH, ret, err, ret == 0 && S_ISREG((ST)->st_mode), ret == 0 ? (uint64_t)(ST)->st_size : 0, c); \
  t_busy = 0;                                                                         \
  if (err) errno = err;                                                               \
  return ret;

#define FD_STAT(CALL, FD, ST, EXPR)                                       \
  uint64_t id = fd_id(FD);                                                \
  if (!id || t_busy) return (EXPR);                                       \
  t_busy = 1;                                                             \
  Call c = begin();                                                       \
  int ret = (EXPR);                                                       \
  int err = ret != 0 ? errno : 0;                                         \
  record_stat(CALL, id, AT_FDCWD, NULL, ret, err, 1, ret == 0 ? (uint64_t)(ST)->st_size : 0, c); \
  t_busy = 0;                                                             \
  if (err) errno = err;                                                   \
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
  record_stat(IOPROBE_CALL_STATX, 0, d, p, ret, err, ret == 0 && S_ISREG(sx->stx_mode), ret == 0 ? sx->stx_size : 0,
              c);
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

/* ---- marks (the Python side calls this through ctypes) ---- */
EXPORT void ioprobe_record_mark(int kind, long long value) {
  if (!g_on || t_busy) return;
  t_busy = 1;
  IoprobeRec r;
  memset(&r, 0, sizeof r);
  r.kind = IOPROBE_REC_MARK;
  r.call = (uint8_t)kind;
  r.t_ns = now_ns();
  r.cpu_start_ns = r.cpu_end_ns = -1;
  r.ret = value;
  emit(&r, NULL);
  t_busy = 0;
}
/* Flushes every thread's buffer of this process now. */
EXPORT void ioprobe_record_flush(void) {
  if (g_on) flush_all();
}

/* ---- process life: exit, exec, fork ---- */
EXPORT void _exit(int code) {
  RESOLVE(_exit);
  final_flush();
  REAL(_exit)(code);
  __builtin_unreachable();
}
EXPORT int execve(const char* p, char* const argv[], char* const envp[]) {
  RESOLVE(execve);
  int was_on = final_flush();
  int r = REAL(execve)(p, argv, envp);
  if (was_on) __atomic_store_n(&g_on, 1, __ATOMIC_RELEASE); /* exec failed: this image goes on */
  return r;
}
EXPORT int execv(const char* p, char* const argv[]) {
  RESOLVE(execv);
  int was_on = final_flush();
  int r = REAL(execv)(p, argv);
  if (was_on) __atomic_store_n(&g_on, 1, __ATOMIC_RELEASE); /* exec failed: this image goes on */
  return r;
}
EXPORT int execvp(const char* p, char* const argv[]) {
  RESOLVE(execvp);
  int was_on = final_flush();
  int r = REAL(execvp)(p, argv);
  if (was_on) __atomic_store_n(&g_on, 1, __ATOMIC_RELEASE); /* exec failed: this image goes on */
  return r;
}
EXPORT int execvpe(const char* p, char* const argv[], char* const envp[]) {
  RESOLVE(execvpe);
  int was_on = final_flush();
  int r = REAL(execvpe)(p, argv, envp);
  if (was_on) __atomic_store_n(&g_on, 1, __ATOMIC_RELEASE); /* exec failed: this image goes on */
  return r;
}

/* Before fork: the forking thread's buffer is flushed, so the child's copy of it is empty; the
 * other threads' buffers stay the parent's (they do not exist in the child, which forgets them). */
static void atfork_prepare(void) {
  if (g_on) flush_buf(t_buf);
}
static void atfork_child(void) {
  g_ppid = g_pid;
  g_pid = (int32_t)syscall(SYS_getpid);
  g_forked = 1;
  g_start_ns = now_ns();
  g_out_fd = -1; /* the parent's descriptor stays open (O_CLOEXEC only on exec); not written */
  g_out_lock = 0;
  for (int i = 0; i < kMaxThreads; ++i) {
    ThreadBuf* b = g_threads[i];
    if (b && b != t_buf) g_threads[i] = NULL; /* other threads do not exist in the child */
  }
  if (t_buf) {
    t_buf->tid = my_tid();
    t_buf->used = 0;
  }
}

static int32_t env_rank(void) {
  static const char* const kVars[] = {"RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID"};
  for (size_t i = 0; i < sizeof kVars / sizeof *kVars; ++i) {
    const char* v = getenv(kVars[i]);
    if (v && *v) return (int32_t)atoi(v);
  }
  return 0;
}

__attribute__((constructor)) static void ioprobe_record_init(void) {
  const char* dir = getenv(IOPROBE_REC_ENV_DIR);
  if (!dir || !*dir || strlen(dir) >= sizeof g_dir - 64) return;
  g_dir_len = strlen(dir);
  memcpy(g_dir, dir, g_dir_len + 1);
  void* fds = (void*)syscall(SYS_mmap, NULL, sizeof(FdSlot) * kMaxFds, PROT_READ | PROT_WRITE,
                             MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  void* maps = (void*)syscall(SYS_mmap, NULL, sizeof(MapSlot) * kMaxMaps, PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (fds == MAP_FAILED || maps == MAP_FAILED) return;
  g_fds = (FdSlot*)fds;
  g_maps = (MapSlot*)maps;
  g_pid = (int32_t)syscall(SYS_getpid);
  g_ppid = (int32_t)syscall(SYS_getppid);
  g_rank = env_rank();
  g_start_ns = now_ns();
  pthread_key_create(&g_key, thread_exit);
  pthread_atfork(atfork_prepare, NULL, atfork_child);
  g_on = 1;
}

__attribute__((destructor)) static void ioprobe_record_fini(void) { final_flush(); }
