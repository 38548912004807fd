#include "report/document.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <ctime>
#include <fstream>
#include <iterator>

#include <fmt/format.h>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/text.hpp"

namespace ioprobe {

nlohmann::json host_json(const HostInfo& h) { return host_section_json(host_section(h)); }

nlohmann::json target_json(const TargetInfo& t) { return target_section_json(target_section(t)); }

nlohmann::json targets_json(const std::vector<TargetShare>& targets) {
  return targets_section_json(target_share_sections(targets));
}

nlohmann::json document_header(const std::string& kind, const std::vector<std::string>& argv, const HostInfo& host) {
  nlohmann::json cmd = nlohmann::json::array();
  for (const auto& a : argv) cmd.push_back(escape_bytes(a));
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char when[32];
  std::strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return {{"schema", kResultSchema},
          {"ioprobe_version", IOPROBE_VERSION},
          {"kind", kind},
          {"command", cmd},
          {"created_utc", when},
          {"host", host_json(host)},
          {"partial", false},
          {"warnings", nlohmann::json::array()}};
}

void write_json_file(const std::string& path, const nlohmann::json& doc) {
  // The output policy (core/atomic_file.hpp), again at the moment of writing: every command's
  // preflight checked it, but a file of another kind may have appeared at `path` since.
  check_replaceable(path, "", doc.is_object() ? doc.value("kind", "") : "");
  // Paths are escaped reversibly with escape_bytes() before they enter the document; `replace`
  // only guards against a stray invalid byte elsewhere (it must never abort a finished run).
  write_file_atomically(path, doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n",
                        "check that the directory exists and is writable");
}

std::string json_error_text(const std::exception& e) {
  std::string w = e.what();
  // "[json.exception.parse_error.101] parse error at line 1, column 1: syntax error ..." -> "syntax error ..."
  if (w.rfind("[json.exception.", 0) == 0)
    if (const size_t close = w.find("] "); close != std::string::npos) w = w.substr(close + 2);
  if (w.rfind("parse error", 0) == 0)
    if (const size_t colon = w.find(": "); colon != std::string::npos) w = w.substr(colon + 2);
  return escape_bytes(w);
}

namespace {

// "line L, column C (byte B of N)" of 1-based byte offset `byte` in `text`.
std::string text_position(const std::string& text, size_t byte) {
  size_t line = 1, column = 1;
  for (size_t i = 0; i + 1 < byte && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return fmt::format("line {}, column {} (byte {} of {})", line, column, byte, text.size());
}

const char* expects() {
  return "'ioprobe report' reads the JSON result document an ioprobe command wrote with --json FILE (schema "
         "ioprobe.result/1)";
}

}  // namespace

nlohmann::json read_json_file(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    throw UsageError(fmt::format("'{}' is not a regular file; give a result document (FILE.json)", escape_bytes(path)));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError(fmt::format("cannot read '{}': {}", escape_bytes(path), errno_text(errno)));
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw UsageError(fmt::format("cannot read '{}': {}", escape_bytes(path), errno_text(errno)));
  const std::string name = escape_bytes(path);
  if (text.find_first_not_of(" \t\r\n") == std::string::npos)
    throw UsageError(fmt::format("'{}' is {}: not an ioprobe result document; {}", name,
                                 text.empty() ? "empty" : "only white space", expects()));
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // e.byte: the 1-based byte where parsing stopped; past the end: the text ended too early.
    const bool at_end = e.byte > text.size();
    throw UsageError(
        fmt::format("'{}' is not valid JSON: parsing failed at {}{}: {}; {}", name,
                    text_position(text, std::min<size_t>(e.byte, text.size())),
                    at_end ? ", the end of the file (truncated? a run still writing it, or a copy cut short)" : "",
                    json_error_text(e), expects()));
  }
  if (!doc.is_object())
    throw UsageError(fmt::format("'{}' is JSON but not an ioprobe result document: its top level is {} {}, not an "
                                 "object; {}",
                                 name, doc.is_array() || doc.is_object() ? "an" : "a", doc.type_name(), expects()));
  if (!doc.contains("schema") || !doc["schema"].is_string())
    throw UsageError(fmt::format(
        "'{}' is JSON but not an ioprobe result document: it has no \"schema\" string (keys: "
        "{}); {}",
        name,
        [&] {
          std::string keys;
          size_t k = 0;
          for (auto it = doc.begin(); it != doc.end(); ++it) {
            if (k++ == 6) {
              keys += ", ...";
              break;
            }
            keys += (keys.empty() ? "" : ", ") + escape_bytes(it.key());
          }
          return keys.empty() ? std::string("none") : keys;
        }(),
        expects()));
  if (const std::string schema = doc["schema"].get<std::string>(); schema != kResultSchema)
    throw UsageError(fmt::format("'{}' has schema '{}', not {}: {}{}", name, escape_bytes(schema), kResultSchema,
                                 schema.rfind("ioprobe.result/", 0) == 0
                                     ? "a result document of another ioprobe version; render it with that version, "
                                       "or run the measurement again; "
                                 : schema.rfind("ioprobe.calibration/", 0) == 0
                                     ? "a calibration document (`ioprobe calibrate` printed its figures when it "
                                       "wrote it): give it to run, tune or capacity with --calibration; "
                                     : "not an ioprobe result document; ",
                                 expects()));
  return doc;
}

}  // namespace ioprobe
