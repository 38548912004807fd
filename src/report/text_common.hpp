// Pieces shared by the text renderings of result documents.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace ioprobe {

/// "\nWarnings\n  - ...\n" for the document's "warnings" array; empty when there are none.
std::string render_warnings(const nlohmann::json& doc);

/// One line per filesystem of the document's "targets" array, the first led by `label` padded to
/// `width` characters: "ext4 at / (vda): 4 files (67%), 256 KiB (67%), O_DIRECT accepted"; empty
/// unless the dataset spans more than one filesystem (one is the "target" section already).
std::string render_targets(const nlohmann::json& doc, const std::string& label, size_t width);

}  // namespace ioprobe
