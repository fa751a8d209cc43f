// The llama-server flags the llama.cpp emitter may write, with the values the build it targets
// accepts (docs/emitters.md names the build). The emitter tests check every emitted argument
// file against this list, so a flag llama.cpp renames or removes fails a test, not a user.
#pragma once
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace trilemma::emitters {

enum class FlagValue { count, path, choice };

struct LlamaCppFlag {
  std::string_view flag;                     // as emitted
  FlagValue value;
  std::span<const std::string_view> choices;  // FlagValue::choice
  std::string_view source;                   // where the flag and its values are defined
};

std::span<const LlamaCppFlag> llama_cpp_flags();

// Why `flag value` would be refused by the targeted llama.cpp, or nullopt when it is accepted.
std::optional<std::string> check_llama_cpp_flag(const std::string& flag, const std::string& value);

}  // namespace trilemma::emitters
