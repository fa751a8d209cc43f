#include "types/safe_text.hpp"

#include <algorithm>

namespace trilemma {
namespace {

bool id_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '+' ||
         c == '-';
}

}  // namespace

std::optional<std::string> id_problem(std::string_view id) {
  if (id.empty()) return "is empty";
  if (id.size() > k_max_id_length)
    return "is " + std::to_string(id.size()) + " characters long (at most " + std::to_string(k_max_id_length) + ")";
  if (id.front() == '-') return "starts with '-'";
  const auto bad = std::find_if_not(id.begin(), id.end(), id_char);
  if (bad != id.end())
    return "holds byte 0x" + std::string(1, "0123456789abcdef"[(static_cast<unsigned char>(*bad) >> 4) & 15]) +
           std::string(1, "0123456789abcdef"[static_cast<unsigned char>(*bad) & 15]) +
           " at " + std::to_string(bad - id.begin()) + " (ids are letters, digits and . _ + -)";
  return std::nullopt;
}

std::optional<std::string> path_problem(std::string_view path) {
  if (path.empty()) return "is empty";
  if (path.size() > k_max_path_length)
    return "is " + std::to_string(path.size()) + " bytes long (at most " + std::to_string(k_max_path_length) + ")";
  const auto bad = std::find_if(path.begin(), path.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u < 0x20 || u == 0x7f;
  });
  if (bad != path.end()) return "holds a control character at " + std::to_string(bad - path.begin());
  return std::nullopt;
}

std::string as_id(std::string_view text) {
  std::string out;
  for (char c : text.substr(0, k_max_id_length)) out += id_char(c) ? c : '-';
  if (out.empty()) out = "model";
  if (out.front() == '-') out.front() = 'x';
  return out;
}

}  // namespace trilemma
