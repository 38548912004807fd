/* The raw per-process files the LD_PRELOAD interposer (preload/ioprobe_record.c) writes and
 * trace/collect.cpp reads: plain C, shared by both sides. Little-endian, native layout (the files
 * never leave the host that recorded them: `ioprobe record` merges them into a trace at once).
 *
 * A file: one IoprobeRecFileHeader, then chunks. A chunk is one thread's flushed buffer:
 * IoprobeRecChunk, then `bytes` bytes of records. A record is IoprobeRec followed by `path_len`
 * path bytes (no NUL), padded with zeros to a multiple of 8. Each chunk is written with one
 * write() on an O_APPEND descriptor, so chunks of a process's threads never interleave.
 *
 * Times are CLOCK_MONOTONIC nanoseconds (absolute); cpu_* are CLOCK_THREAD_CPUTIME_ID ns, read
 * or, across short calls and gaps, estimated (preload/record_internal.h, begin()). */
#ifndef IOPROBE_TRACE_RECORD_ABI_H
#define IOPROBE_TRACE_RECORD_ABI_H

#include <stdint.h>  // NOLINT(modernize-deprecated-headers): a C header too (preload/)

#define IOPROBE_REC_FILE_MAGIC 0x48435249u  /* "IRCH" */
#define IOPROBE_REC_CHUNK_MAGIC 0x43435249u /* "IRCC" */
#define IOPROBE_REC_VERSION 1u

/* The environment the interposer reads: the directory for the per-process files (recording is
 * off when unset or empty). */
#define IOPROBE_REC_ENV_DIR "IOPROBE_RECORD_DIR"
/* A thread's buffer is written to its process's file at its next record once the buffer's oldest
 * record is this old (ns): a process killed without a clean exit loses at most that window per
 * thread (plus what a thread recorded before it went idle until the end). */
#define IOPROBE_REC_FLUSH_AGE_NS 250000000LL

typedef struct IoprobeRecFileHeader {
  uint32_t magic;   /* IOPROBE_REC_FILE_MAGIC */
  uint32_t version; /* IOPROBE_REC_VERSION */
  int32_t pid;
  int32_t ppid;     /* getppid() when the process started or forked */
  int32_t rank;     /* RANK / OMPI_COMM_WORLD_RANK / PMI_RANK / SLURM_PROCID, 0 when none */
  int32_t forked;   /* 1: made by fork() of a recorded process; 0: started by exec */
  int64_t start_ns; /* when this process image (or fork child) started recording */
} IoprobeRecFileHeader;

typedef struct IoprobeRecChunk {
  uint32_t magic; /* IOPROBE_REC_CHUNK_MAGIC */
  int32_t tid;
  uint64_t bytes; /* record bytes that follow */
} IoprobeRecChunk;

/* What a record is. The op kinds match trace::OpKind's order. */
enum IoprobeRecKind {
  IOPROBE_REC_OPEN = 0,
  IOPROBE_REC_CLOSE = 1,
  IOPROBE_REC_READ = 2,
  IOPROBE_REC_LSEEK = 3,
  IOPROBE_REC_STAT = 4,
  IOPROBE_REC_MMAP = 5,
  IOPROBE_REC_MUNMAP = 6,
  IOPROBE_REC_MARK = 16, /* call = the mark kind (trace::MarkKind order), ret = its value */
  /* At munmap, and at exit for a mapping still in place: size = the bytes of the mapped range
   * present in the process's page table (/proc/self/pagemap), len = the range; ret -1 when pagemap
   * could not be read. Not a call of the job. */
  IOPROBE_REC_TOUCHED = 17,
};

/* The libc call behind a record; names in ioprobe_rec_call_name order (collect.cpp). */
enum IoprobeRecCall {
  IOPROBE_CALL_OPEN,
  IOPROBE_CALL_OPEN64,
  IOPROBE_CALL_OPENAT,
  IOPROBE_CALL_OPENAT64,
  IOPROBE_CALL_CREAT,
  IOPROBE_CALL_CREAT64,
  IOPROBE_CALL_FOPEN,
  IOPROBE_CALL_FOPEN64,
  IOPROBE_CALL_CLOSE,
  IOPROBE_CALL_FCLOSE,
  IOPROBE_CALL_READ,
  IOPROBE_CALL_PREAD,
  IOPROBE_CALL_PREAD64,
  IOPROBE_CALL_READV,
  IOPROBE_CALL_PREADV,
  IOPROBE_CALL_PREADV64,
  IOPROBE_CALL_PREADV2,
  IOPROBE_CALL_PREADV64V2,
  IOPROBE_CALL_FREAD,
  IOPROBE_CALL_LSEEK,
  IOPROBE_CALL_LSEEK64,
  IOPROBE_CALL_FSEEK,
  IOPROBE_CALL_FSEEKO,
  IOPROBE_CALL_FSEEKO64,
  IOPROBE_CALL_STAT,
  IOPROBE_CALL_STAT64,
  IOPROBE_CALL_FSTAT,
  IOPROBE_CALL_FSTAT64,
  IOPROBE_CALL_LSTAT,
  IOPROBE_CALL_LSTAT64,
  IOPROBE_CALL_STATX,
  IOPROBE_CALL_FSTATAT,
  IOPROBE_CALL_FSTATAT64,
  IOPROBE_CALL_XSTAT,
  IOPROBE_CALL_FXSTAT,
  IOPROBE_CALL_LXSTAT,
  IOPROBE_CALL_FXSTATAT,
  IOPROBE_CALL_MMAP,
  IOPROBE_CALL_MMAP64,
  IOPROBE_CALL_MUNMAP,
  IOPROBE_CALL_COUNT
};

typedef struct IoprobeRec {
  uint8_t kind;      /* IoprobeRecKind */
  uint8_t call;      /* IoprobeRecCall, or the mark kind */
  uint16_t path_len; /* path bytes after the record (open, path-based stat), else 0 */
  int32_t err;       /* errno when the call failed, else 0 */
  uint64_t open_id;  /* (pid << 32) | n: one open of a data file; 0 for a path-based stat */
  int64_t t_ns;      /* call start */
  int64_t dur_ns;
  int64_t cpu_start_ns; /* thread CPU time at the call's start, -1 when unknown */
  int64_t cpu_end_ns;   /* thread CPU time at its end, -1 when unknown */
  uint64_t offset;      /* read: file offset read from; lseek: resulting position; mmap: file offset */
  uint64_t len;         /* read: bytes asked for; mmap/munmap: length */
  int64_t ret;          /* the call's result (bytes, fd, position), -1 on failure */
  uint64_t size;        /* open and stat: st_size of the file (bytes) */
} IoprobeRec;

#endif
