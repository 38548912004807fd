// Importing traces other tools wrote into the trace model: DFTracer (import_dftracer.hpp) and
// `strace -f -ttt -T` (import_strace.hpp), chosen by name or told from the file name.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "trace/trace.hpp"

namespace ioprobe::trace {

/// Reads `path` as `format` ("dftracer" or "strace"; "" = told from the name: .pfw, .pfw.gz,
/// .json and .json.gz are DFTracer, anything else strace). Throws UsageError (exit 2) naming the
/// path for an unknown format, a file that cannot be read, or one holding no data-file call.
Trace import_trace(const std::string& path, const std::string& format);

/// The recorder's data-file rule on a path. The one rule lives twice, kept identical: here (for the
/// importers) and in preload/ioprobe_record.c's path_is_data (the interposer, plain C). False for
/// "/", paths ending in "/", paths under /proc, /sys, /dev (but not /dev/shm), /run, /etc, /usr,
/// /lib, /lib64, /bin, /sbin, /opt/conda/lib, POSIX semaphores and PyTorch's shared-memory segments
/// (/dev/shm/sem.*, /dev/shm/torch_*), with a site-packages, dist-packages, __pycache__ or /.pyenv/
/// part, or ending in .py, .pyc, .so or holding ".so.": what the importers keep is what the recorder
/// would have recorded. The recorder also drops directories and files the open itself created
/// (O_CREAT|O_EXCL, O_TMPFILE); the importers drop them where their log shows it.
bool is_data_path(std::string_view path);

/// `path` with "." and ".." segments resolved and repeated slashes folded, lexically (symlinks are
/// not followed: "/a/link/../b" is "/a/b"); ".." at the root stays at the root. A relative path is
/// normalised the same way, keeping leading ".." segments. "" stays "".
std::string normalize_path(std::string_view path);

/// Removes the files marked in `drop` (indexed like t.files; shorter = not dropped) and every op
/// naming one, renumbering the other files' indices in the ops.
void drop_files(Trace& t, const std::vector<bool>& drop);

/// Sorts each stream's ops and marks by time, drops streams with neither, shifts times so that the
/// earliest event is at 0 (`origin_ns` is subtracted first) and sets duration_ns to the last
/// op's end. Used by both importers.
void finish_imported(Trace& t, int64_t origin_ns);

}  // namespace ioprobe::trace
