// The llama2.c checkpoint loader (a 7 x int32 header, then f32 weights) and one forward pass
// of whatever it accepts.
#include <cstddef>
#include <cstdint>

#include "engine/kv/kv_cache.hpp"
#include "engine/model/loaders.hpp"
#include "engine/model/transformer.hpp"
#include "engine/quant/kernel_table.hpp"
#include "fuzz_input.hpp"

using namespace trilemma;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const fuzz::MemoryFile file(data, size);
  static engine::ThreadPool pool(1);
  auto model = engine::load_llama2c(file.path(), std::nullopt, pool);
  if (!model) return 0;
  const auto& s = model->shape;
  engine::KvConfig c;
  c.layers = int(s.layers), c.heads = int(s.heads), c.kv_heads = int(s.kv_heads), c.head_dim = int(s.head_dim);
  c.capacity = 4, c.isa = engine::detect_isa();
  auto cache = engine::make_kv_cache(c);
  if (!cache) return 0;
  engine::Transformer transformer(*model, pool, c.isa, std::move(cache).value(), 2);
  const int tokens[2] = {0, int(s.vocab) - 1};
  (void)transformer.forward(tokens, 0, true);
  return 0;
}
