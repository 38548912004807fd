// DFTracer traces into the trace model.
//
// The format (DFTracer's docs/trace_format.rst): JSON Lines, optionally inside "[" and "]" lines
// and gzip-compressed (.pfw.gz). A complete event ("ph":"X" or 1) has name (the intercepted
// call), cat ("POSIX", "STDIO", ...), pid, tid, ts and dur in microseconds, and args: the call's
// arguments as DFTracer logs them (fd, count, offset, size, nmemb, ret; the file as "fname", or as
// "fhash" resolved through a metadata event {"name":"FH","ph":"M" or 4,"args":{"name":PATH,
// "value":HASH}}). Aggregated events (DFTRACER_ENABLE_AGGREGATION) carry no single call and are
// counted, not imported.
#pragma once

#include <string>

#include "trace/trace.hpp"

namespace ioprobe::trace {

/// Reads the DFTracer trace at `path` (.pfw, or gzip-compressed .pfw.gz: told by the gzip magic).
/// Calls kept: the open family, close/fclose, read/pread/pread64/readv/preadv*/fread (fread's
/// bytes = size x nmemb when DFTracer logs no ret), lseek/fseek, the stat family, mmap/munmap, on
/// files that pass is_data_path (a hashed name that no FH event resolves is kept as
/// "fhash:<value>" and the trace marked anonymized). Read offsets come from "offset" or from the
/// position tracked per (pid, fd) through open, read and lseek. Throws UsageError naming the path
/// and line for a file that cannot be read or a line that is not JSON.
Trace import_dftracer(const std::string& path);

}  // namespace ioprobe::trace
