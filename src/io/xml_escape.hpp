// Text and attribute values escaped for XML (JUnit reports, SVG plots, HTML reports).
#pragma once
#include <string>

namespace trilemma::io {

// & < > " ' as entities; control characters other than tab and newline (not allowed in XML
// 1.0) as spaces.
std::string xml_escape(const std::string& s);

}  // namespace trilemma::io
