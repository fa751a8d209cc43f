// Shared by the libFuzzer targets: the fuzzer's bytes as a string, or as a file for loaders
// that only read paths (an anonymous in-memory file, so no disk traffic and nothing left over).
#pragma once
#include <sys/mman.h>
#include <cstdio>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>

// An oracle of a target: when it fails, the condition and its line go to the log before the
// trap, so a finding says which property broke.
#define FUZZ_CHECK(condition)                                                                   \
  do {                                                                                          \
    if (!(condition)) {                                                                         \
      std::fprintf(stderr, "oracle failed: %s (%s:%d)\n", #condition, __FILE__, __LINE__);     \
      __builtin_trap();                                                                         \
    }                                                                                           \
  } while (0)

namespace trilemma::fuzz {

inline std::string as_text(const std::uint8_t* data, std::size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// The bytes behind a path that mmap and ifstream both read (/proc/self/fd/N of a memfd).
class MemoryFile {
 public:
  MemoryFile(const std::uint8_t* data, std::size_t size) : m_fd(::memfd_create("fuzz-input", 0)) {
    if (m_fd < 0) __builtin_trap();  // the harness cannot run: not a finding in the target
    std::size_t done = 0;
    while (done < size) {
      const ssize_t n = ::write(m_fd, data + done, size - done);
      if (n <= 0) __builtin_trap();
      done += std::size_t(n);
    }
    m_path = "/proc/self/fd/" + std::to_string(m_fd);
  }
  ~MemoryFile() { ::close(m_fd); }
  MemoryFile(const MemoryFile&) = delete;
  MemoryFile& operator=(const MemoryFile&) = delete;
  const std::string& path() const { return m_path; }

 private:
  int m_fd;
  std::string m_path;
};

}  // namespace trilemma::fuzz
