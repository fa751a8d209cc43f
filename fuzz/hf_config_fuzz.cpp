// A Hugging Face config.json, read as a model shape.
#include <cstddef>
#include <cstdint>

#include "models/hf_config.hpp"
#include "fuzz_input.hpp"

using namespace trilemma;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = fuzz::as_text(data, size);
  (void)models::parse_hf_config(text, "config.json");
  return 0;
}
