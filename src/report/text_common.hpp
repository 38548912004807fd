// Pieces shared by the text renderings of result documents.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "report/document_sections.hpp"

namespace ioprobe {

/// "\nWarnings\n  - ...\n" for the document's "warnings" array; empty when there are none.
std::string render_warnings(const nlohmann::json& doc);

/// One line per filesystem of a document's targets, the first led by `label` padded to `width`
/// characters: "ext4 at / (vda): 4 files (67%), 256 KiB (67%), O_DIRECT accepted"; empty unless
/// the dataset spans more than one filesystem (one is the "target" section already).
std::string render_target_rows(const std::vector<TargetShareSection>& targets, const std::string& label, size_t width);

/// The "target" line of a tune or capacity document: "  target     PATH (FS, O_DIRECT), N files,
/// SIZE (estimated from the sizes of 820 of the 4096 files)\n"; "sizes not indexed" when the
/// dataset's bytes are 0 (unknown).
std::string render_target_line(const TargetSection& target, const DatasetSection& dataset);

/// A line "  {label padded to width} {lead}FILE (CODE:FUNC on HOST, torch V, batch size B)\n" for
/// the document's loader.calibration (run, tune, capacity with --calibration); empty without one.
std::string render_calibration_line(const nlohmann::json& doc, const std::string& label, size_t width,
                                    const std::string& lead = "");

}  // namespace ioprobe
