// The running trilemma binary, which `verify` and `gate --verify` start again in a child
// process per measurement (the engine runs apart from the planner's process).
#pragma once
#include <filesystem>

#include "types/result.hpp"

namespace trilemma::cli {

Result<std::filesystem::path> self_binary();

}  // namespace trilemma::cli
