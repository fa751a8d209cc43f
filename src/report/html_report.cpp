#include "report/html_report.hpp"

#include "io/xml_escape.hpp"

namespace trilemma::report {
namespace {

constexpr const char* k_css =
    "body{font-family:sans-serif;max-width:820px;margin:24px auto;padding:0 12px;color:#111}"
    "h1{font-size:20px}h2{font-size:16px;margin-top:28px}"
    "pre{background:#f4f4f4;border:1px solid #ccc;padding:10px;font-size:12px;overflow-x:auto;white-space:pre-wrap}"
    "figure{margin:18px 0;page-break-inside:avoid}figcaption{font-size:13px;color:#333;margin-top:4px}"
    "svg{max-width:100%;height:auto}li{font-size:13px}"
    "@media print{pre{white-space:pre-wrap}}";

}  // namespace

std::string html_page(const HtmlReport& r) {
  std::string s = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" + io::xml_escape(r.title) +
                  "</title>\n<style>" + k_css + "</style>\n</head>\n<body>\n<h1>" + io::xml_escape(r.title) + "</h1>\n";
  for (const auto& p : r.plots)
    s += "<figure id=\"" + io::xml_escape(p.name) + "\">\n" + p.svg + "<figcaption>" + io::xml_escape(p.caption) + "</figcaption>\n</figure>\n";
  s += "<h2>Report</h2>\n<pre>" + io::xml_escape(r.text) + "</pre>\n";
  if (!r.basis.empty()) {
    s += "<h2>Basis of the figures</h2>\n<ul>\n";
    for (const auto& b : r.basis) s += "<li>" + io::xml_escape(b) + "</li>\n";
    s += "</ul>\n";
  }
  return s + "</body>\n</html>\n";
}

}  // namespace trilemma::report
