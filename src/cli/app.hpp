// The command line: the only module that sees argv, CLI11, logging and exit codes.
#pragma once

namespace trilemma::cli {

// Parses argv, runs one command, prints its report and returns the process exit code.
int run(int argc, char** argv);

}  // namespace trilemma::cli
