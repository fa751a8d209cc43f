// Builds a GGUF v3 file (layout in gguf_file.hpp): metadata in insertion order, tensors in
// insertion order at offsets aligned to `alignment`. Tensor data is borrowed, not copied.
// write() goes to a temporary file beside the target and renames it on success, so a failed
// export never leaves a half-written file.
#pragma once
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "engine/gguf/gguf_file.hpp"
#include "types/result.hpp"
#include "types/tensor_type.hpp"

namespace trilemma::gguf {

class GgufWriter {
 public:
  explicit GgufWriter(std::uint32_t alignment = k_default_alignment);

  void add_uint32(std::string_view key, std::uint32_t v);
  void add_int32(std::string_view key, std::int32_t v);
  void add_uint64(std::string_view key, std::uint64_t v);
  void add_float32(std::string_view key, float v);
  void add_bool(std::string_view key, bool v);
  void add_string(std::string_view key, std::string_view v);
  void add_string_array(std::string_view key, const std::vector<std::string>& v);
  void add_float_array(std::string_view key, std::span<const float> v);
  void add_int32_array(std::string_view key, std::span<const std::int32_t> v);

  // REQUIRES: type has a GGUF id; data.size() == tensor_bytes(type, product of dims); data
  // outlives write(). dims in ggml order (dims[0] = row length).
  void add_tensor(std::string name, std::vector<std::uint64_t> dims, TensorType type, std::span<const std::byte> data);

  std::vector<std::byte> to_bytes() const;
  Status write(const std::filesystem::path& path) const;

 private:
  struct Tensor {
    std::string name;
    std::vector<std::uint64_t> dims;
    TensorType type;
    std::span<const std::byte> data;
  };
  void key(std::string_view k, ValueType t);
  std::vector<std::byte> header() const;  // everything before the data section, padded

  std::uint32_t m_alignment;
  std::uint64_t m_kv_count = 0;
  std::vector<std::byte> m_kv;  // encoded key-values
  std::vector<Tensor> m_tensors;
};

}  // namespace trilemma::gguf
