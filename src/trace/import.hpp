// Importing traces other tools wrote into the trace model: DFTracer (import_dftracer.hpp) and
// `strace -f -ttt -T` (import_strace.hpp), chosen by name or told from the file name.
#pragma once

#include <string>
#include <string_view>

#include "trace/trace.hpp"

namespace ioprobe::trace {

/// Reads `path` as `format` ("dftracer" or "strace"; "" = told from the name: .pfw, .pfw.gz,
/// .json and .json.gz are DFTracer, anything else strace). Throws UsageError (exit 2) naming the
/// path for an unknown format, a file that cannot be read, or one holding no data-file call.
Trace import_trace(const std::string& path, const std::string& format);

/// The recorder's data-file rule on a path (the same as preload/ioprobe_record.c's): false for
/// paths under /proc, /sys, /dev (but not /dev/shm), /run, /etc, /usr, /lib, /lib64, /bin, /sbin, /opt/conda/lib,
/// with a site-packages, dist-packages, __pycache__ or /.pyenv/ part, or ending in .py, .pyc,
/// .so or holding ".so.": what the importers keep is what the recorder would have recorded.
bool is_data_path(std::string_view path);

/// Sorts each stream's ops and marks by time, drops streams with neither, shifts times so that the
/// earliest event is at 0 (`origin_ns` is subtracted first) and sets duration_ns to the last
/// op's end. Used by both importers.
void finish_imported(Trace& t, int64_t origin_ns);

}  // namespace ioprobe::trace
