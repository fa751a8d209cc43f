// llama.cpp's `llama-bench` results in each of its output formats (`-o json`, `jsonl`, `csv`,
// `md`), as one record per test: a prompt test (`pp512`: n_prompt > 0, n_gen 0), a generation
// test (`tg128`: n_gen > 0, n_prompt 0), or both (`pp512+tg128`), at a depth (`@ d4096`:
// tokens already in the context). The markdown table prints sizes and parameters rounded
// (`590.41 MiB`, `1.10 B`) and names the backend and threads only; the other formats carry
// every field (tools/llama-bench/llama-bench.cpp's `test` struct).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "types/result.hpp"

namespace trilemma::measurements {

struct BenchResult {
  std::string file;
  std::size_t line = 0;             // where the record (or table row) starts
  std::string build;                // build_commit / number, when given
  std::string model_filename;       // json/jsonl/csv only
  std::string model_type;           // "llama 1B Q4_0": architecture, size label, file type
  std::optional<double> model_size_bytes;
  std::optional<double> model_n_params;  // markdown: rounded to 3 significant digits
  std::string backend;              // "CPU", "Metal", "CUDA", "Vulkan", "BLAS,CPU", ...
  std::optional<std::uint32_t> threads;
  std::optional<int> n_gpu_layers;
  std::string type_k, type_v;       // KV cache formats ("f16")
  std::uint32_t n_prompt = 0, n_gen = 0, n_depth = 0;
  double avg_ts = 0;                // tokens per second
  std::optional<double> stddev_ts;  // the spread of the repetitions (stddev_ts, or the table's "± x")
  std::string where() const;        // "file:line"
};

// Detects the format from the text; anything else (or a malformed record) is an input error
// naming file and line.
Result<std::vector<BenchResult>> parse_llama_bench(const std::string& text, const std::string& file);

// Whether `text` looks like llama-bench output at all (for telling result files apart).
bool looks_like_llama_bench(const std::string& text);

}  // namespace trilemma::measurements
