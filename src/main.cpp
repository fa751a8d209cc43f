#include <sys/prctl.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>

#include "cli/app.hpp"

int main(int argc, char** argv) {
  // A child run of `verify` (engine_source.cpp) ends with its parent, however the parent ends.
  if (const char* v = std::getenv("TRILEMMA_DIE_WITH_PARENT"); v && *v == '1') {
    const pid_t parent = ::getppid();
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) return 143;  // the parent ended before the request took effect
  }
  return trilemma::cli::run(argc, argv);
}
