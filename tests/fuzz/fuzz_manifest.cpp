// libFuzzer target: the dataset manifest reader (read_manifest) and file-list reader
// (read_file_list), which parse files found in a directory ioprobe may later delete from.
//
// Input layout: the manifest JSON, then a 0 byte, then the file list (.ioprobe-files.tsv).
// Both are written into a private temporary directory and read back. A UsageError is the
// expected answer to a malformed manifest or list; anything else escaping is a bug. Every path
// the list reader accepts must be relative and free of "..", since cleanup unlinks them.
#include <stdlib.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/error.hpp"
#include "dataset/manifest.hpp"

namespace {

const std::string& fuzz_dir() {
  static std::string dir = [] {
    char tmpl[] = "/tmp/ioprobe-fuzz-manifest-XXXXXX";
    const char* d = mkdtemp(tmpl);
    if (!d) std::abort();
    return std::string(d);
  }();
  return dir;
}

void write_file(const std::string& path, const std::string& text) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) std::abort();
  std::fwrite(text.data(), 1, text.size(), f);
  std::fclose(f);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 65536) return 0;
  std::string in(reinterpret_cast<const char*>(data), size);
  size_t cut = in.find('\0');
  std::string manifest = in.substr(0, cut), list = cut == std::string::npos ? "" : in.substr(cut + 1);
  const std::string& dir = fuzz_dir();
  write_file(dir + "/" + ioprobe::kManifestName, manifest);
  write_file(dir + "/" + ioprobe::kFileListName, list);
  try {
    std::optional<ioprobe::Manifest> m = ioprobe::read_manifest(dir);
    if (m) {
      try {
        ioprobe::read_file_list(dir, m->list_xxh64);
      } catch (const ioprobe::UsageError&) {
      }
    }
  } catch (const ioprobe::UsageError&) {
  }
  try {
    ioprobe::FileIndex idx = ioprobe::read_file_list(dir, "");
    for (size_t i = 0; i < idx.size(); ++i) {
      std::string p = idx.path(i);
      if (p.empty() || p[0] == '/' || p.find("..") != std::string::npos) std::abort();  // would escape the dataset
    }
  } catch (const ioprobe::UsageError&) {
  }
  return 0;
}
