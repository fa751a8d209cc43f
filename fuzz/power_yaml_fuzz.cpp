// The per-class power and throttling priors (devices/power.yaml).
#include <cstddef>
#include <cstdint>

#include "fuzz_input.hpp"
#include "power/power_tables.hpp"

using namespace trilemma;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  (void)power::parse_power_tables(fuzz::as_text(data, size), "power.yaml");
  return 0;
}
