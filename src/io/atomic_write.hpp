// Output files are written to a temporary file beside the target and renamed on success, so a
// failure never leaves a half-written file behind.
#pragma once
#include <filesystem>
#include <string_view>

#include "types/result.hpp"

namespace trilemma::io {

Status write_file_atomically(const std::filesystem::path& path, std::string_view content);

Result<std::string> read_text_file(const std::filesystem::path& path);

}  // namespace trilemma::io
