// One self-contained HTML page: a report's text, its plots inline as SVG, each with its caption,
// and one stylesheet; no script, no external reference (readable offline, printable, attachable
// to a CI run).
#pragma once
#include <string>
#include <vector>

#include "report/plan_plots.hpp"

namespace trilemma::report {

struct HtmlReport {
  std::string title;      // "trilemma plan: llama-3.2-1b on apple-m2"
  std::string text;       // the command's text report, shown as it prints
  std::vector<Plot> plots;
  std::vector<std::string> basis;  // the basis of the figures, one line each
};

std::string html_page(const HtmlReport& report);

}  // namespace trilemma::report
