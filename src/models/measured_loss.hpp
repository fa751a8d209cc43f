// `--measured-kl`: a measured mean KL divergence for the planned model, in one of three forms:
//   FORMAT=0.031          the value itself (FORMAT+imatrix=...: quantized with an importance matrix)
//   FORMAT=kld.log        llama.cpp llama-perplexity --kl-divergence output ("Mean    KLD:" line)
//   eval.json             `trilemma eval --json` output (the format and kl_mean are in it)
#pragma once
#include <string>

#include "models/model.hpp"
#include "types/result.hpp"

namespace trilemma::models {

Result<MeasuredLoss> parse_measured_kl(const std::string& spec);

// The flag's help, shared by plan and gate.
inline constexpr const char* k_measured_kl_help =
    "a measured mean KLD of the model calibrating its accuracy prior: FORMAT=VALUE, FORMAT=llama-perplexity "
    "--kl-divergence output, or `trilemma eval --json` output; repeatable";

// The mean KLD in llama-perplexity output: the last "Mean    KLD:" line (a timestamp may precede it).
Result<double> kld_from_llama_perplexity(const std::string& text, const std::string& file);

}  // namespace trilemma::models
