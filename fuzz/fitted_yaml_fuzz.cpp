// The per-device calibrations of devices/fitted.yaml.
#include <cstddef>
#include <cstdint>

#include "devices/device_db.hpp"
#include "fuzz_input.hpp"

using namespace trilemma;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  (void)devices::parse_fitted_calibrations(fuzz::as_text(data, size), "fitted.yaml");
  return 0;
}
