// Facts the runtime emitters share, read from a plan document: file names, GPU layers, batch
// sizes and the header comment. Kept here so each emitter file holds only its target's syntax.
#pragma once
#include <string>
#include <vector>

#include "emitters/emitter.hpp"

namespace trilemma::emitters {

struct PlanFacts {
  std::string model_id;
  std::string architecture;    // "llama", "mistral", ...; "" when the plan document has none
  std::string model_path;      // the file the plan was made from, or "" when it names a catalog model
  std::string stored_format;   // that file's dominant tensor type ("f32", "q4_k"), "" when unknown
  // The file to run: model_path when it holds the plan's weights, else "<id>-<LLAMA_FTYPE>.gguf"
  // (beside model_path when there is one) and `produce_with` says how to write it.
  std::string model_file;
  bool model_file_derived = false;
  std::string produce_with;
  std::string draft_file;      // speculative model/self: the draft's GGUF, else ""
  std::string device_id, device_class, scenario, summary;
  std::uint32_t layers = 0;    // 0 when the plan document does not carry the shape
  std::uint32_t head_dim = 0;  // likewise
  bool accelerator = false;    // the backend is not the CPU (a GPU or an NPU): offload where the target can
  std::uint32_t batch = 0, ubatch = 0;  // logical / physical batch: llama.cpp defaults capped at context
  std::uint32_t num_predict = 0;        // context - prompt: generation room the plan budgets for
  bool mlock = false;          // memory headroom under k_mlock_headroom: pin the resident weights
  bool no_mmap = false;        // discrete GPU: weights live in VRAM, a host mapping only adds RSS
  double memory_headroom = 1;  // (usable - total) / usable of the chosen plan
  DeploymentConfig config;
};

inline constexpr double k_mlock_headroom = 0.15;

PlanFacts plan_facts(const solver::PlanDocument& plan);

// "<id>-<FTYPE>.gguf" (llama.cpp's quantize naming); trilemma-only formats use their own name.
std::string gguf_name(const std::string& model_id, WeightFormat weights);

// The header lines every runtime emitter writes (without comment markers).
std::vector<std::string> header_lines(const PlanFacts& f, std::string_view target);

// Shared findings: weights that only trilemma's engine runs, layer-skip self-speculation.
void common_not_expressed(const PlanFacts& f, std::string_view target, std::vector<NotExpressed>& out);

}  // namespace trilemma::emitters
