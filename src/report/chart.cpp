#include "report/chart.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "io/xml_escape.hpp"

namespace trilemma::report {
namespace {

// Greys from black to light, solid and dashed strokes, filled and hollow markers: every class
// stays apart when printed without colour.
constexpr const char* k_style =
    "text{font-family:sans-serif;font-size:12px;fill:#111}"
    ".title{font-size:15px;font-weight:bold}.axis-label{font-size:13px}"
    ".frame{fill:none;stroke:#333;stroke-width:1}.grid{stroke:#ddd;stroke-width:1}"
    ".roof{fill:none;stroke:#000;stroke-width:2.5}"
    ".roof-effective{fill:none;stroke:#555;stroke-width:1.5;stroke-dasharray:6 4}"
    ".limit{fill:none;stroke:#000;stroke-width:1.5;stroke-dasharray:2 3}"
    ".point{fill:#fff;stroke:#666;stroke-width:1.2}"
    ".chosen{fill:#000;stroke:#fff;stroke-width:1.5}.chosen-ring{fill:none;stroke:#000;stroke-width:2}"
    ".loss-low{fill:#fff;stroke:#000;stroke-width:1.2}.loss-mid{fill:#999;stroke:#000;stroke-width:1}.loss-high{fill:#333;stroke:#000;stroke-width:1}"
    ".breaks-limit{fill:none;stroke:#000;stroke-width:1.2;stroke-dasharray:2 2}"
    ".bar-0{fill:#222}.bar-1{fill:#666}.bar-2{fill:#999}.bar-3{fill:#c8c8c8}.bar-4{fill:#fff;stroke:#222;stroke-dasharray:3 2}"
    ".capacity{stroke:#000;stroke-width:2;stroke-dasharray:8 3}"
    ".pass{fill:#fff;stroke:#000;stroke-width:1.5}.fail{fill:#333;stroke:#000;stroke-width:1.5}"
    ".note{font-size:11px}.note-inverse{font-size:11px;fill:#fff}";

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

std::string title_of(const std::string& tooltip) {
  return tooltip.empty() ? "" : "<title>" + io::xml_escape(tooltip) + "</title>";
}

}  // namespace

std::string short_label(double v) {
  const double a = std::fabs(v);
  char buf[32];
  if (a >= 1e6) std::snprintf(buf, sizeof buf, "%.3gM", v / 1e6);
  else if (a >= 1e3) std::snprintf(buf, sizeof buf, "%.3gk", v / 1e3);
  else std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

std::vector<std::pair<double, std::string>> axis_ticks(const Axis& a, int max_ticks) {
  std::vector<std::pair<double, std::string>> out;
  if (!a.categories.empty()) {
    for (std::size_t i = 0; i < a.categories.size(); ++i) out.emplace_back(double(i) + 0.5, a.categories[i]);
    return out;
  }
  if (!(a.max > a.min)) return out;
  if (a.log) {
    // Powers of ten, with 2 and 5 between them when the range spans few decades.
    const int lo = int(std::floor(std::log10(a.min))), hi = int(std::ceil(std::log10(a.max)));
    const bool fine = hi - lo <= 3;
    for (int e = lo; e <= hi; ++e)
      for (double m : {1.0, 2.0, 5.0}) {
        if (m != 1.0 && !fine) continue;
        const double v = m * std::pow(10.0, e);
        if (v >= a.min * (1 - 1e-9) && v <= a.max * (1 + 1e-9)) out.emplace_back(v, short_label(v));
      }
    return out;
  }
  // A "nice" step: 1, 2 or 5 times a power of ten, giving at most max_ticks ticks.
  const double raw = (a.max - a.min) / std::max(1, max_ticks - 1);
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  double step = p;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * p >= raw) {
      step = m * p;
      break;
    }
  for (double v = std::ceil(a.min / step) * step; v <= a.max + step * 1e-9; v += step) out.emplace_back(v, short_label(std::fabs(v) < step * 1e-9 ? 0.0 : v));
  return out;
}

namespace {

// An axis every coordinate can be computed on: finite ends in order, a positive start when
// logarithmic. Whatever figures reach a chart, its SVG never holds a NaN or an infinity
// (reliability D18: an infinite axis wrote "-nan" coordinates).
// Ends are kept within 1e-300..1e300 in magnitude, so a range, a decade count or a tick step
// computed from them is finite too (a 1e308 axis end once overflowed the tick loop's int).
Axis drawable(Axis a) {
  constexpr double k_big = 1e300, k_tiny = 1e-300;
  if (!std::isfinite(a.min)) a.min = a.log ? 1e-3 : 0;
  if (a.log && !(a.min > 0)) a.min = std::isfinite(a.max) && a.max > 0 ? a.max * 1e-6 : 1e-3;
  a.min = std::clamp(a.min, a.log ? k_tiny : -k_big, k_big);
  if (std::isfinite(a.max)) a.max = std::clamp(a.max, a.log ? k_tiny : -k_big, k_big);
  if (!std::isfinite(a.max) || !(a.max > a.min)) a.max = a.log ? a.min * 10 : a.min + std::max(1.0, std::abs(a.min));
  return a;
}

// Where `f` (the share of an axis) lands, kept in the plot area: a non-finite value at an end.
double share(double f) { return std::isnan(f) ? 0.0 : std::clamp(f, 0.0, 1.0); }

}  // namespace

Chart::Chart(std::string title, Axis x, Axis y, int width, int height)
    : m_title(std::move(title)), m_x(drawable(std::move(x))), m_y(drawable(std::move(y))), m_width(width), m_height(height) {
  if (!m_y.categories.empty()) m_left = 210;  // room for the category names
  m_title_lines = title_lines();
}

double Chart::px(double x) const {
  const double w = m_width - m_left - m_right;
  double f = 0;
  if (m_x.log) f = (std::log10(std::max(x, m_x.min)) - std::log10(m_x.min)) / (std::log10(m_x.max) - std::log10(m_x.min));
  else f = (x - m_x.min) / (m_x.max - m_x.min);
  return m_left + share(f) * w;
}

std::vector<std::string> Chart::title_lines() const {
  const auto fits = std::max<std::size_t>(12, std::size_t((m_width - 16) / title_char_px));
  std::vector<std::string> lines;
  std::string line;
  std::size_t at = 0;
  while (at < m_title.size()) {
    const auto space = m_title.find(' ', at);
    const std::string word = m_title.substr(at, space == std::string::npos ? std::string::npos : space - at);
    at = space == std::string::npos ? m_title.size() : space + 1;
    if (!line.empty() && line.size() + 1 + word.size() > fits) lines.push_back(std::move(line)), line.clear();
    line += (line.empty() ? "" : " ") + word;
  }
  if (!line.empty() || lines.empty()) lines.push_back(line);
  return lines;
}

double Chart::top() const {
  double lx = 8, rows = m_legend.empty() ? 0 : 1;
  for (const auto& entry : m_legend) {
    const double w = 32 + legend_char_px * double(entry.second.size());
    if (lx + w > m_width - 8 && lx > 8) lx = 8, ++rows;
    lx += w;
  }
  return 34 + title_line_px * double(m_title_lines.size() - 1) + 16 * rows;
}

double Chart::py(double y) const {
  const double h = m_height - top() - m_bottom;
  double f = 0;
  if (m_y.log) f = (std::log10(std::max(y, m_y.min)) - std::log10(m_y.min)) / (std::log10(m_y.max) - std::log10(m_y.min));
  else f = (y - m_y.min) / (m_y.max - m_y.min);
  return top() + (1.0 - share(f)) * h;
}

void Chart::line(double x0, double y0, double x1, double y1, const std::string& cls, const std::string& tooltip) {
  m_elements.push_back("<line class=\"" + cls + "\" x1=\"" + num(px(x0)) + "\" y1=\"" + num(py(y0)) + "\" x2=\"" + num(px(x1)) +
                       "\" y2=\"" + num(py(y1)) + "\">" + title_of(tooltip) + "</line>");
}

void Chart::polyline(const std::vector<std::pair<double, double>>& points, const std::string& cls, const std::string& tooltip) {
  std::string pts;
  for (const auto& [x, y] : points) pts += (pts.empty() ? "" : " ") + num(px(x)) + "," + num(py(y));
  m_elements.push_back("<polyline class=\"" + cls + "\" points=\"" + pts + "\">" + title_of(tooltip) + "</polyline>");
}

void Chart::marker(double x, double y, const std::string& cls, const std::string& tooltip) {
  const double cx = px(x), cy = py(y);
  if (cls == "chosen") {
    const double r = 8;
    m_elements.push_back("<circle class=\"chosen-ring\" cx=\"" + num(cx) + "\" cy=\"" + num(cy) + "\" r=\"13\"/>");
    m_elements.push_back("<polygon class=\"chosen\" points=\"" + num(cx) + "," + num(cy - r) + " " + num(cx + r) + "," + num(cy) + " " +
                         num(cx) + "," + num(cy + r) + " " + num(cx - r) + "," + num(cy) + "\">" + title_of(tooltip) + "</polygon>");
    return;
  }
  m_elements.push_back("<circle class=\"" + cls + "\" cx=\"" + num(cx) + "\" cy=\"" + num(cy) + "\" r=\"" + (cls == "point" ? "3.5" : "5") +
                       "\">" + title_of(tooltip) + "</circle>");
}

void Chart::rect(double x0, double y0, double x1, double y1, const std::string& cls, const std::string& tooltip) {
  const double left = std::min(px(x0), px(x1)), top = std::min(py(y0), py(y1));
  m_elements.push_back("<rect class=\"" + cls + "\" x=\"" + num(left) + "\" y=\"" + num(top) + "\" width=\"" +
                       num(std::fabs(px(x1) - px(x0))) + "\" height=\"" + num(std::fabs(py(y1) - py(y0))) + "\">" + title_of(tooltip) +
                       "</rect>");
}

void Chart::text(double x, double y, const std::string& t, const std::string& cls, const std::string& anchor, double dx, double dy) {
  m_elements.push_back("<text class=\"" + cls + "\" x=\"" + num(px(x) + dx) + "\" y=\"" + num(py(y) + dy) + "\" text-anchor=\"" + anchor + "\">" +
                       io::xml_escape(t) + "</text>");
}

void Chart::legend(const std::string& cls, const std::string& meaning) { m_legend.emplace_back(cls, meaning); }

std::string Chart::svg() const {
  const double x0 = m_left, x1 = m_width - m_right, y0 = top(), y1 = m_height - m_bottom;
  std::string s = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(m_width) + "\" height=\"" +
                  std::to_string(m_height) + "\" viewBox=\"0 0 " + std::to_string(m_width) + " " + std::to_string(m_height) +
                  "\" role=\"img\" aria-label=\"" + io::xml_escape(m_title) + "\">\n<style>" + k_style + "</style>\n";
  const auto& lines = m_title_lines;
  for (std::size_t i = 0; i < lines.size(); ++i)
    s += "<text class=\"title\" x=\"8\" y=\"" + num(20 + title_line_px * double(i)) + "\">" + io::xml_escape(lines[i]) + "</text>\n";
  // Legend: rows below the title, a sample of each class and its meaning, wrapped at the width.
  double lx = 8, ly = 35 + title_line_px * double(lines.size() - 1);
  for (const auto& [cls, meaning] : m_legend) {
    const double w = 32 + legend_char_px * double(meaning.size());
    if (lx + w > m_width - 8 && lx > 8) lx = 8, ly += 16;
    if (cls.rfind("bar-", 0) == 0 || cls == "pass" || cls == "fail") s += "<rect class=\"" + cls + "\" x=\"" + num(lx) + "\" y=\"" + num(ly - 5) + "\" width=\"14\" height=\"10\"/>";
    else if (cls == "chosen")
      s += "<polygon class=\"chosen\" points=\"" + num(lx + 7) + "," + num(ly - 6) + " " + num(lx + 13) + "," + num(ly) + " " + num(lx + 7) + "," +
           num(ly + 6) + " " + num(lx + 1) + "," + num(ly) + "\"/>";
    else if (cls == "point" || cls == "breaks-limit" || cls.rfind("loss-", 0) == 0)
      s += "<circle class=\"" + cls + "\" cx=\"" + num(lx + 7) + "\" cy=\"" + num(ly) + "\" r=\"4.5\"/>";
    else s += "<line class=\"" + cls + "\" x1=\"" + num(lx) + "\" y1=\"" + num(ly) + "\" x2=\"" + num(lx + 18) + "\" y2=\"" + num(ly) + "\"/>";
    s += "<text class=\"note\" x=\"" + num(lx + 22) + "\" y=\"" + num(ly + 4) + "\">" + io::xml_escape(meaning) + "</text>\n";
    lx += w;
  }
  if (m_axes) {
    // Grid, ticks and their labels.
    for (const auto& [v, label] : axis_ticks(m_x)) {
      const double x = px(v);
      s += "<line class=\"grid\" x1=\"" + num(x) + "\" y1=\"" + num(y0) + "\" x2=\"" + num(x) + "\" y2=\"" + num(y1) + "\"/>";
      s += "<text class=\"tick\" x=\"" + num(x) + "\" y=\"" + num(y1 + 16) + "\" text-anchor=\"middle\">" + io::xml_escape(label) + "</text>\n";
    }
    for (const auto& [v, label] : axis_ticks(m_y)) {
      const double y = py(v);
      if (m_y.categories.empty()) s += "<line class=\"grid\" x1=\"" + num(x0) + "\" y1=\"" + num(y) + "\" x2=\"" + num(x1) + "\" y2=\"" + num(y) + "\"/>";
      s += "<text class=\"tick\" x=\"" + num(x0 - 6) + "\" y=\"" + num(y + 4) + "\" text-anchor=\"end\">" + io::xml_escape(label) + "</text>\n";
    }
    s += "<rect class=\"frame\" x=\"" + num(x0) + "\" y=\"" + num(y0) + "\" width=\"" + num(x1 - x0) + "\" height=\"" + num(y1 - y0) + "\"/>\n";
    s += "<text class=\"axis-label\" x=\"" + num((x0 + x1) / 2) + "\" y=\"" + num(m_height - 14.0) + "\" text-anchor=\"middle\">" +
         io::xml_escape(m_x.label) + "</text>\n";
    s += "<text class=\"axis-label\" transform=\"rotate(-90)\" x=\"" + num(-(y0 + y1) / 2) + "\" y=\"16\" text-anchor=\"middle\">" +
         io::xml_escape(m_y.label) + "</text>\n";
  }
  for (const auto& e : m_elements) s += e + "\n";
  return s + "</svg>\n";
}

}  // namespace trilemma::report
