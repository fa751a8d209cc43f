#include "io/atomic_write.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "types/staged_file.hpp"

namespace trilemma::io {

Status write_file_atomically(const std::filesystem::path& path, std::string_view content) {
  return write_files_atomically({{path, content}});
}

Status write_files_atomically(const std::vector<std::pair<std::filesystem::path, std::string_view>>& files) {
  // Every file staged before any is put in place: a second file that cannot be written leaves
  // the first target as it was (reliability D15).
  std::vector<StagedFile> staged;
  for (const auto& [path, content] : files) {
    TRILEMMA_TRY(f, StagedFile::create(path));
    staged.push_back(std::move(f));
    if (auto w = staged.back().write(content.data(), content.size()); !w.ok()) return w.error();
  }
  for (auto& f : staged)
    if (auto c = f.commit(); !c.ok()) return c.error();
  return Ok{};
}

Result<std::string> read_text_file(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    return make_error(ErrorKind::io, path.string(), "", "no such file");
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(ErrorKind::io, path.string(), "", std::string("cannot read: ") + std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace trilemma::io
