// Read-only view of a GGUF file (v2 and v3): header, metadata and tensor table.
//
// Layout (ggml docs/gguf.md), all little-endian:
//   u32 magic "GGUF" | u32 version | u64 tensor_count | u64 metadata_kv_count
//   metadata_kv_count x { string key | u32 value_type | value }
//   tensor_count x { string name | u32 n_dims | u64 dims[n_dims] | u32 ggml_type | u64 offset }
//   padding to general.alignment (default 32) | tensor data
// string = u64 length + bytes (no terminator); array = u32 elem_type + u64 count + elements.
//
// Every count, length and offset is checked against the bytes that remain before it is used,
// so a hostile or truncated file yields an Error (where = "byte N", message names the field),
// never a crash or a huge allocation. Metadata values are decoded on demand from the mapping.
#pragma once
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "types/result.hpp"
#include "types/tensor_type.hpp"

namespace trilemma::gguf {

// GGUF metadata value types (gguf_type in ggml).
enum class ValueType : std::uint32_t {
  u8 = 0, i8 = 1, u16 = 2, i16 = 3, u32 = 4, i32 = 5, f32 = 6, boolean = 7,
  string = 8, array = 9, u64 = 10, i64 = 11, f64 = 12,
};
inline constexpr std::uint32_t k_default_alignment = 32;
inline constexpr std::uint32_t k_max_dims = 4;  // GGML_MAX_DIMS

struct TensorInfo {
  std::string name;
  std::vector<std::uint64_t> dims;  // ggml order: dims[0] = row length
  std::uint32_t gguf_type = 0;
  std::optional<TensorType> type;   // nullopt when unknown to the table
  std::uint64_t offset = 0;         // from the start of the data section
  std::uint64_t elems = 0;
  std::uint64_t bytes = 0;          // 0 when type is unknown
};

class GgufFile {
 public:
  // mmap, parse header/metadata/tensor table; tensor data is not touched.
  static Result<GgufFile> open(const std::filesystem::path& path);
  // In-memory, for tests and files built in code.
  static Result<GgufFile> parse(std::vector<std::byte> bytes, std::string name);

  std::uint32_t version() const { return m_version; }
  std::uint32_t alignment() const { return m_alignment; }
  std::uint64_t data_offset() const { return m_data_offset; }  // file offset of the data section
  const std::vector<TensorInfo>& tensors() const { return m_tensors; }
  const TensorInfo* find_tensor(std::string_view name) const;

  std::optional<std::uint64_t> get_uint(std::string_view key) const;  // any integer type; negative -> nullopt
  std::optional<double> get_float(std::string_view key) const;        // float or integer types
  std::optional<std::string> get_string(std::string_view key) const;
  std::optional<bool> get_bool(std::string_view key) const;
  std::optional<std::vector<std::string>> get_string_array(std::string_view key) const;
  std::optional<std::vector<float>> get_float_array(std::string_view key) const;      // float or integer elements
  std::optional<std::vector<std::int64_t>> get_int_array(std::string_view key) const;  // integer elements
  std::uint64_t array_length(std::string_view key) const;  // 0 if absent or not an array
  std::optional<ValueType> value_type(std::string_view key) const;
  std::vector<std::string> keys() const;  // in file order

  // REQUIRES: t is from this file's tensors() and t.type has a value.
  std::span<const std::byte> tensor_data(const TensorInfo& t) const;
  const std::string& name() const { return m_name; }
  std::span<const std::byte> bytes() const;
  // Keeps the file's bytes alive (for views of tensor data that outlive this object).
  std::shared_ptr<const void> owner() const;
  // Whether the bytes are a read-only mapping of a file (open()), not bytes held in memory (parse()).
  bool file_backed() const;

  struct Entry {  // one metadata value, decoded lazily from the mapped bytes
    std::string key;
    ValueType type;
    ValueType elem_type;      // arrays only
    std::uint64_t count = 0;  // arrays only
    std::uint64_t offset = 0; // file offset of the value (after the type, and array header)
  };
  struct Storage;  // mmap or owned bytes

 private:
  static Result<GgufFile> parse_storage(std::shared_ptr<const Storage> storage, std::string name);
  const Entry* find_entry(std::string_view key) const;

  std::shared_ptr<const Storage> m_storage;
  std::string m_name;
  std::uint32_t m_version = 0;
  std::uint32_t m_alignment = k_default_alignment;
  std::uint64_t m_data_offset = 0;
  std::vector<Entry> m_entries;
  std::vector<TensorInfo> m_tensors;
};

}  // namespace trilemma::gguf
