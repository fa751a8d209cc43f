// A read-only memory mapping of a whole file, unmapped when the last owner lets go.
#pragma once
#include <cstddef>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>

#include "types/result.hpp"

namespace trilemma::gguf {

// Why `path` cannot be read as an input file, or nullopt: missing (an I/O error), a FIFO, device
// or directory (input: opening a FIFO would wait for a writer forever), a symlink loop or a name
// too long (input). Never blocks.
std::optional<Error> input_file_problem(const std::filesystem::path& path);

class MappedFile {
 public:
  static Result<std::shared_ptr<const MappedFile>> open(const std::filesystem::path& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  std::span<const std::byte> bytes() const { return {m_data, m_size}; }

 private:
  MappedFile(const std::byte* data, std::size_t size) : m_data(data), m_size(size) {}
  const std::byte* m_data;
  std::size_t m_size;
};

}  // namespace trilemma::gguf
