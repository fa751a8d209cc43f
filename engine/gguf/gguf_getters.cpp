// GgufFile's lookups: tensors by name and metadata values decoded on demand from the mapping
// (their bounds were checked when the file was parsed).
#include "engine/gguf/gguf_file.hpp"
#include "engine/gguf/gguf_values.hpp"

namespace trilemma::gguf {

using namespace detail;

const TensorInfo* GgufFile::find_tensor(std::string_view name) const {
  for (const auto& t : m_tensors)
    if (t.name == name) return &t;
  return nullptr;
}

std::optional<ValueType> GgufFile::value_type(std::string_view key) const {
  const Entry* e = find_entry(key);
  return e ? std::optional(e->type) : std::nullopt;
}

std::optional<std::uint64_t> GgufFile::get_uint(std::string_view key) const {
  const Entry* e = find_entry(key);
  if (!e || !is_integer(e->type)) return std::nullopt;
  const std::byte* p = bytes().data() + e->offset;
  if (e->type == ValueType::u64) return load<std::uint64_t>(p);
  const auto v = load_signed(e->type, p);
  if (!v || *v < 0) return std::nullopt;
  return std::uint64_t(*v);
}

std::optional<double> GgufFile::get_float(std::string_view key) const {
  const Entry* e = find_entry(key);
  if (!e) return std::nullopt;
  return load_number(e->type, bytes().data() + e->offset);
}

std::optional<std::string> GgufFile::get_string(std::string_view key) const {
  const Entry* e = find_entry(key);
  if (!e || e->type != ValueType::string) return std::nullopt;
  const std::byte* p = bytes().data() + e->offset;
  return std::string(reinterpret_cast<const char*>(p + 8), load<std::uint64_t>(p));
}

std::optional<bool> GgufFile::get_bool(std::string_view key) const {
  const Entry* e = find_entry(key);
  if (!e || e->type != ValueType::boolean) return std::nullopt;
  return load<std::uint8_t>(bytes().data() + e->offset) != 0;
}

std::optional<std::vector<std::string>> GgufFile::get_string_array(std::string_view key) const {
  const Entry* e = find_entry(key);
  if (!e || e->type != ValueType::array || e->elem_type != ValueType::string) return std::nullopt;
  std::vector<std::string> out;
  out.reserve(e->count);  // validated at parse time: count x 8 bytes fit in the file
  const std::byte* p = bytes().data() + e->offset;
  for (std::uint64_t i = 0; i < e->count; ++i) {
    const auto len = load<std::uint64_t>(p);
    out.emplace_back(reinterpret_cast<const char*>(p + 8), len);
    p += 8 + len;
  }
  return out;
}

std::optional<std::vector<float>> GgufFile::get_float_array(std::string_view key) const {
  const Entry* e = find_entry(key);
  if (!e || e->type != ValueType::array) return std::nullopt;
  const auto size = scalar_size(std::uint32_t(e->elem_type));
  if (!size || *size == 0 || e->elem_type == ValueType::boolean) return std::nullopt;
  std::vector<float> out(e->count);
  for (std::uint64_t i = 0; i < e->count; ++i)
    out[i] = float(*load_number(e->elem_type, bytes().data() + e->offset + i * *size));
  return out;
}

std::optional<std::vector<std::int64_t>> GgufFile::get_int_array(std::string_view key) const {
  const Entry* e = find_entry(key);
  if (!e || e->type != ValueType::array || !is_integer(e->elem_type)) return std::nullopt;
  const std::uint64_t size = *scalar_size(std::uint32_t(e->elem_type));
  std::vector<std::int64_t> out(e->count);
  for (std::uint64_t i = 0; i < e->count; ++i) {
    const std::byte* p = bytes().data() + e->offset + i * size;
    // u64 values above INT64_MAX wrap; GGUF integer arrays (token types, ids) never get there.
    out[i] = e->elem_type == ValueType::u64 ? std::int64_t(load<std::uint64_t>(p)) : *load_signed(e->elem_type, p);
  }
  return out;
}

std::uint64_t GgufFile::array_length(std::string_view key) const {
  const Entry* e = find_entry(key);
  return e && e->type == ValueType::array ? e->count : 0;
}

std::vector<std::string> GgufFile::keys() const {
  std::vector<std::string> out;
  out.reserve(m_entries.size());
  for (const auto& e : m_entries) out.push_back(e.key);
  return out;
}

std::span<const std::byte> GgufFile::tensor_data(const TensorInfo& t) const {
  return {bytes().data() + m_data_offset + t.offset, t.bytes};
}

}  // namespace trilemma::gguf
