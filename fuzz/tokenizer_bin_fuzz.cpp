// The llama2.c tokenizer.bin loader, then encode and decode with what it loaded.
#include <cstddef>
#include <cstdint>

#include "engine/tokenizer/tokenizer.hpp"
#include "fuzz_input.hpp"

using namespace trilemma;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const fuzz::MemoryFile file(data, size);
  auto tokenizer = engine::Tokenizer::load_llama2c(file.path());
  if (!tokenizer) return 0;
  const auto ids = tokenizer->encode("Once upon a time, \xe2\x96\x81 caf\xc3\xa9 <0x0A>\n\xff", true, true);
  int prev = tokenizer->bos();
  for (const int id : ids) (void)tokenizer->decode(prev, id), prev = id;
  return 0;
}
