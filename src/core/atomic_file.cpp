#include "core/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/text.hpp"

namespace ioprobe {

namespace {

// The text of `path` when it is a regular file small enough to be one of ioprobe's outputs.
bool read_small_file(const std::string& path, std::string& text, bool& empty) {
  constexpr off_t kMaxOwnOutput = off_t{256} << 20;  // result documents and pages are far smaller
  struct stat st {};
  empty = false;
  if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
  if (st.st_size == 0) {
    empty = true;
    return true;
  }
  if (st.st_size > kMaxOwnOutput) return false;
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  text.assign(static_cast<size_t>(st.st_size), '\0');
  size_t got = 0;
  while (got < text.size()) {
    ssize_t n = read(fd, text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  close(fd);
  text.resize(got);
  return true;
}

// The marks of ioprobe's outputs: a result document's schema, a calibration document's, the HTML
// page's title, the tune CSV's header, any other document's CSV header (report/document.hpp,
// calibrate/calibration.hpp, report/html_report.cpp, report/tune_document.cpp,
// report/document_text.hpp). Returns the output's kind, "json" for a document whose kind cannot be
// read, or "" when no mark is there.
std::string marked_kind(const std::string& text) {
  const bool result = text.find("\"schema\": \"ioprobe.result/") != std::string::npos;
  const bool calibration = text.find("\"schema\": \"ioprobe.calibration/") != std::string::npos;
  if (result || calibration) {
    const nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (doc.is_object() && doc.contains("kind") && doc["kind"].is_string() && !doc["kind"].get<std::string>().empty())
      return doc["kind"].get<std::string>();
    return "json";
  }
  if (text.find("<title>ioprobe report</title>") != std::string::npos) return kHtmlOutput;
  if (text.rfind("num_workers,prefetch_factor,numa,", 0) == 0) return kTuneCsvOutput;
  if (text.rfind("ioprobe_field,value\n", 0) == 0) return kFieldsCsvOutput;
  return "";
}

// "a calibration document", "a run result document", "an HTML report", "a CSV table".
std::string describe_kind(const std::string& kind) {
  if (kind == kHtmlOutput) return "an HTML report";
  if (kind == kTuneCsvOutput) return "a tune CSV table";
  if (kind == kFieldsCsvOutput) return "a CSV table of a document's figures";
  if (kind == "calibration") return "a calibration document";
  if (kind == "json") return "an ioprobe document";
  return fmt::format("a '{}' result document", kind);
}

}  // namespace

bool written_by_ioprobe(const std::string& path) {
  std::string text;
  bool empty = false;
  if (!read_small_file(path, text, empty)) return false;
  return empty || !marked_kind(text).empty();  // empty: nothing to lose
}

std::string output_kind(const std::string& path) {
  std::string text;
  bool empty = false;
  if (!read_small_file(path, text, empty) || empty) return "";
  const std::string kind = marked_kind(text);
  return kind == "json" ? "" : kind;
}

void check_replaceable(const std::string& path, const std::string& label, const std::string& kind) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return;  // nothing there to lose
  const std::string named = label.empty() ? fmt::format("'{}'", escape_bytes(path))
                                          : fmt::format("{} '{}'", label, escape_bytes(path));
  std::string text;
  bool empty = false;
  const bool readable = read_small_file(path, text, empty);
  if (readable && empty) return;
  const std::string existing = readable ? marked_kind(text) : "";
  if (existing.empty())
    throw UsageError(fmt::format("{} exists and is not an ioprobe output; ioprobe never overwrites other files: "
                                 "remove it or choose another name",
                                 named));
  // A document whose kind cannot be read (edited?) is replaced as before: it carries ioprobe's mark.
  if (existing == "json" || existing == kind) return;
  throw UsageError(fmt::format("{} is {}; this command writes {} and would replace it: choose another file name, or "
                               "remove '{}' first if it is no longer needed",
                               named, describe_kind(existing), describe_kind(kind), escape_bytes(path)));
}

void check_output_path(const std::string& path, const std::string& option, const std::string& kind) {
  struct stat st {};
  if (stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    throw UsageError(fmt::format("{} '{}' is a directory; give a file name", option, escape_bytes(path)));
  check_replaceable(path, option, kind);
  std::string probe = path + ".ioprobe-tmp";
  int fd = open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    if (errno == EEXIST) return;  // a stale temporary of ours: the final write replaces it
    throw UsageError(fmt::format("{} '{}': cannot create a file there: {}; choose a writable location", option,
                                 escape_bytes(path), errno_text(errno)));
  }
  close(fd);
  unlink(probe.c_str());
}

void check_can_create_in(const std::string& dir, const std::string& option, const std::string& file) {
  const std::string probe = fmt::format("{}/.ioprobe-probe.{}", dir, getpid());
  int fd = open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0 && errno == EEXIST) {  // a probe left by an earlier process with this PID: ours to remove
    unlink(probe.c_str());
    fd = open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  }
  if (fd < 0 && !file.empty())
    throw UsageError(fmt::format("{} '{}': cannot create a file in '{}': {}; choose a directory you may write to",
                                 option, escape_bytes(file), escape_bytes(dir), errno_text(errno)));
  if (fd < 0)
    throw UsageError(fmt::format("{} '{}': cannot create a file there: {}; choose a directory you may write to", option,
                                 escape_bytes(dir), errno_text(errno)));
  close(fd);
  unlink(probe.c_str());
}

void check_output_not_input(const std::string& path, const std::string& option,
                            const std::vector<std::string>& inputs) {
  struct stat out {};
  if (stat(path.c_str(), &out) != 0) return;  // not there yet: it cannot be one of the inputs
  for (const auto& in : inputs) {
    struct stat st {};
    if (stat(in.c_str(), &st) == 0 && st.st_dev == out.st_dev && st.st_ino == out.st_ino)
      throw UsageError(fmt::format("{} '{}' is the input '{}'; writing it would replace the input: choose another "
                                   "output name",
                                   option, escape_bytes(path), escape_bytes(in)));
  }
}

void write_file_atomically(const std::string& path, const std::string& text, const std::string& hint) {
  // One temporary per process: two processes writing the same file must not share one (the second
  // rename would fail with ENOENT after the first had taken the shared name).
  std::string tmp = fmt::format("{}.ioprobe-tmp.{}", path, getpid());
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw IoError(errno, "create", tmp, hint);
  auto fail = [&](const char* op) {
    int e = errno;
    close(fd);
    unlink(tmp.c_str());
    // Named by the file the user asked for (the temporary is an implementation detail, removed).
    throw IoError(e, op, path,
                  fmt::format("{}nothing was written: the temporary copy is removed and '{}' is as it was; {}",
                              e == ENOSPC ? "the filesystem is full; " : "", escape_bytes(path),
                              e == ENOSPC || e == EDQUOT ? "free space there or write the output elsewhere"
                                                         : "check the filesystem, or write the output elsewhere"));
  };
  size_t off = 0;
  while (off < text.size()) {
    ssize_t n = write(fd, text.data() + off, text.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail("write");
    off += static_cast<size_t>(n);
  }
  if (fsync(fd) != 0) fail("fsync");
  if (close(fd) != 0) {
    int e = errno;
    unlink(tmp.c_str());
    throw IoError(e, "close", tmp);
  }
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    int e = errno;
    unlink(tmp.c_str());
    throw IoError(e, "rename", tmp + " -> " + path);
  }
}

void check_outputs_distinct(const std::vector<std::pair<std::string, std::string>>& outputs) {
  std::vector<std::pair<std::string, std::string>> seen;  // {canonical path, option}
  for (const auto& [option, path] : outputs) {
    if (path.empty()) continue;
    std::error_code ec;
    std::filesystem::path canon = std::filesystem::weakly_canonical(path, ec);
    const std::string key = ec ? path : canon.string();
    for (const auto& [other, other_option] : seen)
      if (other == key)
        throw UsageError(fmt::format("{} and {} both name '{}': the second would replace the first; give each its "
                                     "own file",
                                     other_option, option, escape_bytes(path)));
    seen.emplace_back(key, option);
  }
}

}  // namespace ioprobe
