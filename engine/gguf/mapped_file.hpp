// A read-only memory mapping of a whole file, unmapped when the last owner lets go.
#pragma once
#include <cstddef>
#include <filesystem>
#include <memory>
#include <span>

#include "types/result.hpp"

namespace trilemma::gguf {

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
