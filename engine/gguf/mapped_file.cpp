#include "engine/gguf/mapped_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace trilemma::gguf {

std::optional<Error> input_file_problem(const std::filesystem::path& path) {
  std::string name = path.string();
  if (name.size() > 256) name = name.substr(0, 256) + "...";
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    const int e = errno;
    const ErrorKind kind = e == ELOOP || e == ENAMETOOLONG || e == ENOTDIR ? ErrorKind::input : ErrorKind::io;
    return make_error(kind, name, "", std::string("cannot open: ") + std::strerror(e));
  }
  if (!S_ISREG(st.st_mode))
    return make_error(ErrorKind::input, name, "", "not a regular file (models and tokenizers are read from files, not a FIFO, device or directory)");
  return std::nullopt;
}

Result<std::shared_ptr<const MappedFile>> MappedFile::open(const std::filesystem::path& path) {
  const std::string name = path.string();
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer forever
  // (reliability D14); on a regular file it changes nothing.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    const int e = errno;
    // A symlink loop or a name too long is the path's fault, not the disk's.
    const ErrorKind kind = e == ELOOP || e == ENAMETOOLONG || e == ENOTDIR ? ErrorKind::input : ErrorKind::io;
    return make_error(kind, name.size() > 256 ? name.substr(0, 256) + "..." : name, "", std::string("cannot open: ") + std::strerror(e));
  }
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return make_error(ErrorKind::input, name, "", "not a regular file (a model or tokenizer is read from a file, not a FIFO, device or directory)");
  }
  if (st.st_size == 0) {
    ::close(fd);
    return make_error(ErrorKind::input, name, "byte 0", "file is empty");
  }
  void* map = mmap(nullptr, std::size_t(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
  const int saved = errno;
  ::close(fd);
  if (map == MAP_FAILED) return make_error(ErrorKind::io, name, "", std::string("mmap failed: ") + std::strerror(saved));
  return std::shared_ptr<const MappedFile>(new MappedFile(static_cast<const std::byte*>(map), std::size_t(st.st_size)));
}

MappedFile::~MappedFile() { munmap(const_cast<std::byte*>(m_data), m_size); }

}  // namespace trilemma::gguf
