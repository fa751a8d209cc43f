#include "engine/gguf/gguf_writer.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "types/staged_file.hpp"

namespace trilemma::gguf {
namespace {

template <class T>
void put(std::vector<std::byte>& out, T v) {  // little-endian hosts only
  const auto* p = reinterpret_cast<const std::byte*>(&v);
  out.insert(out.end(), p, p + sizeof(T));
}

void put_string(std::vector<std::byte>& out, std::string_view s) {
  put<std::uint64_t>(out, s.size());
  const auto* p = reinterpret_cast<const std::byte*>(s.data());
  out.insert(out.end(), p, p + s.size());
}

std::uint64_t align_up(std::uint64_t v, std::uint64_t a) { return (v + a - 1) / a * a; }

}  // namespace

GgufWriter::GgufWriter(std::uint32_t alignment) : m_alignment(alignment) {
  if (alignment != k_default_alignment) add_uint32("general.alignment", alignment);
}

void GgufWriter::key(std::string_view k, ValueType t) {
  ++m_kv_count;
  put_string(m_kv, k);
  put<std::uint32_t>(m_kv, std::uint32_t(t));
}

void GgufWriter::add_uint32(std::string_view k, std::uint32_t v) { key(k, ValueType::u32); put(m_kv, v); }
void GgufWriter::add_int32(std::string_view k, std::int32_t v) { key(k, ValueType::i32); put(m_kv, v); }
void GgufWriter::add_uint64(std::string_view k, std::uint64_t v) { key(k, ValueType::u64); put(m_kv, v); }
void GgufWriter::add_float32(std::string_view k, float v) { key(k, ValueType::f32); put(m_kv, v); }
void GgufWriter::add_bool(std::string_view k, bool v) { key(k, ValueType::boolean); put<std::uint8_t>(m_kv, v); }
void GgufWriter::add_string(std::string_view k, std::string_view v) { key(k, ValueType::string); put_string(m_kv, v); }

void GgufWriter::add_string_array(std::string_view k, const std::vector<std::string>& v) {
  key(k, ValueType::array);
  put<std::uint32_t>(m_kv, std::uint32_t(ValueType::string));
  put<std::uint64_t>(m_kv, v.size());
  for (const auto& s : v) put_string(m_kv, s);
}

void GgufWriter::add_float_array(std::string_view k, std::span<const float> v) {
  key(k, ValueType::array);
  put<std::uint32_t>(m_kv, std::uint32_t(ValueType::f32));
  put<std::uint64_t>(m_kv, v.size());
  for (float f : v) put(m_kv, f);
}

void GgufWriter::add_int32_array(std::string_view k, std::span<const std::int32_t> v) {
  key(k, ValueType::array);
  put<std::uint32_t>(m_kv, std::uint32_t(ValueType::i32));
  put<std::uint64_t>(m_kv, v.size());
  for (auto i : v) put(m_kv, i);
}

void GgufWriter::add_tensor(std::string name, std::vector<std::uint64_t> dims, TensorType type,
                            std::span<const std::byte> data) {
  m_tensors.push_back({std::move(name), std::move(dims), type, data});
}

std::vector<std::byte> GgufWriter::header() const {
  std::vector<std::byte> out;
  put<std::uint32_t>(out, 0x46554747);  // "GGUF"
  put<std::uint32_t>(out, 3);
  put<std::uint64_t>(out, m_tensors.size());
  put<std::uint64_t>(out, m_kv_count);
  out.insert(out.end(), m_kv.begin(), m_kv.end());
  std::uint64_t offset = 0;
  for (const auto& t : m_tensors) {
    put_string(out, t.name);
    put<std::uint32_t>(out, std::uint32_t(t.dims.size()));
    for (auto d : t.dims) put<std::uint64_t>(out, d);
    put<std::uint32_t>(out, info(t.type).gguf_id);
    put<std::uint64_t>(out, offset);
    offset = align_up(offset + t.data.size(), m_alignment);
  }
  out.resize(align_up(out.size(), m_alignment), std::byte{0});
  return out;
}

std::vector<std::byte> GgufWriter::to_bytes() const {
  std::vector<std::byte> out = header();
  for (const auto& t : m_tensors) {
    out.insert(out.end(), t.data.begin(), t.data.end());
    out.resize(align_up(out.size(), m_alignment), std::byte{0});
  }
  return out;
}

Status GgufWriter::write(const std::filesystem::path& path) const {
  // Staged beside the target and renamed when complete (types/staged_file.hpp: a symlink
  // followed, a device or FIFO written in place, a directory or read-only file refused).
  TRILEMMA_TRY(out, StagedFile::create(path));
  const std::vector<std::byte> head = header();
  if (auto w = out.write(head.data(), head.size()); !w.ok()) return w.error();
  const std::vector<std::byte> zeros(m_alignment);
  for (const auto& t : m_tensors) {
    if (auto w = out.write(t.data.data(), t.data.size()); !w.ok()) return w.error();
    const std::size_t pad = align_up(t.data.size(), m_alignment) - t.data.size();
    if (auto w = out.write(zeros.data(), pad); !w.ok()) return w.error();
  }
  return out.commit();
}

}  // namespace trilemma::gguf
