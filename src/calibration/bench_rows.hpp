// llama-bench results as dataset rows of one device: the weight format from llama.cpp's file
// type name, the backend from its backend list and offload, the catalog model from what the
// results say of it (architecture, parameter count, file name) or from `--model`. A result
// that cannot be matched is listed with the reason, never guessed.
#pragma once
#include <string>
#include <vector>

#include "measurements/llama_bench.hpp"
#include "measurements/speed_rows.hpp"
#include "models/model.hpp"

namespace trilemma::calibration {

struct BenchRows {
  std::vector<measurements::SpeedRow> rows;
  std::vector<std::string> unmatched;  // "file:line: llama 7B Q4_0: no catalog model with 6.74 B parameters"
  std::vector<std::string> notes;      // results taken other than as labelled, and why
  // Results whose repetitions spread more than k_noisy_spread of their mean: a fit follows
  // them as readily as the others, so the user is told ("file:line: llama 1B Q4_0 tg128:
  // 12.4 +/- 3.1 tok/s (25%)").
  std::vector<std::string> noisy;
};
inline constexpr double k_noisy_spread = 0.10;

// `model_id`, when not empty, is the catalog model every result is of.
BenchRows bench_rows(const std::vector<measurements::BenchResult>& results, const std::string& device_id,
                     const std::vector<models::Model>& catalog, const std::string& model_id = "");

// llama.cpp's file type as printed in `model_type` ("Q4_K - Medium", "all F32") -> the trilemma
// format name ("q4_k_m"), or empty.
std::string weight_format_of_file_type(const std::string& model_type);

}  // namespace trilemma::calibration
