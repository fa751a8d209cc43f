#include <algorithm>
#include <string>

#include "io/atomic_write.hpp"
#include "io/embedded_data.hpp"

namespace trilemma::io {

Result<std::string> read_file_or_embedded(const std::string& path, std::string_view builtin) {
  if (!path.empty()) return read_text_file(path);
  for (const auto& f : embedded_files())
    if (f.path == builtin) return std::string(f.content);
  return make_error(ErrorKind::internal, std::string(builtin), "", "not compiled in");
}

std::vector<EmbeddedFile> embedded_yaml_in(std::string_view folder) {
  std::vector<EmbeddedFile> out;
  const std::string prefix = std::string(folder) + "/";
  for (const auto& f : embedded_files()) {
    if (f.path.starts_with(prefix) && f.path.ends_with(".yaml") &&
        f.path.find('/', prefix.size()) == std::string_view::npos)
      out.push_back(f);
  }
  std::sort(out.begin(), out.end(), [](auto& a, auto& b) { return a.path < b.path; });
  return out;
}

}  // namespace trilemma::io
