// A scenario profile (profiles/*.yaml).
#include <cstddef>
#include <cstdint>

#include "solver/profile.hpp"
#include "fuzz_input.hpp"

using namespace trilemma;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = fuzz::as_text(data, size);
  (void)solver::parse_profile(text, "fuzz.yaml", "");
  return 0;
}
