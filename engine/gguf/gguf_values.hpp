// Decoding GGUF metadata values from little-endian bytes; shared by the parser and the
// getters. Internal to engine/gguf.
#pragma once
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>

#include "engine/gguf/gguf_file.hpp"

namespace trilemma::gguf::detail {

// Fixed size of a scalar value type; 0 for string/array; nullopt for unknown types.
inline std::optional<std::uint64_t> scalar_size(std::uint32_t type) {
  switch (static_cast<ValueType>(type)) {
    case ValueType::u8: case ValueType::i8: case ValueType::boolean: return 1;
    case ValueType::u16: case ValueType::i16: return 2;
    case ValueType::u32: case ValueType::i32: case ValueType::f32: return 4;
    case ValueType::u64: case ValueType::i64: case ValueType::f64: return 8;
    case ValueType::string: case ValueType::array: return 0;
  }
  return std::nullopt;
}

inline bool is_integer(ValueType t) {
  switch (t) {
    case ValueType::u8: case ValueType::i8: case ValueType::u16: case ValueType::i16:
    case ValueType::u32: case ValueType::i32: case ValueType::u64: case ValueType::i64: return true;
    default: return false;
  }
}

template <class T>
T load(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

// Decodes an integer of type t at p as a signed 128-bit-safe pair (negative flag, magnitude).
inline std::optional<std::int64_t> load_signed(ValueType t, const std::byte* p) {
  switch (t) {
    case ValueType::u8: return load<std::uint8_t>(p);
    case ValueType::i8: return load<std::int8_t>(p);
    case ValueType::u16: return load<std::uint16_t>(p);
    case ValueType::i16: return load<std::int16_t>(p);
    case ValueType::u32: return load<std::uint32_t>(p);
    case ValueType::i32: return load<std::int32_t>(p);
    case ValueType::i64: return load<std::int64_t>(p);
    case ValueType::u64: {
      const auto v = load<std::uint64_t>(p);
      if (v > std::uint64_t(std::numeric_limits<std::int64_t>::max())) return std::nullopt;
      return std::int64_t(v);
    }
    default: return std::nullopt;
  }
}

inline std::optional<double> load_number(ValueType t, const std::byte* p) {
  if (t == ValueType::f32) return load<float>(p);
  if (t == ValueType::f64) return load<double>(p);
  if (t == ValueType::u64) return double(load<std::uint64_t>(p));
  if (is_integer(t)) return double(*load_signed(t, p));
  return std::nullopt;
}

}  // namespace trilemma::gguf::detail
