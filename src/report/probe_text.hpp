// Text rendering of an `ioprobe probe` document (see report/probe_document.hpp for its sections).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace ioprobe {

/// Renders the probe document as aligned "key: value" lines grouped under target, NUMA, io_uring
/// and engine headings, ending with the warnings. Missing sections are skipped.
std::string render_probe_text(const nlohmann::json& doc);

}  // namespace ioprobe
