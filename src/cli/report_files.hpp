// --report FILE.html and --svg DIR, as every command that draws plots takes them: the page
// (report/html_report.hpp) written to FILE, each plot to DIR/NAME.svg, each file atomically.
#pragma once
#include <string>

#include "report/html_report.hpp"
#include "types/result.hpp"

namespace trilemma::cli {

inline constexpr const char* k_report_help = "also write the report with its plots as one self-contained HTML page (inline SVG, no script)";
inline constexpr const char* k_svg_help = "also write the plots as SVG files into this directory";

// Nothing when both are empty. A directory that cannot be made is an error naming it.
Status write_report_files(const std::string& report_path, const std::string& svg_dir, const report::HtmlReport& page);

}  // namespace trilemma::cli
