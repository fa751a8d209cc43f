// The built-in data (devices/, models/, profiles/) compiled into the binary at build time.
#pragma once
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "types/result.hpp"

namespace trilemma::io {

struct EmbeddedFile {
  std::string_view path;     // relative to the repository root, e.g. "devices/raspberry-pi-5.yaml"
  std::string_view content;
};

std::span<const EmbeddedFile> embedded_files();

// Embedded files whose path starts with `folder` + "/" and ends with ".yaml", sorted by path.
std::vector<EmbeddedFile> embedded_yaml_in(std::string_view folder);

// The text of the file at `path`, or of the built-in copy of `builtin` when `path` is empty.
Result<std::string> read_file_or_embedded(const std::string& path, std::string_view builtin);

}  // namespace trilemma::io
