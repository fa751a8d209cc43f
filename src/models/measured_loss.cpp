#include "models/measured_loss.hpp"

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "io/atomic_write.hpp"

namespace trilemma::models {
namespace {

constexpr const char* k_flag = "--measured-kl";
constexpr double k_max_kld = 20;  // nats: beyond any quantized model that still runs

Result<double> checked_kld(double v, const std::string& file, const std::string& where) {
  if (!std::isfinite(v) || v <= 0 || v > k_max_kld)
    return make_error(ErrorKind::input, file, where, "expected a mean KL divergence in (0, 20] nats, got " + std::to_string(v));
  return v;
}

Result<WeightFormat> format_named(const std::string& name) {
  if (const auto f = weight_format_from_name(name)) {
    if (full_precision(*f))
      return make_error(ErrorKind::usage, k_flag, "", name + " is full precision: there is no quantization loss to calibrate with");
    return *f;
  }
  return make_error(ErrorKind::usage, k_flag, "", "unknown weight format '" + name + "' (expected one of " + weight_format_names() + ")");
}

Result<MeasuredLoss> from_eval_json(const std::string& path) {
  TRILEMMA_TRY(text, io::read_text_file(path));
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text, nullptr, true, false);
  } catch (const nlohmann::json::exception& e) {
    return make_error(ErrorKind::input, path, "", std::string("not JSON: ") + e.what());
  }
  if (!j.is_object() || !j.contains("schema") || j["schema"] != "trilemma.eval")
    return make_error(ErrorKind::input, path, "schema", "expected `trilemma eval --json` output (schema trilemma.eval); "
                                                        "for llama-perplexity output write FORMAT=FILE");
  if (!j.contains("weights") || !j["weights"].is_string() || !j.contains("kl_mean") || !j["kl_mean"].is_number())
    return make_error(ErrorKind::input, path, "kl_mean", "missing weights or kl_mean");
  // Fields of another type than the schema's are errors naming them (reliability D8).
  if (j.contains("synthetic") && !j["synthetic"].is_boolean())
    return make_error(ErrorKind::input, path, "synthetic", "must be true or false");
  if (j.value("synthetic", false))
    return make_error(ErrorKind::input, path, "synthetic", "measured on synthetic weights: says nothing about accuracy");
  if (j.contains("kv") && !j["kv"].is_string()) return make_error(ErrorKind::input, path, "kv", "must be a string");
  const std::string kv = j.value("kv", "f16");
  if (kv != "f16" && kv != "f32")
    return make_error(ErrorKind::input, path, "kv", "measured with a " + kv + " KV cache: the KL mixes weight and KV loss; measure with --kv f16");
  TRILEMMA_TRY(format, format_named(j["weights"].get<std::string>()));
  TRILEMMA_TRY(kld, checked_kld(j["kl_mean"].get<double>(), path, "kl_mean"));
  return MeasuredLoss{format, false, kld, path};  // the engine's quantizers take no importance matrix
}

}  // namespace

Result<double> kld_from_llama_perplexity(const std::string& text, const std::string& file) {
  std::istringstream in(text);
  std::string line;
  std::optional<double> last;
  while (std::getline(in, line)) {
    const auto mean = line.find("Mean");
    if (mean == std::string::npos) continue;
    const auto kld = line.find("KLD:", mean);
    if (kld == std::string::npos || line.find_first_not_of(" \t", mean + 4) != kld) continue;
    const char* start = line.c_str() + kld + 4;
    char* end = nullptr;
    const double v = std::strtod(start, &end);
    if (end != start) last = v;
  }
  if (!last) return make_error(ErrorKind::input, file, "", "no 'Mean    KLD:' line: expected llama-perplexity --kl-divergence output");
  return checked_kld(*last, file, "Mean KLD");
}

Result<MeasuredLoss> parse_measured_kl(const std::string& spec) {
  const auto eq = spec.find('=');
  if (eq == std::string::npos) return from_eval_json(spec);
  std::string name = spec.substr(0, eq);
  const bool imatrix = name.ends_with("+imatrix");
  if (imatrix) name.resize(name.size() - std::string_view("+imatrix").size());
  TRILEMMA_TRY(format, format_named(name));
  const std::string value = spec.substr(eq + 1);
  char* end = nullptr;
  const double v = std::strtod(value.c_str(), &end);
  if (!value.empty() && end == value.c_str() + value.size()) {
    TRILEMMA_TRY(kld, checked_kld(v, k_flag, spec));
    return MeasuredLoss{format, imatrix, kld, spec};
  }
  TRILEMMA_TRY(text, io::read_text_file(value));
  TRILEMMA_TRY(kld, kld_from_llama_perplexity(text, value));
  return MeasuredLoss{format, imatrix, kld, value};
}

}  // namespace trilemma::models
