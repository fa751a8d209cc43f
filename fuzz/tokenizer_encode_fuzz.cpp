// Tokenizer encode and decode on any vocabulary and any text: the input's first part builds a
// vocabulary (pieces, scores, types, BOS/EOS ids), the rest is the text.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/tokenizer/tokenizer.hpp"

using namespace trilemma;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  const int n = in.ConsumeIntegralInRange<int>(1, 64);
  std::vector<std::string> pieces;
  std::vector<float> scores;
  std::vector<std::int32_t> types;
  for (int i = 0; i < n; ++i) {
    pieces.push_back(in.ConsumeRandomLengthString(8));
    scores.push_back(in.ConsumeFloatingPoint<float>());
    types.push_back(in.ConsumeIntegralInRange<std::int32_t>(0, 6));
  }
  const int bos = in.ConsumeIntegralInRange<int>(0, n - 1), eos = in.ConsumeIntegralInRange<int>(0, n - 1);
  const bool with_bos = in.ConsumeBool(), with_eos = in.ConsumeBool();
  const std::string text = in.ConsumeRemainingBytesAsString();
  const auto tokenizer = engine::Tokenizer::from_pieces(pieces, scores, types, bos, eos);
  const auto ids = tokenizer.encode(text, with_bos, with_eos);
  int prev = -1;
  for (const int id : ids) {
    if (id < 0 || id >= tokenizer.vocab_size()) __builtin_trap();  // encode returned an id outside the vocabulary
    (void)tokenizer.decode(prev, id);
    prev = id;
  }
  return 0;
}
