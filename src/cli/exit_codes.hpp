// The one table of exit codes (documented in README.md "Exit codes").
#pragma once
#include "types/result.hpp"

namespace trilemma::cli {

enum ExitCode : int {
  k_exit_ok = 0,
  k_exit_check_failed = 1,  // verify/gate: a figure is out of tolerance or a budget fails
  k_exit_usage = 2,         // bad flags or arguments
  k_exit_input = 3,         // a file or name the user gave is malformed, unknown or hostile
  k_exit_infeasible = 4,    // plan: no configuration satisfies the constraints
  k_exit_io = 5,            // cannot read or write a file
  k_exit_memory = 6,        // out of memory (an allocation failed)
  k_exit_internal = 70,     // a bug
};

int exit_code_for(ErrorKind kind);

// Prints "trilemma: error: <file:where: message>" to stderr and returns the exit code.
int report_error(const Error& error);

}  // namespace trilemma::cli
