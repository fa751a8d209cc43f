// Runs a shell command line (black-box tests of the real binary) and collects its stdout and
// exit code. Callers build the line: TRILEMMA_BINARY plus arguments, redirections, environment.
#pragma once
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

#include <catch2/catch.hpp>

#include "sanitizer_build.hpp"

namespace trilemma::testing {

struct Run {
  int code = -1;
  std::string out;
};

// AddressSanitizer reserves terabytes of address space, so tests that cap it (`ulimit -v`)
// cannot run in the sanitizer build. True (with a printed reason) when the test must skip.
inline bool skip_under_address_sanitizer() {
  if (k_address_sanitizer) WARN("skipped: the binary is built with AddressSanitizer, which cannot run under ulimit -v");
  return k_address_sanitizer;
}

inline Run run_command(const std::string& command) {
  Run r;
  FILE* p = popen(command.c_str(), "r");
  REQUIRE(p != nullptr);
  std::array<char, 4096> buf{};
  while (std::size_t n = fread(buf.data(), 1, buf.size(), p)) r.out.append(buf.data(), n);
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// `trilemma ARGS`; stderr merged into the output when `with_stderr`, else discarded.
inline Run run_trilemma(const std::string& args, bool with_stderr = false, const std::string& prefix = "") {
  return run_command(prefix + TRILEMMA_BINARY + " " + args + (with_stderr ? " 2>&1" : " 2>/dev/null"));
}

}  // namespace trilemma::testing
