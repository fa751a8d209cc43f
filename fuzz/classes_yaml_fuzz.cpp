// The device-class defaults (devices/classes.yaml).
#include <cstddef>
#include <cstdint>

#include "devices/device_db.hpp"
#include "fuzz_input.hpp"

using namespace trilemma;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  (void)devices::parse_class_table(fuzz::as_text(data, size), "classes.yaml");
  return 0;
}
