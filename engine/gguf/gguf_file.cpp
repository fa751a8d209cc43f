// GGUF parsing (format in gguf_file.hpp). The cursor keeps the first error and reads zeros
// after it, so the parser checks `failed()` once per item instead of after every field.
#include "engine/gguf/gguf_file.hpp"

#include "engine/gguf/gguf_values.hpp"
#include "engine/gguf/mapped_file.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <unordered_set>

namespace trilemma::gguf {

using namespace detail;

struct GgufFile::Storage {
  std::vector<std::byte> owned;            // parse(): bytes given in memory
  std::shared_ptr<const MappedFile> map;   // open(): the mapping
  const std::byte* data = nullptr;
  std::size_t size = 0;
};

namespace {

constexpr std::uint32_t k_magic = 0x46554747;  // "GGUF" read as little-endian u32
constexpr std::uint64_t k_max_key_bytes = 65535;  // gguf.md: keys are at most 2^16-1 bytes
constexpr int k_max_array_depth = 4;

std::string at_byte(std::uint64_t offset) { return "byte " + std::to_string(offset); }

class Cursor {
 public:
  Cursor(std::span<const std::byte> bytes, const std::string& file) : m_bytes(bytes), m_file(file) {}

  bool failed() const { return m_error.has_value(); }
  const Error& error() const { return *m_error; }
  std::uint64_t pos() const { return m_pos; }
  std::uint64_t remaining() const { return m_bytes.size() - m_pos; }

  void fail(std::uint64_t at, const std::string& field, const std::string& what) {
    if (!m_error) m_error = make_error(ErrorKind::input, m_file, at_byte(at), field + ": " + what);
  }

  template <class T>
  T read(const std::string& field) {
    T value{};
    if (failed()) return value;
    if (remaining() < sizeof(T)) {
      fail(m_pos, field, "file ends inside this field (" + std::to_string(remaining()) + " of " +
                             std::to_string(sizeof(T)) + " bytes left)");
      return value;
    }
    std::memcpy(&value, m_bytes.data() + m_pos, sizeof(T));  // little-endian hosts only
    m_pos += sizeof(T);
    return value;
  }

  // A string's bytes are left in place; returns its view. Length is checked before use.
  std::string_view string(const std::string& field, std::uint64_t max_len) {
    const std::uint64_t at = m_pos;
    const auto len = read<std::uint64_t>(field + ".length");
    if (failed()) return {};
    if (len > max_len) {
      fail(at, field + ".length", "length " + std::to_string(len) + " exceeds the limit " + std::to_string(max_len));
      return {};
    }
    if (len > remaining()) {
      fail(at, field + ".length", "length " + std::to_string(len) + " runs past the end of the file (" +
                                      std::to_string(remaining()) + " bytes left)");
      return {};
    }
    std::string_view out(reinterpret_cast<const char*>(m_bytes.data() + m_pos), len);
    m_pos += len;
    return out;
  }

  void skip(std::uint64_t n, const std::string& field) {
    if (failed()) return;
    if (n > remaining()) {
      fail(m_pos, field, "needs " + std::to_string(n) + " bytes, " + std::to_string(remaining()) + " left");
      return;
    }
    m_pos += n;
  }

  // Walks one value of `type` (validating nested strings and arrays) without decoding it.
  void skip_value(std::uint32_t type, const std::string& field, int depth) {
    const std::uint64_t at = m_pos;
    const auto size = scalar_size(type);
    if (!size) return fail(at, field + ".type", "unknown value type " + std::to_string(type));
    if (*size > 0) return skip(*size, field);
    if (static_cast<ValueType>(type) == ValueType::string) {
      string(field, std::numeric_limits<std::uint64_t>::max());
      return;
    }
    if (depth >= k_max_array_depth) return fail(at, field, "arrays nested deeper than 4");
    const auto elem_type = read<std::uint32_t>(field + ".elem_type");
    const std::uint64_t count_at = m_pos;
    const auto count = read<std::uint64_t>(field + ".count");
    if (failed()) return;
    const auto elem_size = scalar_size(elem_type);
    if (!elem_size) return fail(at, field + ".elem_type", "unknown value type " + std::to_string(elem_type));
    // Strings and arrays take at least 8 bytes per element; check before walking.
    const std::uint64_t min_elem = *elem_size > 0 ? *elem_size : 8;
    if (count > remaining() / min_elem)
      return fail(count_at, field + ".count",
                  "count " + std::to_string(count) + " needs more bytes than the file has left");
    if (*elem_size > 0) return skip(count * *elem_size, field);
    for (std::uint64_t i = 0; i < count && !failed(); ++i)
      skip_value(elem_type, field + "[" + std::to_string(i) + "]", depth + 1);
  }

  void seek(std::uint64_t pos) { m_pos = pos; }

 private:
  std::span<const std::byte> m_bytes;
  const std::string& m_file;
  std::uint64_t m_pos = 0;
  std::optional<Error> m_error;
};

}  // namespace

Result<GgufFile> GgufFile::parse(std::vector<std::byte> bytes, std::string name) {
  auto storage = std::make_shared<Storage>();
  storage->owned = std::move(bytes);
  storage->data = storage->owned.data();
  storage->size = storage->owned.size();
  return parse_storage(std::move(storage), std::move(name));
}

Result<GgufFile> GgufFile::parse_storage(std::shared_ptr<const Storage> storage, std::string name) {
  GgufFile file;
  file.m_storage = std::move(storage);
  file.m_name = std::move(name);

  const std::span<const std::byte> all = file.bytes();
  Cursor c(all, file.m_name);
  const auto magic = c.read<std::uint32_t>("magic");
  if (c.failed()) return c.error();
  if (magic != k_magic) return make_error(ErrorKind::input, file.m_name, at_byte(0), "magic: not a GGUF file");
  file.m_version = c.read<std::uint32_t>("version");
  if (c.failed()) return c.error();
  if (file.m_version != 2 && file.m_version != 3)
    return make_error(ErrorKind::input, file.m_name, at_byte(4),
                      "version: " + std::to_string(file.m_version) + " is not supported (2 or 3)");
  const std::uint64_t counts_at = c.pos();
  const auto tensor_count = c.read<std::uint64_t>("tensor_count");
  const auto kv_count = c.read<std::uint64_t>("metadata_kv_count");
  if (c.failed()) return c.error();
  // Smallest possible entries: a key-value is 8 + 4 + 1 bytes, a tensor info 8 + 4 + 4 + 8.
  if (kv_count > c.remaining() / 13)
    return make_error(ErrorKind::input, file.m_name, at_byte(counts_at + 8),
                      "metadata_kv_count: " + std::to_string(kv_count) + " entries cannot fit in the file");
  if (tensor_count > c.remaining() / 24)
    return make_error(ErrorKind::input, file.m_name, at_byte(counts_at),
                      "tensor_count: " + std::to_string(tensor_count) + " tensors cannot fit in the file");

  std::unordered_set<std::string_view> seen;
  file.m_entries.reserve(kv_count);
  for (std::uint64_t i = 0; i < kv_count; ++i) {
    const std::string field = "metadata[" + std::to_string(i) + "]";
    const std::uint64_t key_at = c.pos();
    const auto key = c.string(field + ".key", k_max_key_bytes);
    const auto type = c.read<std::uint32_t>(field + ".type");
    if (c.failed()) return c.error();
    const std::string value_field = "metadata[\"" + std::string(key) + "\"]";
    if (!seen.insert(key).second)
      return make_error(ErrorKind::input, file.m_name, at_byte(key_at), value_field + ": duplicate key");
    Entry e{std::string(key), static_cast<ValueType>(type), ValueType::u8, 0, c.pos()};
    if (e.type == ValueType::array) {
      const std::uint64_t arr_at = c.pos();
      c.skip_value(type, value_field, 0);
      if (c.failed()) return c.error();
      e.elem_type = static_cast<ValueType>(load<std::uint32_t>(all.data() + arr_at));
      e.count = load<std::uint64_t>(all.data() + arr_at + 4);
      e.offset = arr_at + 12;
    } else {
      c.skip_value(type, value_field, 0);
      if (c.failed()) return c.error();
    }
    file.m_entries.push_back(std::move(e));
  }

  if (const Entry* align = file.find_entry("general.alignment")) {
    const auto v = is_integer(align->type) ? load_signed(align->type, all.data() + align->offset) : std::nullopt;
    // The GGUF spec asks for a multiple of 8; below that, f32 and f16 tensor data would sit at
    // addresses the kernels cannot load from (a fuzzed file with alignment 2 did).
    if (!v || *v < 8 || (*v & (*v - 1)) != 0 || *v > (1 << 20))
      return make_error(ErrorKind::input, file.m_name, at_byte(align->offset),
                        "metadata[\"general.alignment\"]: must be a power of two from 8 to 2^20");
    file.m_alignment = std::uint32_t(*v);
  }

  std::unordered_set<std::string> names;
  file.m_tensors.reserve(std::min<std::uint64_t>(tensor_count, c.remaining() / 24));
  std::vector<std::uint64_t> info_at;  // where each tensor info starts, for offset errors
  for (std::uint64_t i = 0; i < tensor_count; ++i) {
    const std::string field = "tensor_infos[" + std::to_string(i) + "]";
    info_at.push_back(c.pos());
    TensorInfo t;
    t.name = std::string(c.string(field + ".name", k_max_key_bytes));
    const std::uint64_t ndims_at = c.pos();
    const auto n_dims = c.read<std::uint32_t>(field + ".n_dims");
    if (c.failed()) return c.error();
    if (n_dims == 0 || n_dims > k_max_dims)
      return make_error(ErrorKind::input, file.m_name, at_byte(ndims_at),
                        field + ".n_dims: " + std::to_string(n_dims) + " is outside 1..4");
    t.elems = 1;
    for (std::uint32_t d = 0; d < n_dims; ++d) {
      const std::uint64_t dim_at = c.pos();
      const auto dim = c.read<std::uint64_t>(field + ".dims[" + std::to_string(d) + "]");
      if (c.failed()) return c.error();
      const std::string dim_field = field + ".dims[" + std::to_string(d) + "]";
      if (dim == 0)
        return make_error(ErrorKind::input, file.m_name, at_byte(dim_at), dim_field + ": must be > 0");
      if (t.elems > std::uint64_t(std::numeric_limits<std::int64_t>::max()) / dim)
        return make_error(ErrorKind::input, file.m_name, at_byte(dim_at),
                          dim_field + ": " + std::to_string(dim) + " makes the element count overflow");
      t.elems *= dim;
      t.dims.push_back(dim);
    }
    const std::uint64_t type_at = c.pos();
    t.gguf_type = c.read<std::uint32_t>(field + ".type");
    const std::uint64_t offset_at = c.pos();
    t.offset = c.read<std::uint64_t>(field + ".offset");
    if (c.failed()) return c.error();
    if (!names.insert(t.name).second)
      return make_error(ErrorKind::input, file.m_name, at_byte(info_at.back()),
                        field + ".name: duplicate tensor name \"" + t.name + "\"");
    t.type = tensor_type_from_gguf_id(t.gguf_type);
    if (t.type) {
      const auto& ti = info(*t.type);
      if (t.dims[0] % ti.block_elems != 0)
        return make_error(ErrorKind::input, file.m_name, at_byte(type_at),
                          field + ".type: row length " + std::to_string(t.dims[0]) + " is not a multiple of " +
                              std::string(ti.name) + "'s block of " + std::to_string(ti.block_elems));
      // elems < 2^63 and block_bytes <= 292: divide first so the product cannot overflow.
      const std::uint64_t blocks = t.elems / ti.block_elems;
      if (blocks > std::numeric_limits<std::uint64_t>::max() / ti.block_bytes)
        return make_error(ErrorKind::input, file.m_name, at_byte(type_at), field + ": tensor size overflows");
      t.bytes = blocks * ti.block_bytes;
    }
    if (t.offset % file.m_alignment != 0)
      return make_error(ErrorKind::input, file.m_name, at_byte(offset_at),
                        field + ".offset: " + std::to_string(t.offset) + " is not a multiple of the alignment " +
                            std::to_string(file.m_alignment));
    file.m_tensors.push_back(std::move(t));
  }

  const std::uint64_t end_of_infos = c.pos();
  const std::uint64_t a = file.m_alignment;
  file.m_data_offset = (end_of_infos + a - 1) / a * a;
  const std::uint64_t size = all.size();
  if (!file.m_tensors.empty() && file.m_data_offset > size)
    return make_error(ErrorKind::input, file.m_name, at_byte(end_of_infos),
                      "data section: starts at " + std::to_string(file.m_data_offset) + ", past the end of the file (" +
                          std::to_string(size) + " bytes)");
  const std::uint64_t data_size = size > file.m_data_offset ? size - file.m_data_offset : 0;
  for (std::size_t i = 0; i < file.m_tensors.size(); ++i) {
    const auto& t = file.m_tensors[i];
    if (t.offset > data_size || t.bytes > data_size - t.offset)
      return make_error(ErrorKind::input, file.m_name, at_byte(info_at[i]),
                        "tensor_infos[" + std::to_string(i) + "].offset: " + std::to_string(t.offset) + " + " +
                            std::to_string(t.bytes) + " bytes runs past the end of the data section (" +
                            std::to_string(data_size) + " bytes)");
  }
  return file;
}

Result<GgufFile> GgufFile::open(const std::filesystem::path& path) {
  auto map = MappedFile::open(path);
  if (!map) {
    Error e = map.error();
    if (e.kind == ErrorKind::input) e.message = "magic: " + e.message;
    return e;
  }
  auto storage = std::make_shared<Storage>();
  storage->map = *map;
  storage->data = storage->map->bytes().data();
  storage->size = storage->map->bytes().size();
  return parse_storage(std::move(storage), path.string());
}

std::shared_ptr<const void> GgufFile::owner() const { return m_storage; }

std::span<const std::byte> GgufFile::bytes() const { return {m_storage->data, m_storage->size}; }

bool GgufFile::file_backed() const { return m_storage->map != nullptr; }

const GgufFile::Entry* GgufFile::find_entry(std::string_view key) const {
  for (const auto& e : m_entries)
    if (e.key == key) return &e;
  return nullptr;
}

}  // namespace trilemma::gguf
