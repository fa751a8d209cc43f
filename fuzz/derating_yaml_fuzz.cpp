// The derating tables (devices/derating.yaml, and the global tables of devices/fitted.yaml).
#include <cstddef>
#include <cstdint>

#include "roofline/derating_tables.hpp"
#include "fuzz_input.hpp"

using namespace trilemma;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  (void)roofline::parse_derating_tables(fuzz::as_text(data, size), "derating.yaml");
  return 0;
}
