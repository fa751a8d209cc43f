#include "cli/self_binary.hpp"

#include <unistd.h>

#include <string>

namespace trilemma::cli {

Result<std::filesystem::path> self_binary() {
  char exe[4096];
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return make_error(ErrorKind::io, "/proc/self/exe", "", "cannot locate the trilemma binary");
  return std::filesystem::path(std::string(exe, std::size_t(n)));
}

}  // namespace trilemma::cli
