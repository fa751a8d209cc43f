// Raw GGUF byte builder for hostile fixtures: lets a test write any field, valid or not.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

namespace trilemma::testing {

struct Bytes {
  std::vector<std::byte> b;
  template <class T>
  Bytes& put(T v) {
    const auto* p = reinterpret_cast<const std::byte*>(&v);
    b.insert(b.end(), p, p + sizeof(T));
    return *this;
  }
  Bytes& u32(std::uint32_t v) { return put(v); }
  Bytes& u64(std::uint64_t v) { return put(v); }
  Bytes& str(std::string_view s) {
    u64(s.size());
    for (char c : s) b.push_back(std::byte(c));
    return *this;
  }
  Bytes& header(std::uint64_t tensors, std::uint64_t kvs, std::uint32_t version = 3) {
    return u32(0x46554747).u32(version).u64(tensors).u64(kvs);
  }
  // tensor info: name, dims, ggml type, offset
  Bytes& tensor(std::string_view name, std::vector<std::uint64_t> dims, std::uint32_t type, std::uint64_t offset) {
    str(name).u32(std::uint32_t(dims.size()));
    for (auto d : dims) u64(d);
    return u32(type).u64(offset);
  }
  Bytes& pad(std::size_t align = 32) {
    while (b.size() % align) b.push_back(std::byte{0});
    return *this;
  }
  Bytes& zeros(std::size_t n) {
    b.insert(b.end(), n, std::byte{0});
    return *this;
  }
};

}  // namespace trilemma::testing
