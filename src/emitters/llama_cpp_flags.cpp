#include "emitters/llama_cpp_flags.hpp"

#include <array>

namespace trilemma::emitters {
namespace {

constexpr std::string_view k_arg_cpp =
    "llama.cpp common/arg.cpp (ggml-org/llama.cpp 145b6280d6aa1890e22457143dad0badb3fd6820)";
constexpr std::string_view k_server_readme =
    "llama.cpp tools/server/README.md argument table (b10587 era): --spec-* after PR #22964, --load-mode after PR #20834";

// common/arg.cpp kv_cache_types: "allowed values: f32, f16, bf16, q8_0, q4_0, q4_1, iq4_nl, q5_0, q5_1".
constexpr auto k_cache_types = std::to_array<std::string_view>({"f32", "f16", "bf16", "q8_0", "q4_0", "q4_1", "iq4_nl", "q5_0", "q5_1"});
constexpr auto k_flash_attn = std::to_array<std::string_view>({"on", "off", "auto"});
constexpr auto k_spec_types = std::to_array<std::string_view>({"none", "draft-simple", "draft-eagle3", "draft-mtp", "ngram-simple",
                                                             "ngram-map-k", "ngram-map-k4v", "ngram-mod", "ngram-cache"});
constexpr auto k_load_modes = std::to_array<std::string_view>({"auto", "none", "mmap", "mlock", "mmap+mlock", "dio"});

constexpr std::array k_flags = {
    LlamaCppFlag{"-m", FlagValue::path, {}, k_arg_cpp},
    LlamaCppFlag{"-c", FlagValue::count, {}, k_arg_cpp},
    LlamaCppFlag{"-t", FlagValue::count, {}, k_arg_cpp},
    LlamaCppFlag{"-b", FlagValue::count, {}, k_arg_cpp},
    LlamaCppFlag{"-ub", FlagValue::count, {}, k_arg_cpp},
    LlamaCppFlag{"-ctk", FlagValue::choice, k_cache_types, k_arg_cpp},
    LlamaCppFlag{"-ctv", FlagValue::choice, k_cache_types, k_arg_cpp},
    LlamaCppFlag{"-fa", FlagValue::choice, k_flash_attn, k_arg_cpp},
    LlamaCppFlag{"-ngl", FlagValue::count, {}, k_arg_cpp},
    LlamaCppFlag{"-md", FlagValue::path, {}, k_server_readme},
    LlamaCppFlag{"-ngld", FlagValue::count, {}, k_server_readme},
    LlamaCppFlag{"--spec-type", FlagValue::choice, k_spec_types, k_server_readme},
    LlamaCppFlag{"--spec-draft-n-max", FlagValue::count, {}, k_server_readme},
    LlamaCppFlag{"--spec-draft-n-min", FlagValue::count, {}, k_server_readme},
    LlamaCppFlag{"--load-mode", FlagValue::choice, k_load_modes, k_server_readme},
};

}  // namespace

std::span<const LlamaCppFlag> llama_cpp_flags() { return k_flags; }

std::optional<std::string> check_llama_cpp_flag(const std::string& flag, const std::string& value) {
  for (const auto& f : k_flags) {
    if (f.flag != flag) continue;
    switch (f.value) {
      case FlagValue::path:
        if (value.empty()) return flag + " needs a file";
        return std::nullopt;
      case FlagValue::count:
        if (value.empty() || value.find_first_not_of("0123456789") != std::string::npos)
          return flag + " takes a whole number, not '" + value + "'";
        return std::nullopt;
      case FlagValue::choice:
        for (auto c : f.choices)
          if (c == value) return std::nullopt;
        return flag + " does not take '" + value + "'";
    }
  }
  return "llama.cpp has no flag " + flag + " (not in src/emitters/llama_cpp_flags.cpp)";
}

}  // namespace trilemma::emitters
