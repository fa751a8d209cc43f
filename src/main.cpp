#include <sys/prctl.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>

#include "cli/app.hpp"

int main(int argc, char** argv) {
  // A child run of `verify` (engine_source.cpp) ends with its parent, however the parent ends.
  // The variable holds the parent's pid: a parent that ended before the request took effect
  // (while this process was still starting, which takes longest under sanitizers) has left
  // this process with another parent, and it ends at once.
  if (const char* v = std::getenv("TRILEMMA_DIE_WITH_PARENT"); v && *v) {
    const long parent = std::strtol(v, nullptr, 10);
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (parent > 0 && ::getppid() != pid_t(parent)) return 143;
  }
  return trilemma::cli::run(argc, argv);
}
