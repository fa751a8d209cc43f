// The GGUF reader and everything that consumes a parsed file: every metadata getter, the
// planner's shape reader, the tokenizer, the engine's loader, and one forward pass of what
// loads (crafted shapes once read past a RoPE buffer here).
#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/gguf/gguf_file.hpp"
#include "engine/kv/kv_cache.hpp"
#include "engine/model/loaders.hpp"
#include "engine/model/transformer.hpp"
#include "engine/quant/kernel_table.hpp"
#include "engine/tokenizer/tokenizer.hpp"
#include "fuzz_input.hpp"
#include "models/gguf_shape.hpp"

using namespace trilemma;

namespace {

void read_every_value(const gguf::GgufFile& file) {
  for (const auto& key : file.keys()) {
    (void)file.get_uint(key), (void)file.get_float(key), (void)file.get_string(key), (void)file.get_bool(key);
    (void)file.get_string_array(key), (void)file.get_float_array(key), (void)file.get_int_array(key);
    (void)file.array_length(key);
  }
  for (const auto& t : file.tensors())
    if (t.type) (void)file.tensor_data(t);
}

void run_one_token(const engine::Model& model, engine::ThreadPool& pool) {
  const auto& s = model.shape;
  engine::KvConfig c;
  c.layers = int(s.layers), c.heads = int(s.heads), c.kv_heads = int(s.kv_heads), c.head_dim = int(s.head_dim);
  c.capacity = 4, c.isa = engine::detect_isa();
  auto cache = engine::make_kv_cache(c);
  if (!cache) return;
  engine::Transformer transformer(model, pool, engine::detect_isa(), std::move(cache).value(), 2);
  const int tokens[2] = {0, int(s.vocab) - 1};
  (void)transformer.forward(tokens, 0, true);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::byte> bytes(size);
  for (std::size_t i = 0; i < size; ++i) bytes[i] = std::byte(data[i]);
  auto file = gguf::GgufFile::parse(std::move(bytes), "fuzz.gguf");
  if (!file) return 0;
  read_every_value(*file);
  (void)engine::Tokenizer::from_gguf(*file);
  const fuzz::MemoryFile on_disk(data, size);
  (void)models::model_from_gguf(on_disk.path());
  static engine::ThreadPool pool(1);
  auto model = engine::load_gguf_model(*file, std::nullopt, pool);
  if (model) run_one_token(*model, pool);
  return 0;
}
