// A model file (models/*.yaml).
#include <cstddef>
#include <cstdint>

#include "models/catalog.hpp"
#include "fuzz_input.hpp"

using namespace trilemma;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = fuzz::as_text(data, size);
  (void)models::parse_model_yaml(text, "fuzz.yaml", "");
  return 0;
}
