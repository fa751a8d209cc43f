#include "types/result.hpp"

namespace trilemma {

std::string Error::to_string() const {
  std::string out;
  if (!file.empty()) out += file + ":";
  if (!where.empty()) out += where + ":";
  if (!out.empty()) out += " ";
  return out + message;
}

Error make_error(ErrorKind kind, std::string file, std::string where, std::string message) {
  return Error{kind, std::move(file), std::move(where), std::move(message)};
}

}  // namespace trilemma
