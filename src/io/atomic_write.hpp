// Output files are written to a temporary file beside the target and renamed on success, so a
// failure never leaves a half-written file behind (types/staged_file.hpp: exclusive temporary
// names, synced data, the target's mode kept, read-only targets refused).
//
// "-" is standard output when written and standard input when read, as a command-line user
// expects (`plan --out - | jq`, `gate --budgets - < b.yaml`). Standard input can be read once.
#pragma once
#include <filesystem>
#include <string_view>
#include <utility>
#include <vector>

#include "types/result.hpp"

namespace trilemma::io {

Status write_file_atomically(const std::filesystem::path& path, std::string_view content);
// Several files, all or none: each is staged before any is put in place.
Status write_files_atomically(const std::vector<std::pair<std::filesystem::path, std::string_view>>& files);

Result<std::string> read_text_file(const std::filesystem::path& path);

inline constexpr std::string_view k_standard_stream = "-";
inline bool is_standard_stream(const std::filesystem::path& path) { return path == k_standard_stream; }

}  // namespace trilemma::io
