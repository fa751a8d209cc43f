// A device file (devices/*.yaml): parsed, and what parses is written back and read again.
#include <cstddef>
#include <cstdint>

#include "devices/device_loader.hpp"
#include "fuzz_input.hpp"

using namespace trilemma;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = fuzz::as_text(data, size);
  auto device = devices::parse_device(text, "fuzz.yaml", "");
  if (!device) return 0;
  // What the loader accepts, the writer must write in a form the loader accepts again.
  if (!devices::parse_device(devices::device_to_yaml(*device), "round-trip.yaml", "")) __builtin_trap();
  return 0;
}
