#include "engine/gguf/mapped_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace trilemma::gguf {

Result<std::shared_ptr<const MappedFile>> MappedFile::open(const std::filesystem::path& path) {
  const std::string name = path.string();
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return make_error(ErrorKind::io, name, "", std::string("cannot open: ") + std::strerror(errno));
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return make_error(ErrorKind::io, name, "", "not a regular file");
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
