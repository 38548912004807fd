// `strace -f -ttt -T` logs into the trace model.
//
// A line: [PID ]SECONDS.MICROS SYSCALL(ARGS) = RET [ERRNO (text)] <DURATION>; with -y a descriptor
// reads "3</data/x.bin>". A call another thread interrupted is split into "SYSCALL(ARGS <unfinished
// ...>" and, later, "<... SYSCALL resumed>REST) = RET <DURATION>": the two halves are joined by PID.
// "+++ exited ...", "--- SIGNAL ..." and other lines are skipped.
#pragma once

#include <string>

#include "trace/trace.hpp"

namespace ioprobe::trace {

/// Reads the strace log at `path`. Calls kept: open, openat, creat, close, read, pread64, readv,
/// preadv, preadv2, lseek, stat, lstat, fstat, newfstatat, statx, mmap, munmap, on files that pass
/// is_data_path (paths from the open's argument or -y's annotation; descriptors from the open's
/// result). Streams: one per strace PID (a thread id); threads made with clone(CLONE_THREAD) are
/// given their process's pid. Read offsets: pread's argument, else the position tracked per
/// (process, fd). Throws UsageError naming the path when it cannot be read.
Trace import_strace(const std::string& path);

}  // namespace ioprobe::trace
