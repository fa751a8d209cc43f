#include "cli/app.hpp"

namespace trilemma::cli {
int run(int, char**) { return 0; }
}  // namespace trilemma::cli
