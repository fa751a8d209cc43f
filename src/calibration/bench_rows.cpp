#include "calibration/bench_rows.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <sstream>

#include "memory/tensor_layout.hpp"
#include "types/weight_format.hpp"

namespace trilemma::calibration {
namespace {

std::string upper(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}
std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// llama-bench's `backends` lists what the build has; with no layers offloaded it runs on the CPU.
std::string backend_of(const measurements::BenchResult& r) {
  const std::string b = lower(r.backend);
  const bool offloaded = !r.n_gpu_layers || *r.n_gpu_layers != 0;
  if (offloaded) {
    if (b.find("metal") != std::string::npos || b.find("mtl") != std::string::npos) return "metal";
    if (b.find("cuda") != std::string::npos) return "cuda";
    if (b.find("vulkan") != std::string::npos) return "vulkan";
    if (b.find("opencl") != std::string::npos) return "opencl";
    if (b.find("hexagon") != std::string::npos) return "hexagon";
    if (b.find("sycl") != std::string::npos) return "sycl";
  }
  if (b.empty() || b.find("cpu") != std::string::npos || b.find("blas") != std::string::npos) return "cpu";
  return b;
}

std::string fmt(double v) {
  std::ostringstream s;
  s.precision(3);
  s << v;
  return s.str();
}

const models::Model* find_model(const std::vector<models::Model>& catalog, const std::string& id) {
  for (const auto& m : catalog)
    if (m.id == id) return &m;
  return nullptr;
}

// The weight format a file's size says, when its label does not: llama.cpp prints the GGUF's
// general.file_type, which converters can get wrong (trilemma's export wrote ggml type ids
// until 0.4, so its Q8_0 files read "Q5_0"). The label stands when the size lies, within 8%,
// between the format's bulk type on every tensor (a converter such as `trilemma export`
// quantizes the embedding and classifier alike) and llama-quantize's recipe (which keeps them
// at more bits); otherwise the one llama.cpp format within 3% of the file's recipe size, if
// there is exactly one.
std::string format_by_size(const models::Model& m, double file_bytes, const std::string& labelled) {
  auto off = [&](WeightFormat f) { return std::abs(memory::weight_bytes(m.shape, f).total - file_bytes) / file_bytes; };
  if (!labelled.empty())
    if (const auto f = weight_format_from_name(labelled)) {
      const auto& bulk = info(info(*f).bulk);
      const auto& classifier = info(info(*f).output);
      const auto counts = count_parameters(m.shape);
      const double uniform = counts.total() * bulk.block_bytes / bulk.block_elems;
      const double recipe = memory::weight_bytes(m.shape, *f).total;
      // A tied classifier written untied (see the parameter match below) adds its copy.
      const double copy = counts.output == 0 ? counts.embedding * classifier.block_bytes / classifier.block_elems : 0;
      if (file_bytes >= std::min(uniform, recipe) * 0.92 && file_bytes <= (std::max(uniform, recipe) + copy) * 1.08) return labelled;
    }
  std::string found;
  for (const auto& row : weight_formats()) {
    if (row.llama_cpp.empty() || off(row.format) > 0.03) continue;
    if (!found.empty()) return labelled;  // two formats fit: the size does not settle it
    found = std::string(row.name);
  }
  return found.empty() ? labelled : found;
}

}  // namespace

std::string weight_format_of_file_type(const std::string& model_type) {
  // "llama 1B Q4_0" -> "Q4_0"; "qwen2 0.5B Q4_K - Medium" -> "Q4_K - Medium".
  std::istringstream in(model_type);
  std::string arch, size, rest, word;
  in >> arch >> size;
  while (in >> word) rest += (rest.empty() ? "" : " ") + word;
  std::string t = upper(rest);
  if (t.rfind("ALL ", 0) == 0) t = t.substr(4);
  if (const auto bpw = t.find(" - "); bpw != std::string::npos && t.find("BPW") != std::string::npos) t = t.substr(0, bpw);
  for (const auto& [suffix, code] : {std::pair{" - MEDIUM", "_M"}, {" - SMALL", "_S"}, {" - LARGE", "_L"}})
    if (const auto at = t.find(suffix); at != std::string::npos) t = t.substr(0, at) + code;
  // "Q2_K - Medium" is llama.cpp's plain Q2_K recipe.
  if (t == "Q2_K_M") t = "Q2_K";
  for (const auto& row : weight_formats())
    if (!row.llama_cpp.empty() && row.llama_cpp == t) return std::string(row.name);
  return "";
}

BenchRows bench_rows(const std::vector<measurements::BenchResult>& results, const std::string& device_id,
                     const std::vector<models::Model>& catalog, const std::string& model_id) {
  BenchRows out;
  std::size_t n = 0;
  for (const auto& r : results) {
    auto unmatched = [&](const std::string& why) { out.unmatched.push_back(r.where() + ": " + r.model_type + ": " + why); };
    if (r.n_prompt > 0 && r.n_gen > 0) {
      unmatched("a combined prompt and generation test: prefill and decode cannot be told apart");
      continue;
    }
    std::string model = model_id;
    if (model.empty()) {
      // Candidates: the same architecture word and parameter count within 4% (the markdown
      // table rounds to 3 digits; catalog counts are computed from the shape).
      std::istringstream in(r.model_type);
      std::string arch;
      in >> arch;
      std::vector<std::string> candidates;
      for (const auto& m : catalog) {
        if (!r.model_n_params) break;
        // A tied classifier may be written untied (llama2.c conversions write output.weight
        // beside token_embd: stories260K reads 293K in llama-bench, 260K in the catalog), so
        // the count with the embedding's copy matches too.
        const auto counts = count_parameters(m.shape);
        auto near = [&](double params) { return std::abs(params - *r.model_n_params) <= 0.04 * *r.model_n_params; };
        if (!near(counts.total()) && !(counts.output == 0 && near(counts.total() + counts.embedding))) continue;
        const bool same_arch = lower(arch) == lower(m.architecture) || (lower(arch) == "llama" && m.architecture == "mistral");
        if (!same_arch) continue;
        candidates.push_back(m.id);
      }
      // A file name that spells a candidate's id settles a tie.
      if (candidates.size() > 1 && !r.model_filename.empty()) {
        const std::string file = lower(r.model_filename);
        std::vector<std::string> named;
        for (const auto& c : candidates)
          if (file.find(c) != std::string::npos) named.push_back(c);
        if (named.size() == 1) candidates = named;
      }
      if (candidates.size() != 1) {
        std::string why = !r.model_n_params ? "no parameter count to match"
                          : candidates.empty()
                              ? "no catalog model of architecture '" + arch + "' with " + fmt(*r.model_n_params / 1e9) + " B parameters"
                              : "ambiguous between";
        for (const auto& c : candidates) why += " " + c;
        unmatched(why + "; name it with --model");
        continue;
      }
      model = candidates.front();
    }
    if (r.stddev_ts && r.avg_ts > 0 && *r.stddev_ts > k_noisy_spread * r.avg_ts)
      out.noisy.push_back(r.where() + ": " + r.model_type + (r.n_prompt ? " pp" + std::to_string(r.n_prompt) : " tg" + std::to_string(r.n_gen)) +
                          ": " + fmt(r.avg_ts) + " +/- " + fmt(*r.stddev_ts) + " tok/s (" + fmt(100 * *r.stddev_ts / r.avg_ts) + "%)");
    const auto* matched = find_model(catalog, model);
    if (!matched) {
      unmatched("no catalog model '" + model + "'");
      continue;
    }
    std::string weights = weight_format_of_file_type(r.model_type);
    if (r.model_size_bytes) {
      const std::string by_size = format_by_size(*matched, *r.model_size_bytes, weights);
      if (!by_size.empty() && by_size != weights) {
        out.notes.push_back(r.where() + ": labelled '" + r.model_type + "' but its " + fmt(*r.model_size_bytes / 1073741824.0) +
                            " GiB are the size of " + model + " in " + by_size + ": taken as " + by_size);
        weights = by_size;
      }
    }
    if (weights.empty()) {
      unmatched("file type not costed by trilemma");
      continue;
    }
    measurements::SpeedRow row;
    row.file = r.file;
    row.line = r.line;
    row.id = r.where() + "#" + std::to_string(++n);
    row.device = device_id;
    row.model = model;
    row.weights = weights;
    row.weights_published = r.model_type;
    row.engine = "llama.cpp";
    row.engine_version = r.build;
    row.backend = backend_of(r);
    row.threads = r.threads;
    if (r.n_prompt > 0) {
      row.prompt_tokens = r.n_prompt;
      row.prefill_tok_s = r.avg_ts;
    } else {
      row.gen_tokens = r.n_gen;
      row.decode_tok_s = r.avg_ts;
    }
    row.depth = r.n_depth;
    if (!r.type_k.empty() && r.type_k == r.type_v) row.kv_type = r.type_k;
    if (r.model_size_bytes) row.model_size_gib = *r.model_size_bytes / 1073741824.0;
    row.source_url = "file://" + r.file;
    row.locator = "line " + std::to_string(r.line);
    out.rows.push_back(std::move(row));
  }
  return out;
}

}  // namespace trilemma::calibration
