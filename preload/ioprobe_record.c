/* libioprobe_record.so: the LD_PRELOAD interposer behind `ioprobe record`.
 *
 * It wraps the libc calls a data loader reads files with (open family, close, read family, stdio
 * fopen/fread/fclose/fseek, lseek, stat family, mmap/munmap, dup family and fcntl's F_DUPFD so a
 * numpy fromfile's duplicated descriptor stays known) and records each call on a DATA FILE into a
 * per-thread buffer: start (CLOCK_MONOTONIC), duration, the thread's CPU time before and after
 * (CLOCK_THREAD_CPUTIME_ID, so the gap between calls can be split into CPU and waiting), the
 * file, offset, sizes and errno. Buffers are flushed, one write() each, to this process's file
 * DIR/p<PID>-<START_NS>.rec (DIR = $IOPROBE_RECORD_DIR; the layout is trace/record_abi.h) when
 * they fill, when a thread records a call and its oldest unwritten record is older than
 * IOPROBE_REC_FLUSH_AGE_NS (so a process killed by a signal loses at most each thread's last window),
 * when the thread exits, at exit() and _exit(), and before exec. A fork child starts
 * with empty buffers and its own file (pthread_atfork).
 *
 * Which files are data files (the rule, decided from the path before or after the call; the same
 * rule on paths is src/trace/import.cpp's is_data_path, which the importers apply: keep both equal):
 *  - not under /proc, /sys, /dev (but /dev/shm, a tmpfs datasets live on), /run, /etc, /usr, /lib,
 *    /lib64, /bin, /sbin, /opt/conda/lib, nor under the recording directory itself;
 *  - not a POSIX semaphore or PyTorch shared-memory segment (/dev/shm/sem.*, /dev/shm/torch_*);
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
 * faults on mappings (only the mapped range is recorded). Plain C, no exceptions. This file holds
 * the state, buffers, output and process life; the wrappers are in record_io.c and record_meta.c. */
#include "record_internal.h"

FdSlot* g_fds;   /* kMaxFds entries, mmap'ed */
MapSlot* g_maps; /* kMaxMaps entries */
static ThreadBuf* g_threads[kMaxThreads];
int g_on; /* recording enabled */
static char g_dir[PATH_MAX];
static size_t g_dir_len;
static int g_out_fd = -1; /* this process's file */
static int g_out_lock;
int32_t g_pid;
static int32_t g_ppid, g_rank, g_forked;
static int64_t g_start_ns;
uint32_t g_next_open;
static pthread_key_t g_key;

static TLS ThreadBuf* t_buf;
TLS int t_busy;
TLS int64_t t_last_end_ns, t_last_cpu_end_ns;
TLS int64_t t_estimate_ns;

void* resolve(const char* name) {
  void* p = dlsym(RTLD_NEXT, name);
  if (!p) p = dlvsym(RTLD_NEXT, name, IOPROBE_GLIBC_BASE);
  return p;
}

/* A null check the compiler cannot drop for a parameter libc's headers declare nonnull. */
__attribute__((noinline)) int is_null(const void* p) { return p == NULL; }

static int32_t my_tid(void) { return (int32_t)syscall(SYS_gettid); }

static int starts_with(const char* s, const char* p) { return strncmp(s, p, strlen(p)) == 0; }
static int ends_with(const char* s, size_t n, const char* suf) {
  size_t m = strlen(suf);
  return n >= m && memcmp(s + n - m, suf, m) == 0;
}

/* The data-file rule on a path (see the top of this file). */
int path_is_data(const char* p) {
  if (!p || !*p) return 0;
  size_t n = strlen(p);
  if (p[n - 1] == '/') return 0;
  static const char* const kPrefixes[] = {"/proc/", "/sys/",   "/dev/", "/run/",  "/etc/",          "/usr/",
                                          "/lib/",  "/lib64/", "/bin/", "/sbin/", "/opt/conda/lib/"};
  for (size_t i = 0; i < sizeof kPrefixes / sizeof *kPrefixes; ++i)
    if (starts_with(p, kPrefixes[i]) && !starts_with(p, "/dev/shm/")) return 0;
  if (starts_with(p, "/dev/shm/sem.") || starts_with(p, "/dev/shm/torch_")) return 0;
  if (g_dir_len && strncmp(p, g_dir, g_dir_len) == 0) return 0;
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
      IoprobeRecFileHeader h =
          {IOPROBE_REC_FILE_MAGIC, IOPROBE_REC_VERSION, g_pid, g_ppid, g_rank, g_forked, g_start_ns};
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
  /* A vfork child (Python's subprocess, posix_spawn) shares the parent's memory: it must neither
   * stop the parent's recording nor write the parent's buffers. Its pid is not g_pid (vfork runs
   * no atfork handler). */
  if (!g_on || (int32_t)syscall(SYS_getpid) != g_pid) return 0;
  /* Mappings still in place: how much of each was touched, before the process image goes. */
  int was_busy = t_busy;
  t_busy = 1;
  for (int i = 0; i < kMaxMaps; ++i) {
    uintptr_t addr = __atomic_load_n(&g_maps[i].addr, __ATOMIC_ACQUIRE);
    uint64_t id = __atomic_load_n(&g_maps[i].open_id, __ATOMIC_ACQUIRE);
    if (addr && id) emit_touched(id, addr, g_maps[i].len);
  }
  t_busy = was_busy;
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
  void* m = (void*)syscall(SYS_mmap, NULL, sizeof(ThreadBuf), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
                           0);
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

/* Appends one record (and its path) to the thread's buffer, flushing first when it would not fit,
 * and after it when the buffer's oldest record is older than IOPROBE_REC_FLUSH_AGE_NS (the record's own
 * start time is the clock: no extra clock read on the hot path). */
void emit(const IoprobeRec* r, const char* path) {
  ThreadBuf* b = my_buf();
  if (!b) return;
  size_t plen = r->path_len;
  size_t total = (sizeof *r + plen + 7) & ~(size_t)7;
  if (b->used + total > sizeof b->data) flush_buf(b);
  if (b->used == 0) b->oldest_ns = r->t_ns;
  char* at = b->data + b->used;
  memcpy(at, r, sizeof *r);
  if (plen) memcpy(at + sizeof *r, path, plen);
  memset(at + sizeof *r + plen, 0, total - sizeof *r - plen);
  __atomic_store_n(&b->used, b->used + total, __ATOMIC_RELEASE);
  if (r->t_ns - b->oldest_ns >= IOPROBE_REC_FLUSH_AGE_NS) flush_buf(b);
}

/* Makes `path` absolute into `out` (dirfd-relative paths through /proc/self/fd). */
const char* absolute(int dirfd, const char* path, char* out, size_t cap) {
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
void after_open(int call, int dirfd, const char* path, int fd, int err, Call c) {
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
  /* The parent's mappings are reported by the parent; the child reports what it maps itself. */
  for (int i = 0; i < kMaxMaps; ++i) g_maps[i].addr = 0;
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
