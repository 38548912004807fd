#include "report/svg_chart.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "report/html_report.hpp"

namespace ioprobe {

namespace {

constexpr double kW = 720, kH = 320, kL = 70, kR = 20, kT = 36, kB = 48;
const char* kColors[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#7f7f7f"};

// "Nice" tick values covering [lo, hi].
std::vector<double> ticks(double lo, double hi, int n = 5) {
  std::vector<double> t;
  if (!(hi > lo)) return {lo};
  double raw = (hi - lo) / n, mag = std::pow(10, std::floor(std::log10(raw))), f = raw / mag;
  double step = (f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10) * mag;
  for (double v = std::ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) t.push_back(v);
  return t;
}

std::string num(double v) {
  double a = std::fabs(v);
  if (a >= 1e6) return fmt::format("{:.3g}M", v / 1e6);
  if (a >= 1e4) return fmt::format("{:.3g}k", v / 1e3);
  if (a >= 100 || v == std::floor(v)) return fmt::format("{:.0f}", v);
  return fmt::format("{:.3g}", v);
}

// "1.2k samples/s", "97.5%": a tooltip's value with its unit ("%" joined, others after a space).
std::string with_unit(const std::string& value, const std::string& unit) {
  if (unit.empty()) return value;
  return value + (unit == "%" ? "" : " ") + unit;
}

std::string svg_open(const std::string& id, const std::string& title) {
  return fmt::format(
      "<svg class=\"chart\" data-chart=\"{}\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" "
      "viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"{}\">\n<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n"
      "<text x=\"{}\" y=\"20\" font-size=\"14\" font-weight=\"bold\">{}</text>\n",
      html_escape(id), kW, kH, kW, kH, html_escape(title), kL, html_escape(title));
}

}  // namespace

std::string render_line_chart(const LineChart& c) {
  double x0 = 1e300, x1 = -1e300, y1 = 0;
  for (const auto& s : c.series)
    for (auto [x, y] : s.points) {
      if (c.log2_x && x <= 0) continue;
      x0 = std::min(x0, x), x1 = std::max(x1, x), y1 = std::max(y1, y);
    }
  for (const auto& sh : c.shades) x0 = std::min(x0, sh.x0), x1 = std::max(x1, sh.x1);
  if (c.hline > 0) y1 = std::max(y1, c.hline);
  std::string o = svg_open(c.id, c.title);
  if (x0 > x1) return o + "<text x=\"100\" y=\"150\">no data</text></svg>\n";
  auto fx = [&](double x) { return c.log2_x ? std::log2(std::max(x, 1e-9)) : x; };
  double lx0 = fx(x0), lx1 = fx(x1);
  if (lx1 <= lx0) lx1 = lx0 + 1;
  y1 = y1 > 0 ? y1 * 1.1 : 1;
  auto px = [&](double x) { return kL + (fx(x) - lx0) / (lx1 - lx0) * (kW - kL - kR); };
  auto py = [&](double y) { return kH - kB - y / y1 * (kH - kT - kB); };
  for (const auto& sh : c.shades)
    o += fmt::format("<rect class=\"shade\" x=\"{:.1f}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\" fill=\"{}\" "
                     "opacity=\"0.25\"><title>{}</title></rect>\n",
                     px(sh.x0), kT, std::max(1.0, px(sh.x1) - px(sh.x0)), kH - kT - kB, html_escape(sh.color),
                     html_escape(sh.label));
  // Axes and ticks.
  o += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#000\"/>\n", kL, kH - kB, kW - kR, kH - kB);
  o += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#000\"/>\n", kL, kT, kL, kH - kB);
  for (double t : ticks(0, y1))
    o += fmt::format("<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" stroke=\"#ddd\"/><text x=\"{}\" "
                     "y=\"{:.1f}\" font-size=\"11\" "
                     "text-anchor=\"end\">{}</text>\n",
                     kL, py(t), kW - kR, py(t), kL - 4, py(t) + 4, num(t));
  std::vector<double> xt;
  if (c.log2_x)
    for (double v = std::pow(2, std::floor(lx0)); v <= x1 * 1.0001; v *= 2) xt.push_back(v);
  else xt = ticks(x0, x1, 8);
  for (double t : xt)
    o += fmt::format("<text x=\"{:.1f}\" y=\"{}\" font-size=\"11\" text-anchor=\"middle\">{}</text>\n", px(t),
                     kH - kB + 16, num(t));
  o += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"12\" text-anchor=\"middle\">{}</text>\n", (kL + kW - kR) / 2,
                   kH - 10, html_escape(c.x_label));
  o += fmt::format(
      "<text x=\"14\" y=\"{}\" font-size=\"12\" text-anchor=\"middle\" transform=\"rotate(-90 14 {})\">{}</text>\n",
      (kT + kH - kB) / 2, (kT + kH - kB) / 2, html_escape(c.y_label));
  if (c.hline > 0)
    o += fmt::format("<line class=\"demand\" x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" stroke=\"#d62728\" "
                     "stroke-dasharray=\"6 4\"/>"
                     "<text x=\"{}\" y=\"{:.1f}\" font-size=\"11\" fill=\"#d62728\">{}</text>\n",
                     kL, py(c.hline), kW - kR, py(c.hline), kL + 6, py(c.hline) - 4, html_escape(c.hline_label));
  for (size_t i = 0; i < c.series.size(); ++i) {
    const auto& s = c.series[i];
    const char* col = kColors[i % 8];
    std::string pts;
    for (auto [x, y] : s.points) pts += fmt::format("{:.1f},{:.1f} ", px(x), py(y));
    o += fmt::format("<polyline class=\"series\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\" "
                     "points=\"{}\"><title>{}</title></polyline>\n",
                     col, pts, html_escape(s.name));
    if (s.markers)
      for (auto [x, y] : s.points)
        o += fmt::format(
            "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\"><title>{}: {} at {}</title></circle>\n", px(x),
            py(y), col, html_escape(s.name), html_escape(with_unit(num(y), c.y_unit)),
            html_escape(with_unit(num(x), c.x_unit)));
    o += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"10\" height=\"10\" fill=\"{}\"/><text x=\"{}\" y=\"{}\" "
                     "font-size=\"11\">{}</text>\n",
                     kW - 200, kT + 4 + 14 * i, col, kW - 186, kT + 13 + 14 * i, html_escape(s.name));
  }
  for (const auto& m : c.marks)
    o += fmt::format(
        "<circle class=\"mark\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"7\" fill=\"none\" stroke=\"#000\" stroke-width=\"2\"/>"
        "<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\">{}</text>\n",
        px(m.x), py(m.y), px(m.x) + 9, py(m.y) - 9, html_escape(m.label));
  return o + "</svg>\n";
}

std::string render_bar_chart(const BarChart& c) {
  std::string o = svg_open(c.id, c.title);
  if (c.bars.empty()) return o + "<text x=\"100\" y=\"150\">no data</text></svg>\n";
  double top = 0, bottom = 1e300;
  for (const auto& b : c.bars) top = std::max(top, b.second), bottom = std::min(bottom, b.second);
  auto f = [&](double v) { return c.log_y ? std::log10(std::max(v, 1e-3)) : v; };
  double lo = c.log_y ? std::floor(f(std::max(bottom, 1e-3))) : 0, hi = c.log_y ? std::ceil(f(top) + 1e-9) : top * 1.1;
  if (hi <= lo) hi = lo + 1;
  auto py = [&](double v) { return kH - kB - (f(v) - lo) / (hi - lo) * (kH - kT - kB); };
  o += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#000\"/>\n", kL, kH - kB, kW - kR, kH - kB);
  if (c.log_y)
    for (double e = lo; e <= hi; e += 1)
      o += fmt::format("<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" stroke=\"#ddd\"/><text x=\"{}\" "
                       "y=\"{:.1f}\" font-size=\"11\" "
                       "text-anchor=\"end\">{}</text>\n",
                       kL, py(std::pow(10, e)), kW - kR, py(std::pow(10, e)), kL - 4, py(std::pow(10, e)) + 4,
                       num(std::pow(10, e)));
  o += fmt::format(
      "<text x=\"14\" y=\"{}\" font-size=\"12\" text-anchor=\"middle\" transform=\"rotate(-90 14 {})\">{}</text>\n",
      (kT + kH - kB) / 2, (kT + kH - kB) / 2, html_escape(c.y_label));
  double slot = (kW - kL - kR) / static_cast<double>(c.bars.size());
  for (size_t i = 0; i < c.bars.size(); ++i) {
    double x = kL + slot * i + slot * 0.15, y = py(c.bars[i].second);
    const bool mark = i < c.marked.size() && c.marked[i];
    const std::string label = c.bars[i].first + (mark ? " (" + c.marked_label + ")" : "");
    o += fmt::format("<rect class=\"bar{}\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" "
                     "fill=\"{}\"><title>{}: {}{}</title></rect>\n",
                     mark ? " marked" : "", x, y, slot * 0.7, std::max(0.0, kH - kB - y), mark ? "#d62728" : kColors[0],
                     html_escape(label), num(c.bars[i].second), html_escape(c.value_unit));
    o += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\" text-anchor=\"middle\">{}{}</text>\n",
                     x + slot * 0.35, y - 4, num(c.bars[i].second), html_escape(c.value_unit));
    o += fmt::format("<text x=\"{:.1f}\" y=\"{}\" font-size=\"11\" text-anchor=\"middle\"{}>{}</text>\n",
                     x + slot * 0.35, kH - kB + 16, mark ? " fill=\"#d62728\"" : "", html_escape(label));
  }
  return o + "</svg>\n";
}

std::string render_stacked_bar(const std::string& id, const std::string& title,
                               const std::vector<std::pair<std::string, double>>& parts, const std::string& unit) {
  std::string o = svg_open(id, title);
  double total = 0;
  for (const auto& p : parts) total += std::max(0.0, p.second);
  if (total <= 0) return o + "<text x=\"100\" y=\"150\">no phase took measurable time</text></svg>\n";
  double x = kL, w = kW - kL - kR;
  for (size_t i = 0; i < parts.size(); ++i) {
    double pw = std::max(0.0, parts[i].second) / total * w;
    o += fmt::format("<rect class=\"bar\" x=\"{:.1f}\" y=\"60\" width=\"{:.1f}\" height=\"60\" fill=\"{}\"><title>{}: "
                     "{}</title></rect>\n",
                     x, pw, kColors[i % 8], html_escape(parts[i].first),
                     html_escape(with_unit(num(parts[i].second), unit)));
    o += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"10\" height=\"10\" fill=\"{}\"/><text x=\"{}\" y=\"{}\" "
                     "font-size=\"12\">{}: {} {} "
                     "({:.0f}%)</text>\n",
                     kL, 150 + 18 * i, kColors[i % 8], kL + 14, 159 + 18 * i, html_escape(parts[i].first),
                     num(parts[i].second), html_escape(unit), 100 * std::max(0.0, parts[i].second) / total);
    x += pw;
  }
  return o + "</svg>\n";
}

}  // namespace ioprobe
