#include "engine/gguf/gguf_writer.hpp"

#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

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
  // A regular file is replaced atomically (temporary file, then rename); a symlink is followed
  // to the file it names; a device or FIFO is written in place (replacing /dev/null would turn
  // it into a regular file); a directory is refused.
  std::error_code ec;
  std::filesystem::path resolved = path;
  if (std::filesystem::is_symlink(path, ec)) resolved = std::filesystem::weakly_canonical(path, ec);
  const auto st = std::filesystem::status(resolved, ec);
  if (std::filesystem::is_directory(st)) return make_error(ErrorKind::io, path.string(), "", "is a directory: give a file name");
  const bool in_place = std::filesystem::exists(st) && !std::filesystem::is_regular_file(st);
  const std::string target = resolved.string();
  // `<target>.tmp.<pid>`, the name every trilemma output uses while it is written, so a signal
  // handler that knows the target can remove it (cli/signal_cleanup.hpp).
  const std::string tmp = in_place ? target : target + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(tmp.c_str(), in_place ? (O_WRONLY | O_TRUNC) : (O_WRONLY | O_CREAT | O_TRUNC), 0644);
  if (fd < 0) return make_error(ErrorKind::io, target, "", std::string("cannot create a temporary file: ") + std::strerror(errno));
  const auto fail = [&](const char* what) -> Status {
    const std::string reason = std::string(what) + ": " + std::strerror(errno);
    ::close(fd);
    if (!in_place) std::remove(tmp.c_str());
    return make_error(ErrorKind::io, target, "", reason);
  };
  const auto write_all = [&](const std::byte* p, std::size_t n) {
    while (n > 0) {
      const ssize_t w = ::write(fd, p, n);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) return false;
      p += w;
      n -= std::size_t(w);
    }
    return true;
  };
  const std::vector<std::byte> head = header();
  if (!write_all(head.data(), head.size())) return fail("write failed");
  const std::vector<std::byte> zeros(m_alignment);
  for (const auto& t : m_tensors) {
    if (!write_all(t.data.data(), t.data.size())) return fail("write failed");
    const std::size_t pad = align_up(t.data.size(), m_alignment) - t.data.size();
    if (!write_all(zeros.data(), pad)) return fail("write failed");
  }
  if (in_place) {
    if (::close(fd) != 0) return make_error(ErrorKind::io, target, "", std::string("close failed: ") + std::strerror(errno));
    return Ok{};
  }
  if (::fsync(fd) != 0) return fail("fsync failed");
  if (::close(fd) != 0) {
    std::remove(tmp.c_str());
    return make_error(ErrorKind::io, target, "", std::string("close failed: ") + std::strerror(errno));
  }
  if (std::rename(tmp.c_str(), target.c_str()) != 0) {
    const std::string reason = std::strerror(errno);
    std::remove(tmp.c_str());
    return make_error(ErrorKind::io, target, "", "rename failed: " + reason);
  }
  return Ok{};
}

}  // namespace trilemma::gguf
