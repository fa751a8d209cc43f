// A gate budgets file (docs/budgets.md).
#include <cstddef>
#include <cstdint>

#include "gate/budgets.hpp"
#include "fuzz_input.hpp"

using namespace trilemma;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = fuzz::as_text(data, size);
  (void)gate::parse_budgets(text, "fuzz.yaml");
  return 0;
}
