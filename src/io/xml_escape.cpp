#include "io/xml_escape.hpp"

namespace trilemma::io {

std::string xml_escape(const std::string& in) {
  std::string s;
  for (char c : in) {
    switch (c) {
      case '&': s += "&amp;"; break;
      case '<': s += "&lt;"; break;
      case '>': s += "&gt;"; break;
      case '"': s += "&quot;"; break;
      case '\'': s += "&apos;"; break;
      default:
        // Control characters other than tab and newline are not allowed in XML 1.0.
        if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t') s += ' ';
        else s += c;
    }
  }
  return s;
}

}  // namespace trilemma::io
