// The text report and the HTML section of a "capacity" document (report/capacity_document.hpp):
// the answer, the table of points (across hosts each host's row under its point), the devices'
// accounting; in HTML AU against accelerators with the floor line and samples/s against
// accelerators with the demand line.
#pragma once

#include <string>

#include "report/capacity_document.hpp"

namespace ioprobe {

/// The text report of a capacity document. Never throws.
std::string render_capacity_text(const CapacityDocument& doc);

/// The HTML section body of a capacity document: the answer, the two charts
/// (<svg data-chart="capacity-au"> and data-chart="capacity-rate") and the table of points; across
/// hosts each point's host rows under it (<tr class="host" data-host="NAME">), every string escaped.
/// Never throws.
std::string render_capacity_html(const CapacityDocument& doc);

}  // namespace ioprobe
