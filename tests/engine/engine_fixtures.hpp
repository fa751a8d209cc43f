// Fixtures shared by the engine tests that need no shared data: a tiny model shape, temp
// paths, and llama2.c tokenizer files built in code.
#pragma once
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "types/model_shape.hpp"

namespace trilemma::testing {

namespace fs = std::filesystem;


inline trilemma::ModelShape tiny_shape() {
  trilemma::ModelShape s;
  s.layers = 2;
  s.hidden = 64;
  s.heads = 4;
  s.kv_heads = 2;
  s.head_dim = 16;
  s.ffn = 96;  // 96 % 64 != 0: tq formats fall back on ffn_down
  s.vocab = 300;
  s.context = 64;
  s.tied_embeddings = false;
  return s;
}

// Per process, so concurrent test runs (two build directories) do not share files.
inline fs::path temp_path(const std::string& name) {
  return fs::temp_directory_path() / ("trilemma_engine_test_" + std::to_string(::getpid()) + "_" + name);
}

inline void write_file(const fs::path& path, const std::vector<std::byte>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
}

template <class T>
void put(std::vector<std::byte>& b, T v) {
  const auto* p = reinterpret_cast<const std::byte*>(&v);
  b.insert(b.end(), p, p + sizeof(T));
}

// A llama2.c tokenizer.bin with `n` tokens: <unk>, <s>, </s>, then single letters / filler.
inline std::vector<std::byte> tokenizer_bin(int n) {
  std::vector<std::byte> b;
  put<std::int32_t>(b, 8);
  for (int i = 0; i < n; ++i) {
    const std::string piece = i == 0 ? "<unk>" : i == 1 ? "<s>" : i == 2 ? "</s>" : "t" + std::to_string(i);
    put<float>(b, 0.0f);
    put<std::int32_t>(b, std::int32_t(piece.size()));
    for (char c : piece) b.push_back(std::byte(c));
  }
  return b;
}

}  // namespace trilemma::testing
