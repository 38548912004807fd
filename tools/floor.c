// The floor for reading whole files: only the system calls one sample needs, and nothing else.
// One thread per worker, each reading its share of a file list (strided, in the list's order):
// open, one read of the file's known size into a buffer reused for every file, close. No queues,
// no statistics, no per-file allocation. ioprobe's loader is compared with this, row by row, in
// tools/bench-floor: it is the cost of the work itself on this kernel and filesystem.
//
// Engines:
//   psync     open(2), pread(2), close(2)
//   io_uring  per thread one ring with a registered buffer and a registered file table; each
//             file is one linked chain openat_direct -> read_fixed (fixed file) -> close_direct,
//             submitted with one io_uring_enter and reaped at once (queue depth 1, as a
//             DataLoader worker reads one file at a time); `--buffer plain` reads into the
//             same buffer unregistered (IORING_OP_READ instead of READ_FIXED), to show what the
//             registration saves
//
// Sizes come from stat(2) before the timed part (as ioprobe's manifest gives them), so start-up
// (reading the list, stat, ring and buffer set-up, thread start) is timed apart from the reads.
//
// usage: floor --list FILE --threads N --engine psync|io_uring [--repeat K] [--buffer fixed|plain]
//   FILE: one path per line. Prints one JSON object: files, bytes, startup_s, elapsed_s (first
//   read to last thread done), files_per_s, cpu_s (user+sys of the timed part, all threads,
//   getrusage(RUSAGE_SELF)), cpu_us_per_file, runq_wait_s (the threads' run-queue wait during the
//   timed part, summed: time runnable with no free CPU, /proc/thread-self/schedstat's second field;
//   -1 when the kernel does not expose it).
// Exit: 0 ok, 1 a read failed or was short (naming the path), 2 bad usage.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct file {
  char* path;
  size_t size;
};

static struct file* g_files;
static size_t g_nfiles, g_max_size;
static int g_threads = 1, g_uring = 0, g_repeat = 1, g_plain = 0;
static pthread_barrier_t g_start;

struct worker {
  pthread_t th;
  int id;
  uint64_t files, bytes;
  int failed;
  long long runq_ns;  // run-queue wait during the timed part, -1 unknown
};

// The calling thread's run-queue wait so far, ns (schedstat's second field); -1 when unknown.
static long long runq_wait_ns(void) {
  int fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  char buf[128];
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return -1;
  buf[n] = 0;
  unsigned long long on_cpu, waiting;
  return sscanf(buf, "%llu %llu", &on_cpu, &waiting) == 2 ? (long long)waiting : -1;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double cpu_s(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 + (double)ru.ru_stime.tv_sec +
         (double)ru.ru_stime.tv_usec * 1e-6;
}

static void* run_psync(struct worker* w, char* buf) {
  pthread_barrier_wait(&g_start);
  for (int r = 0; r < g_repeat; ++r)
    for (size_t i = (size_t)w->id; i < g_nfiles; i += (size_t)g_threads) {
      int fd = open(g_files[i].path, O_RDONLY | O_CLOEXEC);
      if (fd < 0) {
        fprintf(stderr, "floor: open %s: %s\n", g_files[i].path, strerror(errno));
        w->failed = 1;
        return NULL;
      }
      ssize_t n = pread(fd, buf, g_files[i].size, 0);
      close(fd);
      if (n != (ssize_t)g_files[i].size) {
        fprintf(stderr, "floor: read %s: %zd of %zu bytes\n", g_files[i].path, n, g_files[i].size);
        w->failed = 1;
        return NULL;
      }
      w->files++;
      w->bytes += (uint64_t)n;
    }
  return NULL;
}

static void* run_uring(struct worker* w, char* buf) {
  struct io_uring ring;
  int ret = io_uring_queue_init(8, &ring, 0);
  if (ret == 0) {
    struct iovec iov = {buf, g_max_size ? g_max_size : 1};
    ret = io_uring_register_buffers(&ring, &iov, 1);
    if (ret == 0) ret = io_uring_register_files_sparse(&ring, 1);
  }
  if (ret < 0) {
    fprintf(stderr, "floor: io_uring set-up: %s\n", strerror(-ret));
    w->failed = 1;
    pthread_barrier_wait(&g_start);
    return NULL;
  }
  pthread_barrier_wait(&g_start);
  for (int r = 0; r < g_repeat && !w->failed; ++r)
    for (size_t i = (size_t)w->id; i < g_nfiles; i += (size_t)g_threads) {
      struct io_uring_sqe* sqe = io_uring_get_sqe(&ring);
      io_uring_prep_openat_direct(sqe, AT_FDCWD, g_files[i].path, O_RDONLY, 0, 0);
      sqe->flags |= IOSQE_IO_LINK;
      sqe = io_uring_get_sqe(&ring);
      if (g_plain)
        io_uring_prep_read(sqe, 0, buf, (unsigned)g_files[i].size, 0);
      else
        io_uring_prep_read_fixed(sqe, 0, buf, (unsigned)g_files[i].size, 0, 0);
      sqe->flags |= IOSQE_FIXED_FILE | IOSQE_IO_LINK;
      sqe = io_uring_get_sqe(&ring);
      io_uring_prep_close_direct(sqe, 0);
      io_uring_submit_and_wait(&ring, 3);
      int got = -1;
      for (int k = 0; k < 3; ++k) {
        struct io_uring_cqe* cqe;
        io_uring_wait_cqe(&ring, &cqe);
        if (k == 1) got = cqe->res;
        if (k == 0 && cqe->res < 0) got = cqe->res;
        io_uring_cqe_seen(&ring, cqe);
      }
      if (got != (int)g_files[i].size) {
        fprintf(stderr, "floor: io_uring read %s: %d of %zu bytes%s%s\n", g_files[i].path, got, g_files[i].size,
                got < 0 ? ": " : "", got < 0 ? strerror(-got) : "");
        w->failed = 1;
        break;
      }
      w->files++;
      w->bytes += (uint64_t)got;
    }
  io_uring_queue_exit(&ring);
  return NULL;
}

static void* worker_main(void* arg) {
  struct worker* w = arg;
  char* buf = aligned_alloc(4096, (g_max_size + 4095) / 4096 * 4096 + 4096);
  if (!buf) {
    w->failed = 1;
    pthread_barrier_wait(&g_start);
    return NULL;
  }
  memset(buf, 0, g_max_size);  // fault the buffer in before the timed part
  // Read before the start barrier and after the last file: the timed part's wait, plus one
  // barrier's, and two schedstat reads per thread, outside the per-file loop.
  const long long q0 = runq_wait_ns();
  void* r = g_uring ? run_uring(w, buf) : run_psync(w, buf);
  const long long q1 = runq_wait_ns();
  w->runq_ns = q0 >= 0 && q1 >= 0 ? q1 - q0 : -1;
  free(buf);
  return r;
}

static int usage(const char* why) {
  fprintf(stderr, "floor: %s\nusage: floor --list FILE --threads N --engine psync|io_uring [--repeat K] [--buffer fixed|plain]\n", why);
  return 2;
}

int main(int argc, char** argv) {
  const double t0 = now_s();
  const char* list = NULL;
  for (int i = 1; i < argc; ++i) {
    if (i + 1 >= argc) return usage("each option takes a value");
    if (!strcmp(argv[i], "--list")) list = argv[++i];
    else if (!strcmp(argv[i], "--threads")) g_threads = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--repeat")) g_repeat = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--engine")) {
      const char* e = argv[++i];
      if (!strcmp(e, "io_uring")) g_uring = 1;
      else if (strcmp(e, "psync") != 0) return usage("--engine: psync or io_uring");
    } else if (!strcmp(argv[i], "--buffer")) {
      const char* b = argv[++i];
      if (!strcmp(b, "plain")) g_plain = 1;
      else if (strcmp(b, "fixed") != 0) return usage("--buffer: fixed or plain");
    } else return usage("unknown option");
  }
  if (!list || g_threads < 1 || g_threads > 1024 || g_repeat < 1) return usage("--list and --threads >= 1 are needed");
  FILE* f = fopen(list, "re");
  if (!f) {
    fprintf(stderr, "floor: --list %s: %s\n", list, strerror(errno));
    return 2;
  }
  size_t cap = 0;
  char* line = NULL;
  size_t lcap = 0;
  ssize_t len;
  while ((len = getline(&line, &lcap, f)) > 0) {
    if (line[len - 1] == '\n') line[--len] = 0;
    if (len == 0) continue;
    struct stat st;
    if (stat(line, &st) != 0) {
      fprintf(stderr, "floor: stat %s: %s\n", line, strerror(errno));
      return 1;
    }
    if (g_nfiles == cap) {
      cap = cap ? cap * 2 : 1024;
      g_files = realloc(g_files, cap * sizeof *g_files);
    }
    g_files[g_nfiles].path = strdup(line);
    g_files[g_nfiles].size = (size_t)st.st_size;
    if ((size_t)st.st_size > g_max_size) g_max_size = (size_t)st.st_size;
    g_nfiles++;
  }
  free(line);
  fclose(f);
  if (g_nfiles == 0) return usage("the list names no file");

  struct worker* ws = calloc((size_t)g_threads, sizeof *ws);
  pthread_barrier_init(&g_start, NULL, (unsigned)g_threads + 1);
  for (int i = 0; i < g_threads; ++i) {
    ws[i].id = i;
    pthread_create(&ws[i].th, NULL, worker_main, &ws[i]);
  }
  pthread_barrier_wait(&g_start);
  const double c1 = cpu_s(), t1 = now_s();
  uint64_t files = 0, bytes = 0;
  int failed = 0;
  long long runq = 0;
  for (int i = 0; i < g_threads; ++i) {
    pthread_join(ws[i].th, NULL);
    files += ws[i].files;
    bytes += ws[i].bytes;
    failed |= ws[i].failed;
    runq = runq < 0 || ws[i].runq_ns < 0 ? -1 : runq + ws[i].runq_ns;
  }
  const double t2 = now_s(), c2 = cpu_s();
  const double el = t2 - t1, cpu = c2 - c1;
  printf("{\"engine\":\"%s\",\"threads\":%d,\"files\":%llu,\"bytes\":%llu,\"startup_s\":%.6f,\"elapsed_s\":%.6f,"
         "\"files_per_s\":%.1f,\"cpu_s\":%.6f,\"cpu_us_per_file\":%.3f,\"runq_wait_s\":%.6f}\n",
         g_uring ? "io_uring" : "psync", g_threads, (unsigned long long)files, (unsigned long long)bytes, t1 - t0, el,
         el > 0 ? (double)files / el : 0.0, cpu, files ? cpu * 1e6 / (double)files : 0.0,
         runq < 0 ? -1.0 : (double)runq * 1e-9);
  return failed ? 1 : 0;
}
