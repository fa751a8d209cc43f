// A plan document (plan --json / --out), as emit and verify read it back, then every emitter on it.
#include <cstddef>
#include <cstdint>

#include "emitters/emitter.hpp"
#include "solver/plan_document.hpp"
#include "fuzz_input.hpp"

using namespace trilemma;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = fuzz::as_text(data, size);
  auto plan = solver::parse_plan_document(text, "plan.json");
  if (!plan) return 0;
  for (const auto& emitter : emitters::emitters()) (void)emitter.emit(*plan);
  return 0;
}
