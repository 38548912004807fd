/* Internal declarations shared by the interposer's files (preload/ioprobe_record.c: state,
 * buffers, output, process life; record_io.c: open/close/read/lseek/stdio wrappers;
 * record_meta.c: stat, mmap and descriptor-copy wrappers). Hidden symbols: the library exports
 * only the wrapped libc names and ioprobe_record_mark/ioprobe_record_flush. */
#ifndef IOPROBE_PRELOAD_RECORD_INTERNAL_H
#define IOPROBE_PRELOAD_RECORD_INTERNAL_H

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
#include <sys/auxv.h>
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
  uint64_t used;     /* committed record bytes (release-stored by the owner) */
  int64_t oldest_ns; /* CLOCK_MONOTONIC start of the oldest record not yet written (owner only) */
  char data[kBufBytes];
} ThreadBuf;

typedef struct MapSlot {
  uintptr_t addr; /* 0 = free */
  uint64_t len;
  uint64_t open_id;
} MapSlot;

/* State (defined in ioprobe_record.c). */
extern FdSlot* g_fds;
extern MapSlot* g_maps;
extern int g_on;
extern int32_t g_pid;
extern uint32_t g_next_open;
extern TLS int t_busy;
extern TLS int64_t t_last_end_ns, t_last_cpu_end_ns;

/* ---- the real functions ---- */
#define REAL(name) real_##name
/* Each file resolves the real functions it calls, lazily (a wrapper may run before the constructor). */
#define DECL_REAL(ret, name, args) static __attribute__((unused)) ret(*real_##name) args
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
void* resolve(const char* name);
#define RESOLVE(name)                                           \
  do {                                                          \
    if (!real_##name) *(void**)(&real_##name) = resolve(#name); \
  } while (0)

/* A null check the compiler cannot drop for a parameter libc's headers declare nonnull. */
int is_null(const void* p);

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
/* The data-file rule (ioprobe_record.c's top comment). */
int path_is_data(const char* p);
/* Appends a record (and its path) to the calling thread's buffer. */
void emit(const IoprobeRec* r, const char* path);
/* Makes `path` absolute into `out`; returns `path` itself when it already is (or on failure). */
const char* absolute(int dirfd, const char* path, char* out, size_t cap);

/* A call in progress. */
typedef struct Call {
  int64_t t0, c0;
} Call;
/* Thread CPU time is a system call (CLOCK_THREAD_CPUTIME_ID has no vDSO path: about 0.5 us each
 * where tools/bench-record measured it), so it is read only where it tells something. A gap before a call, or a
 * call itself, shorter than kShortGapNs is counted as CPU (its wall time added to the last CPU
 * reading) instead of being read, until kMaxEstimateNs of such estimates have added up since the
 * last real reading; a longer gap or call, or the budget used up, reads the clock. So a page-cache
 * read sequence (open, fstat, read, close) costs about one reading, and a gap's CPU time is off by
 * at most kMaxEstimateNs (a short call that waited, counted as CPU). */
enum { kShortGapNs = 20000, kMaxEstimateNs = 200000 };
extern TLS int64_t t_estimate_ns; /* estimated CPU ns since this thread's last real reading */

static inline Call begin(void) {
  Call c;
  c.t0 = now_ns();
  int64_t gap = c.t0 - t_last_end_ns;
  if (t_last_end_ns && gap < kShortGapNs && t_estimate_ns + gap < kMaxEstimateNs && t_last_cpu_end_ns >= 0) {
    c.c0 = t_last_cpu_end_ns + gap;
    t_estimate_ns += gap;
  } else {
    c.c0 = cpu_ns();
    t_estimate_ns = 0;
  }
  return c;
}
static inline void fill(IoprobeRec* r, int kind, int call, Call c, int err) {
  int64_t t1 = now_ns();
  int64_t dur = t1 - c.t0;
  int64_t c1;
  if (dur < kShortGapNs && t_estimate_ns + dur < kMaxEstimateNs && c.c0 >= 0) {
    c1 = c.c0 + dur;
    t_estimate_ns += dur;
  } else {
    c1 = cpu_ns();
    t_estimate_ns = 0;
  }
  memset(r, 0, sizeof *r);
  r->kind = (uint8_t)kind;
  r->call = (uint8_t)call;
  r->err = err;
  r->t_ns = c.t0;
  r->dur_ns = dur;
  r->cpu_start_ns = c.c0;
  r->cpu_end_ns = c1;
  t_last_end_ns = t1;
  t_last_cpu_end_ns = c1;
}

static inline uint64_t fd_id(int fd) {
  if (!g_on || fd < 0 || fd >= kMaxFds) return 0;
  return __atomic_load_n(&g_fds[fd].open_id, __ATOMIC_RELAXED);
}

/* Records how much of the mapping [addr, addr+len) of open `id` the process touched (a
 * IOPROBE_REC_TOUCHED record; record_meta.c). */
void emit_touched(uint64_t id, uintptr_t addr, uint64_t len);

/* After an open: decides (a regular data file), assigns an open id, records. */
void after_open(int call, int dirfd, const char* path, int fd, int err, Call c);

#endif
