// Inline SVG charts for the HTML report: a line/point chart with optional log axes, a horizontal
// reference line, shaded x ranges and marked points; a bar chart; a stacked horizontal bar.
// Output is an <svg> element string; all labels are HTML-escaped here.
#pragma once

#include <string>
#include <vector>

namespace ioprobe {

struct SvgSeries {
  std::string name;
  std::vector<std::pair<double, double>> points;  // (x, y)
  bool markers = true;
};

struct SvgShade {
  double x0 = 0, x1 = 0;
  std::string label;  // legend text, e.g. "warm-up", "stall"
  std::string color;  // CSS color
};

struct SvgMark {
  double x = 0, y = 0;
  std::string label;
};

struct LineChart {
  std::string id;  // data-chart attribute
  std::string title, x_label, y_label;
  /// The units a point's tooltip gives its values ("samples/s", "%", "s"; "" for a bare count):
  /// "delivered: 1.2k samples/s at 4 GPUs".
  std::string x_unit, y_unit;
  bool log2_x = false;
  std::vector<SvgSeries> series;
  std::vector<SvgShade> shades;
  std::vector<SvgMark> marks;
  double hline = -1;  // reference line at y (< 0: none)
  std::string hline_label;
};

std::string render_line_chart(const LineChart& c);

struct BarChart {
  std::string id, title, y_label;
  std::vector<std::pair<std::string, double>> bars;
  bool log_y = false;
  std::string value_unit;    // appended to the value labels and tooltips (" µs", " samples/s")
  std::vector<bool> marked;  // per bar (may be shorter): drawn in red, its label followed by marked_label
  std::string marked_label;  // e.g. "straggler"
};

std::string render_bar_chart(const BarChart& c);

/// One horizontal bar split into named parts (seconds), with a legend.
std::string render_stacked_bar(const std::string& id, const std::string& title,
                               const std::vector<std::pair<std::string, double>>& parts, const std::string& unit);

}  // namespace ioprobe
