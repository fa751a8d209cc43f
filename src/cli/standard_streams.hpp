// "-" as a file argument: standard input where a file is read, standard output where one is
// written (io/atomic_write.hpp does the reading and writing). A command whose output file is
// "-" prints its own report to standard error instead, so the piped document stays clean:
// `trilemma plan ... --out - | jq .chosen`. A file that does not exist is exit 5 in every
// command (io/atomic_write.hpp's reader says so), not a flag check's 2.
#pragma once
#include <initializer_list>
#include <iostream>
#include <string>
#include <utility>

#include "io/atomic_write.hpp"

namespace trilemma::cli {

inline constexpr const char* k_stdin_help = " (- reads standard input)";
inline constexpr const char* k_stdout_help = " (- writes standard output)";

// At most one output of a command may be standard output: `{{"--out", f.out}, {"--junit", f.junit}}`.
inline Status one_standard_output(std::initializer_list<std::pair<std::string, std::string>> outputs) {
  std::string first;
  for (const auto& [flag, path] : outputs) {
    if (!io::is_standard_stream(path)) continue;
    if (!first.empty())
      return make_error(ErrorKind::usage, flag, "", "two outputs to standard output (" + first + " and " + flag + "): give one of them a file");
    first = flag;
  }
  return Ok{};
}

// Where the command's report goes when these are its output files.
inline std::ostream& report_stream(std::initializer_list<std::string> outputs) {
  for (const auto& o : outputs)
    if (io::is_standard_stream(o)) return std::cerr;
  return std::cout;
}

}  // namespace trilemma::cli
