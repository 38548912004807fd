#include "dataset/manifest.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <xxhash.h>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/text.hpp"

namespace ioprobe {

namespace {

std::string hex64(uint64_t v) { return fmt::format("{:016x}", v); }

}  // namespace

std::optional<Manifest> read_manifest(const std::string& dir) {
  std::string path = dir + "/" + kManifestName;
  std::ifstream in(path);
  if (!in) return std::nullopt;
  try {
    nlohmann::json j = nlohmann::json::parse(in);
    if (j.value("schema", "") != kManifestSchema) throw std::runtime_error("unknown schema");
    Manifest m;
    m.complete = j.at("complete").get<bool>();
    m.spec = j.at("spec");
    m.files = j.at("files").get<uint64_t>();
    m.bytes = j.at("bytes").get<uint64_t>();
    m.list_xxh64 = j.at("list_xxh64").get<std::string>();
    if (j.contains("records")) m.records = j.at("records");
    return m;
  } catch (const std::exception& e) {
    // Without a manifest ioprobe cannot tell its files from others, so it will not remove or
    // overwrite any: removing the manifest alone leaves a directory it refuses to write into.
    throw UsageError(fmt::format("'{}' is not a valid ioprobe dataset manifest ({}); ioprobe cannot tell which "
                                 "files there it created, so it will not replace them: remove the directory "
                                 "yourself if it holds only an ioprobe dataset (rm -r '{}'), or choose another --dir",
                                 escape_bytes(path), e.what(),
                                 escape_bytes(std::filesystem::path(path).parent_path().string())));
  }
}

void write_manifest(const std::string& dir, const Manifest& m) {
  nlohmann::json j = {{"schema", kManifestSchema}, {"created_by", std::string("ioprobe ") + IOPROBE_VERSION},
                      {"complete", m.complete},    {"spec", m.spec},
                      {"files", m.files},          {"bytes", m.bytes},
                      {"list", kFileListName},     {"list_xxh64", m.list_xxh64}};
  if (!m.records.is_null()) j["records"] = m.records;
  write_file_atomically(dir + "/" + kManifestName, j.dump(2) + "\n", "check that the dataset directory is writable");
}

namespace {

std::string list_text(const FileIndex& index) {
  std::string text;
  text.reserve(index.size() * 28);
  for (size_t i = 0; i < index.size(); ++i) {
    text += std::to_string(index.file_size(i));
    text += '\t';
    text += index.path(i);
    text += '\n';
  }
  return text;
}

}  // namespace

std::string file_list_xxh64(const FileIndex& index) {
  const std::string text = list_text(index);
  return hex64(XXH64(text.data(), text.size(), 0));
}

std::string write_file_list(const std::string& dir, const FileIndex& index) {
  const std::string text = list_text(index);
  write_file_atomically(dir + "/" + kFileListName, text, "check that the dataset directory is writable");
  return hex64(XXH64(text.data(), text.size(), 0));
}

FileIndex read_file_list(const std::string& dir, const std::string& expected) {
  std::string path = dir + "/" + kFileListName;
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw UsageError(fmt::format("dataset file list '{}' is missing: {}; ioprobe cannot tell which files there it "
                                 "created: remove the directory yourself if it holds only an ioprobe dataset "
                                 "(rm -r '{}'), or choose another --dir",
                                 escape_bytes(path), errno_text(errno), escape_bytes(dir)));
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  if (!expected.empty() && hex64(XXH64(text.data(), text.size(), 0)) != expected)
    throw UsageError(fmt::format("dataset file list '{}' does not match its manifest (changed after generation); "
                                 "remove the directory yourself if it holds only an ioprobe dataset (rm -r '{}'), or "
                                 "choose another --dir",
                                 escape_bytes(path), escape_bytes(dir)));
  FileIndex index(dir);
  size_t pos = 0, lineno = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    std::string_view line(text.data() + pos, nl - pos);
    ++lineno;
    size_t tab = line.find('\t');
    int64_t size = 0;
    auto r = tab == std::string_view::npos ? std::from_chars_result{nullptr, std::errc::invalid_argument}
                                           : std::from_chars(line.data(), line.data() + tab, size);
    std::string_view rel = tab == std::string_view::npos ? std::string_view() : line.substr(tab + 1);
    // The size is the whole field; the path is relative, has no NUL and does not climb out.
    if (r.ec != std::errc() || r.ptr != line.data() + tab || size < 0 || rel.empty() || rel.front() == '/' ||
        rel.find("..") != std::string_view::npos || rel.find('\0') != std::string_view::npos)
      throw UsageError(fmt::format("dataset file list '{}' line {} is malformed", escape_bytes(path), lineno));
    index.add(rel, size);
    pos = nl + 1;
  }
  return index;
}

}  // namespace ioprobe
