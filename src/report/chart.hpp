// A chart drawn as a self-contained SVG: one plot area with two axes (linear, logarithmic or
// named categories), ticks and labels with units, a title, a legend, and elements placed in
// data coordinates. No script and no external reference: it renders as it is, in a browser, an
// image viewer or a printed page. Styles are classes of one inline stylesheet whose greys, dash
// patterns and marker shapes stay distinguishable in grey-scale.
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace trilemma::report {

struct Axis {
  std::string label;  // with its unit: "decode tok/s"
  double min = 0, max = 1;
  bool log = false;
  std::vector<std::string> categories;  // non-empty: category i spans [i, i + 1), named at its middle
};

// Element classes of the stylesheet (chart.cpp): roof, roof-effective, limit, capacity (lines);
// point, loss-low, loss-mid, loss-high (circles, white to dark), breaks-limit (a dashed hollow
// circle: a plan that breaks a scenario limit), chosen (a ringed diamond);
// bar-0 .. bar-4 (stacked segments), pass, fail (grid cells); note, note-inverse (text on dark).
class Chart {
 public:
  Chart(std::string title, Axis x, Axis y, int width = 760, int height = 460);

  void line(double x0, double y0, double x1, double y1, const std::string& cls, const std::string& tooltip = "");
  void polyline(const std::vector<std::pair<double, double>>& points, const std::string& cls, const std::string& tooltip = "");
  // A marker: a circle (`point`, `front`), or a diamond for `chosen`; `tooltip` is its <title>.
  void marker(double x, double y, const std::string& cls, const std::string& tooltip);
  void rect(double x0, double y0, double x1, double y1, const std::string& cls, const std::string& tooltip = "");
  // Text at a data point, moved by (dx, dy) pixels.
  void text(double x, double y, const std::string& text, const std::string& cls = "note", const std::string& anchor = "start",
            double dx = 0, double dy = 0);
  // No frame, grid, ticks or axis labels: a diagram in the plot area's coordinates (the triangle).
  void hide_axes() { m_axes = false; }
  // Legend entries, drawn in order below the title: a sample of `cls` and its meaning.
  void legend(const std::string& cls, const std::string& meaning);

  // The whole document: <svg> with its stylesheet, frame, ticks, labels, elements, legend.
  std::string svg() const;

  // Where a data value lands, in pixels (clamped to the plot area).
  double px(double x) const;
  double py(double y) const;

 private:
  std::string m_title;
  Axis m_x, m_y;
  int m_width, m_height;
  double m_left = 84, m_right = 24, m_bottom = 58;
  // The plot area starts below the title's lines and the legend's rows.
  double top() const;
  // The title, wrapped at word boundaries to the chart's width (a long device name would
  // otherwise run past the right edge and be clipped); once, in the constructor: top() asks
  // for the line count at every coordinate.
  std::vector<std::string> title_lines() const;
  std::vector<std::string> m_title_lines;
  static constexpr double legend_char_px = 6.3;
  static constexpr double title_char_px = 9.5;  // 15 px bold sans-serif (DejaVu Sans Bold averages about 9.2)
  static constexpr double title_line_px = 18;
  bool m_axes = true;
  std::vector<std::string> m_elements;
  std::vector<std::pair<std::string, std::string>> m_legend;
};

// Ticks of an axis: values and their labels ("0.5", "10", "1k"), at most about `max_ticks`.
std::vector<std::pair<double, std::string>> axis_ticks(const Axis& axis, int max_ticks = 7);

// A number as a tick or point label: 3 significant digits, k / M for large values.
std::string short_label(double v);

}  // namespace trilemma::report
