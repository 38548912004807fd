// The manifest of a generated dataset: proof that ioprobe created the directory, the spec it
// was generated from, and the file list with sizes.
//
// Layout inside the dataset directory:
//   .ioprobe-dataset.json   {"schema": "ioprobe.dataset/1", "complete": bool, "spec": {...},
//                            "files": N, "bytes": B, "list": ".ioprobe-files.tsv", "list_xxh64": "hex",
//                            "records": {...}}  (sharded and token datasets only: record_layout.hpp)
//   .ioprobe-files.tsv      one line per file: "<size in bytes>\t<relative path>"
// The list is written before any data file, and the manifest says "complete": false until the
// last file is written and synced, so an interrupted generation is detected and redone, and
// cleanup can remove exactly the files ioprobe created.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "dataset/file_index.hpp"

namespace ioprobe {

constexpr const char* kManifestName = ".ioprobe-dataset.json";
constexpr const char* kFileListName = ".ioprobe-files.tsv";
constexpr const char* kManifestSchema = "ioprobe.dataset/1";

struct Manifest {
  bool complete = false;
  nlohmann::json spec;  // spec_identity() plus descriptive fields
  uint64_t files = 0;
  uint64_t bytes = 0;
  std::string list_xxh64;
  nlohmann::json records;  // RecordLayout::write()'s object; null for file-per-sample datasets
};

/// Reads DIR/.ioprobe-dataset.json. nullopt when absent. Throws UsageError when present but
/// malformed (the message names the file and says to remove it or pick another --dir).
std::optional<Manifest> read_manifest(const std::string& dir);

/// Writes the manifest atomically (temporary name, fsync, rename). Throws IoError.
void write_manifest(const std::string& dir, const Manifest& m);

/// Writes DIR/.ioprobe-files.tsv atomically and returns its xxh64 as hex. Throws IoError.
std::string write_file_list(const std::string& dir, const FileIndex& index);

/// The xxh64 (hex) write_file_list() would record for `index`, without writing anything.
std::string file_list_xxh64(const FileIndex& index);

/// Reads the file list, checking its xxh64 against `expected_xxh64` (when not empty) and that
/// every path is relative and stays inside the directory. Throws UsageError on mismatch.
FileIndex read_file_list(const std::string& dir, const std::string& expected_xxh64);

}  // namespace ioprobe
