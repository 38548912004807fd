// Writing a small file so that it is either absent or complete under its final name.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace ioprobe {

/// Writes `text` to `path` via "<path>.ioprobe-tmp.<PID>" (one per process): write, fsync, rename. On failure the
/// temporary file is removed and nothing appears under `path`. Throws IoError (with `hint`
/// on the create step) naming the failing operation and path.
void write_file_atomically(const std::string& path, const std::string& text, const std::string& hint = "");

/// Whether the file at `path` is one ioprobe wrote (a result document, an HTML report or a CSV
/// table, told by their marks) or empty: the only existing files an output may replace.
bool written_by_ioprobe(const std::string& path);

/// The kinds of output that are not JSON documents, for output_kind() and check_output_path().
/// A JSON document's kind is its "kind" field: "run", "tune", "capacity", "checkpoint", "raw",
/// "probe", "scaling", "calibration".
inline constexpr const char* kHtmlOutput = "html";
/// A tune's CSV table (header "num_workers,prefetch_factor,numa,...": report/tune_document.cpp).
inline constexpr const char* kTuneCsvOutput = "tune-csv";
/// Any other document's figures as CSV (header "ioprobe_field,value": report/document_text.hpp).
inline constexpr const char* kFieldsCsvOutput = "fields-csv";

/// What the ioprobe output at `path` holds, told by its marks (written_by_ioprobe): a document's
/// "kind" (a result document's or "calibration"), kHtmlOutput, kTuneCsvOutput or kFieldsCsvOutput;
/// "" when the file is absent, empty, not ioprobe's, or its kind cannot be read.
std::string output_kind(const std::string& path);

/// The output policy, in one place: an existing file at `path` may be replaced by an output of
/// `kind` (a document kind, kHtmlOutput, kTuneCsvOutput or kFieldsCsvOutput) when it is absent, empty, or ioprobe's own
/// output of the same kind. Throws UsageError (exit 2) naming `label` (the option, e.g. "--json",
/// or "" for none), the path, what the file holds and what to do: for a file ioprobe did not write,
/// and for an ioprobe output of another kind (`run --json cal.json` over a calibration document).
void check_replaceable(const std::string& path, const std::string& label, const std::string& kind);

/// Preflight for an output file named by option `option` (e.g. "--json") that will hold `kind`
/// (as above): `path` must not be a directory, must be replaceable (check_replaceable), and its
/// directory must accept a new file (a probe file is created and removed).
/// Throws UsageError (exit 2) naming the option, the path and the reason, before any work is done.
void check_output_path(const std::string& path, const std::string& option, const std::string& kind);

/// Preflight for a directory a command writes into (`option`, e.g. "--dir"): a file can be
/// created there now. access(W_OK) is not enough: root passes it on /proc and on read-only
/// binds, where a command would otherwise build its whole state before failing. A
/// probe file ".ioprobe-probe.PID" is created and removed. Throws UsageError (exit 2) naming the
/// option, the directory and the errno text; with `file` (the path the option gave, in `dir`),
/// it names that path and then the directory.
void check_can_create_in(const std::string& dir, const std::string& option, const std::string& file = {});

/// Refuses an output that would replace one of the command's `inputs`: `path` names the same file
/// as an input (same st_dev and st_ino, so hard links and symlinks count). An output that does not
/// exist yet cannot be an input. Throws UsageError (exit 2) naming the option, the path and the
/// input, before anything is written.
void check_output_not_input(const std::string& path, const std::string& option, const std::vector<std::string>& inputs);

/// Refuses two outputs of one command that name the same file (`tune --json X --csv X` wrote the
/// CSV over the JSON): `outputs` holds {option, path} pairs, empty paths skipped; paths compare
/// after std::filesystem::weakly_canonical (so ./x and x, or a symlinked directory, count).
/// Throws UsageError (exit 2) naming both options and the path, before anything is written.
void check_outputs_distinct(const std::vector<std::pair<std::string, std::string>>& outputs);

}  // namespace ioprobe
