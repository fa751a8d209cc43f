#include "cli/report_files.hpp"

#include <filesystem>

#include "cli/log.hpp"
#include "io/atomic_write.hpp"

namespace trilemma::cli {

Status write_report_files(const std::string& report_path, const std::string& svg_dir, const report::HtmlReport& page) {
  if (!svg_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(svg_dir, ec);
    if (ec) return make_error(ErrorKind::io, svg_dir, "", "cannot create the directory: " + ec.message());
    if (page.plots.empty()) warn("--svg: nothing to draw (no plan, or no measured point)");
    for (const auto& p : page.plots)
      if (auto w = io::write_file_atomically(std::filesystem::path(svg_dir) / (p.name + ".svg"), p.svg); !w.ok()) return w.error();
  }
  if (report_path.empty()) return Ok{};
  return io::write_file_atomically(report_path, report::html_page(page));
}

}  // namespace trilemma::cli
