// Terminal rendering of a "run" result document (the JSON is the source of truth, so
// `ioprobe report FILE.json` prints exactly what the run printed).
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace ioprobe {

/// The text report of a run document. Throws nlohmann::json::exception on a malformed document.
std::string render_run_text(const nlohmann::json& doc);

/// `ioprobe gen`'s one-line summary from a run document's "dataset" section (preset, action,
/// root, generate_s, source_files) and the dataset's `files` and `bytes`: "imagenet-like: generated
/// 1,000 files, 110.00 MiB (...) in '/data' in 2.10 s (52.38 MB/s (...))", or for a reuse of the first
/// files of a larger dataset "imagenet-like: reused the first 500 of the 2,000 files in '/data', ...".
/// No newline.
std::string render_gen_line(const nlohmann::json& dataset, uint64_t files, uint64_t bytes);

}  // namespace ioprobe
