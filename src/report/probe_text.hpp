// Text rendering of an `ioprobe probe` document (see report/probe_document.hpp for its sections).
#pragma once

#include <string>

#include "report/probe_document.hpp"

namespace ioprobe {

/// Renders the probe document as aligned "key: value" lines grouped under target, NUMA, io_uring,
/// engine and page-cache headings, ending with the warnings.
std::string render_probe_text(const ProbeDocument& doc);

}  // namespace ioprobe
