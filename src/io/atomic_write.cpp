#include "io/atomic_write.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

#include "types/staged_file.hpp"

namespace trilemma::io {

Status write_file_atomically(const std::filesystem::path& path, std::string_view content) {
  return write_files_atomically({{path, content}});
}

namespace {

Status write_standard_output(std::string_view content) {
  std::cout.write(content.data(), std::streamsize(content.size()));
  std::cout.flush();
  if (!std::cout) return make_error(ErrorKind::io, "-", "", "cannot write to standard output");
  return Ok{};
}

}  // namespace

Status write_files_atomically(const std::vector<std::pair<std::filesystem::path, std::string_view>>& files) {
  // Every file staged before any is put in place: a second file that cannot be written leaves
  // the first target as it was (reliability D15). Standard output comes last, once the files
  // are in place: what was printed cannot be taken back.
  std::vector<StagedFile> staged;
  const std::string_view* to_stdout = nullptr;
  for (const auto& [path, content] : files) {
    if (is_standard_stream(path)) {
      if (to_stdout) return make_error(ErrorKind::usage, "-", "", "two outputs to standard output: give one of them a file");
      to_stdout = &content;
      continue;
    }
    TRILEMMA_TRY(f, StagedFile::create(path));
    staged.push_back(std::move(f));
    if (auto w = staged.back().write(content.data(), content.size()); !w.ok()) return w.error();
  }
  for (auto& f : staged)
    if (auto c = f.commit(); !c.ok()) return c.error();
  return to_stdout ? write_standard_output(*to_stdout) : Status(Ok{});
}

Result<std::string> read_text_file(const std::filesystem::path& path) {
  if (is_standard_stream(path)) {
    // A second "-" would read nothing and look like an empty file.
    static bool read_already = false;
    if (read_already) return make_error(ErrorKind::usage, "-", "", "standard input is already read by another option: give one of them a file");
    read_already = true;
    std::ostringstream ss;
    ss << std::cin.rdbuf();
    if (std::cin.bad()) return make_error(ErrorKind::io, "-", "", "cannot read standard input");
    return ss.str();
  }
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
