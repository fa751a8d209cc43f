// `trilemma run` and `trilemma export`: the embedded engine, driven from plain option structs.
#include "cli/commands.hpp"

namespace trilemma::cli {

void add_engine_commands(CLI::App&, Handler&) {}

}  // namespace trilemma::cli
