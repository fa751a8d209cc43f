// Benchmark results as calibrate reads them: llama-bench output (json, jsonl, csv, markdown),
// trilemma run/verify reports (as calibrate and verify --replay read them), and the
// published-measurement CSVs (speed and loss).
#include <cstddef>
#include <cstdint>

#include "devices/device_db.hpp"
#include "measurements/llama_bench.hpp"
#include "measurements/loss_rows.hpp"
#include "measurements/speed_rows.hpp"
#include "verify/measurement.hpp"
#include "verify/result_files.hpp"
#include "fuzz_input.hpp"

using namespace trilemma;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = fuzz::as_text(data, size);
  (void)measurements::parse_llama_bench(text, "bench.json");
  (void)measurements::parse_speed_csv(text, "speed.csv");
  (void)measurements::parse_loss_csv(text, "loss.csv");
  (void)verify::read_verify_report(text, "report.json");
  static const auto device = devices::resolve_device("raspberry-pi-5");
  if (!device) __builtin_trap();  // the built-in catalog must resolve
  const fuzz::MemoryFile file(data, size);
  (void)verify::ResultFiles::read({file.path()}, *device);
  return 0;
}
