#include "io/atomic_write.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace trilemma::io {

namespace {

// A device, FIFO or socket is written in place: replacing it would turn /dev/null into a
// regular file (issue 14).
Status write_in_place(const std::filesystem::path& path, std::string_view content) {
  std::ofstream out(path, std::ios::binary);
  if (!out) return make_error(ErrorKind::io, path.string(), "", std::string("cannot write: ") + std::strerror(errno));
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
  out.flush();
  if (!out) return make_error(ErrorKind::io, path.string(), "", std::string("write failed: ") + std::strerror(errno));
  return Ok{};
}

}  // namespace

Status write_file_atomically(const std::filesystem::path& requested, std::string_view content) {
  std::error_code ec;
  // Through a symlink to the file it names: the link stays a link.
  std::filesystem::path path = requested;
  if (std::filesystem::is_symlink(requested, ec)) {
    path = std::filesystem::weakly_canonical(requested, ec);
    if (ec) return make_error(ErrorKind::io, requested.string(), "", "cannot resolve the symlink: " + ec.message());
  }
  const auto status = std::filesystem::status(path, ec);
  if (std::filesystem::is_directory(status))
    return make_error(ErrorKind::io, requested.string(), "", "is a directory: give a file name");
  if (std::filesystem::exists(status) && !std::filesystem::is_regular_file(status)) return write_in_place(path, content);
  const auto tmp = path.string() + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return make_error(ErrorKind::io, requested.string(), "", std::string("cannot write: ") + std::strerror(errno));
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    out.flush();
    if (!out) {
      const std::string reason = std::strerror(errno);
      std::filesystem::remove(tmp, ec);
      return make_error(ErrorKind::io, requested.string(), "", "write failed: " + reason);
    }
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    const std::string reason = ec.message();  // before remove() reuses the error code
    std::error_code ignored;
    std::filesystem::remove(tmp, ignored);
    return make_error(ErrorKind::io, requested.string(), "", "cannot rename into place: " + reason);
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
