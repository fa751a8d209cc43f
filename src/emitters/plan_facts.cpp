#include "emitters/plan_facts.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace trilemma::emitters {
namespace {

using nlohmann::json;

// Reads a nested field of the plan document; `fallback` when absent or of another type.
template <class T>
T field(const json& j, std::initializer_list<const char*> path, T fallback) {
  const json* at = &j;
  for (const char* key : path) {
    if (!at->is_object() || !at->contains(key)) return fallback;
    at = &(*at)[key];
  }
  if constexpr (std::is_same_v<T, std::string>) {
    return at->is_string() ? at->get<std::string>() : fallback;
  } else {
    if (!at->is_number()) return fallback;
    // Through double with a range check: 1e20 into a uint32 is undefined behaviour (issue 14).
    const double v = at->get<double>();
    if (!std::isfinite(v) || v < double(std::numeric_limits<T>::lowest()) || v > double(std::numeric_limits<T>::max())) return fallback;
    return static_cast<T>(v);
  }
}

// llama.cpp's defaults for -b and -ub (common/common.h: n_batch 2048, n_ubatch 512).
constexpr std::uint32_t k_llama_batch = 2048, k_llama_ubatch = 512;

// A relative path that starts with '-' (a file named `-m.gguf`) would be read as an option by
// llama.cpp's argument parser, a shell tool or xargs: `./` in front names the same file.
std::string not_an_option(std::string path) { return path.starts_with('-') ? "./" + path : path; }

}  // namespace

std::string gguf_name(const std::string& model_id, WeightFormat weights) {
  const auto& w = info(weights);
  return model_id + "-" + std::string(w.llama_cpp.empty() ? w.name : w.llama_cpp) + ".gguf";
}

PlanFacts plan_facts(const solver::PlanDocument& plan) {
  PlanFacts f;
  const json& raw = plan.raw;
  f.config = plan.config;
  f.model_id = field<std::string>(raw, {"model", "id"}, plan.model);
  f.model_path = field<std::string>(raw, {"model", "path"}, "");
  f.architecture = field<std::string>(raw, {"model", "architecture"}, "");
  f.stored_format = field<std::string>(raw, {"model", "stored_format"}, "");
  // A plan pinned to other weights than its file holds (q8_0 from an f32 file) runs a file the
  // export writes, not the source.
  const bool other_weights = !f.model_path.empty() && !f.stored_format.empty() &&
                             f.stored_format != info(info(f.config.weights).bulk).name;
  f.model_file_derived = f.model_path.empty() || other_weights;
  f.model_file = f.model_file_derived ? gguf_name(f.model_id, f.config.weights) : f.model_path;
  if (other_weights) {
    const auto slash = f.model_path.rfind('/');
    if (slash != std::string::npos) f.model_file = f.model_path.substr(0, slash + 1) + f.model_file;
  }
  f.model_file = not_an_option(f.model_file);
  if (other_weights) {
    const auto& w = info(f.config.weights);
    if (w.engine_type && !w.llama_cpp.empty())  // what `export` writes (f16, q8_0, q4_0, f32)
      f.produce_with = "trilemma export --plan PLAN.json --out " + f.model_file;
    else if (!w.llama_cpp.empty())
      f.produce_with = "llama-quantize " + not_an_option(f.model_path) + " " + f.model_file + " " + std::string(w.llama_cpp);
  }
  const auto& spec = f.config.speculative;
  if (spec.kind == DraftKind::model) f.draft_file = not_an_option(gguf_name(spec.draft_model, spec.draft_weights));
  if (spec.kind == DraftKind::self) f.draft_file = not_an_option(gguf_name(f.model_id, spec.draft_weights));
  f.device_id = plan.device;
  f.device_class = field<std::string>(raw, {"device", "class"}, "");
  f.scenario = plan.scenario;
  f.summary = describe(f.config);
  f.layers = field<std::uint32_t>(raw, {"model", "shape", "layers"}, 0);
  f.head_dim = field<std::uint32_t>(raw, {"model", "shape", "head_dim"}, 0);
  f.accelerator = f.config.backend != Backend::cpu;
  f.batch = std::min(k_llama_batch, f.config.context);
  f.ubatch = std::min(k_llama_ubatch, f.batch);
  f.num_predict = f.config.context > f.config.prompt ? f.config.context - f.config.prompt : 0;
  const double total = field<double>(raw, {"chosen", "memory", "total_bytes"}, 0);
  const double usable = field<double>(raw, {"chosen", "memory", "usable_bytes"}, 0);
  if (usable > 0) f.memory_headroom = (usable - total) / usable;
  f.mlock = usable > 0 && f.memory_headroom < k_mlock_headroom;
  f.no_mmap = f.accelerator && f.device_class == "gpu";
  return f;
}

std::vector<std::string> header_lines(const PlanFacts& f, std::string_view target) {
  std::vector<std::string> h;
  h.push_back(std::string(target) + " configuration emitted by trilemma from a plan document");
  h.push_back("plan: " + f.model_id + " on " + f.device_id + " (" + f.scenario + "): " + f.summary);
  if (f.model_file_derived && !f.model_path.empty())
    h.push_back("model file " + f.model_file + ": the plan's " + std::string(info(f.config.weights).name) + " weights, not " +
                f.model_path + " (" + f.stored_format + ") that the plan was made from" +
                (f.produce_with.empty() ? "" : "; write it with: " + f.produce_with));
  else if (f.model_file_derived)
    h.push_back("model file " + f.model_file + ": derived from the plan's model id and weights (the plan names no weights file)");
  else
    h.push_back("model file " + f.model_file + ": the weights file the plan was made from");
  if (!f.draft_file.empty()) h.push_back("draft file " + f.draft_file + ": derived from the draft's id and weights");
  if (f.config.imatrix)
    h.push_back("quantize " + f.model_file + " with an importance matrix (the plan's accuracy assumes one): llama-imatrix -m "
                "MODEL-F16.gguf -f CALIBRATION.txt -o imatrix.gguf, then llama-quantize --imatrix imatrix.gguf MODEL-F16.gguf " +
                f.model_file + " " + std::string(info(f.config.weights).llama_cpp));
  return h;
}

std::string describe(const NotExpressed& n) {
  std::string s = "NOT EXPRESSED " + n.choice + "=" + n.value + ": " + n.reason;
  if (!n.substitute.empty()) s += " (emitted instead: " + n.substitute + ")";
  return s;
}

void common_not_expressed(const PlanFacts& f, std::string_view target, std::vector<NotExpressed>& out) {
  const auto& w = info(f.config.weights);
  if (w.llama_cpp.empty())
    out.push_back({"weights", std::string(w.name),
                   std::string(target) + " has no " + std::string(w.name) +
                       " type: it is trilemma's own block format (docs/formats.md), run by trilemma's engine only",
                   ""});
  if (f.config.speculative.kind == DraftKind::layers)
    out.push_back({"speculative", "layers:" + std::to_string(f.config.speculative.draft_layers) + " g" +
                                      std::to_string(f.config.speculative.draft_len),
                   std::string(target) + " has no layer-skip self-speculation (a draft made of the target's first layers)",
                   "plain decoding"});
}

}  // namespace trilemma::emitters
