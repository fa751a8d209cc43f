// The per-core rate table (devices/cores.yaml).
#include <cstddef>
#include <cstdint>

#include "devices/core_table.hpp"
#include "fuzz_input.hpp"

using namespace trilemma;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  (void)devices::parse_core_table(fuzz::as_text(data, size), "cores.yaml");
  return 0;
}
