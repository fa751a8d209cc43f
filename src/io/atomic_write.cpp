#include "io/atomic_write.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace trilemma::io {

Status write_file_atomically(const std::filesystem::path& path, std::string_view content) {
  const auto tmp = path.string() + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return make_error(ErrorKind::io, path.string(), "", std::string("cannot write: ") + std::strerror(errno));
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    out.flush();
    if (!out) {
      std::error_code ignored;
      std::filesystem::remove(tmp, ignored);
      return make_error(ErrorKind::io, path.string(), "", "write failed");
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    return make_error(ErrorKind::io, path.string(), "", "cannot rename into place: " + ec.message());
  }
  return Ok{};
}

Result<std::string> read_text_file(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    return make_error(ErrorKind::io, path.string(), "", "no such file");
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(ErrorKind::io, path.string(), "", std::string("cannot read: ") + std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace trilemma::io
