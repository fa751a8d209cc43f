#include "io/xml_escape.hpp"

namespace trilemma::io {
namespace {

// The length of the well-formed UTF-8 sequence at `i` (RFC 3629: no overlong forms, no
// surrogates, nothing past U+10FFFF), or 0.
std::size_t utf8_length(const std::string& s, std::size_t i) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const auto cont = [&](std::size_t k) { return i + k < s.size() && (b(k) & 0xC0) == 0x80; };
  const unsigned char c = b(0);
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (!cont(1) || !cont(2)) return 0;
    if ((c == 0xE0 && b(1) < 0xA0) || (c == 0xED && b(1) >= 0xA0)) return 0;  // overlong, surrogate
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (!cont(1) || !cont(2) || !cont(3)) return 0;
    if ((c == 0xF0 && b(1) < 0x90) || (c == 0xF4 && b(1) >= 0x90)) return 0;  // overlong, past U+10FFFF
    return 4;
  }
  return 0;
}

}  // namespace

std::string xml_escape(const std::string& in) {
  std::string s;
  for (std::size_t i = 0; i < in.size();) {
    const char c = in[i];
    const std::size_t n = utf8_length(in, i);
    if (n == 0) {
      // Bytes that are not UTF-8 (a path on a Latin-1 file system) would make the document
      // malformed (reliability D19): each becomes U+FFFD.
      s += "\xEF\xBF\xBD";
      ++i;
      continue;
    }
    if (n == 3 && in.compare(i, 2, "\xEF\xBF") == 0 && static_cast<unsigned char>(in[i + 2]) >= 0xBE) {
      s += "\xEF\xBF\xBD";  // U+FFFE and U+FFFF are UTF-8 but not XML 1.0 characters
      i += n;
      continue;
    }
    if (n > 1) {
      s.append(in, i, n);
      i += n;
      continue;
    }
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
    ++i;
  }
  return s;
}

}  // namespace trilemma::io
