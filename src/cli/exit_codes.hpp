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

// Each exit code and what it means, for the man page (the README's table says the same).
struct ExitCodeInfo {
  ExitCode code;
  const char* meaning;
};
inline constexpr ExitCodeInfo k_exit_codes[] = {
    {k_exit_ok, "success (verify and gate: every check passed)"},
    {k_exit_check_failed, "verify or gate: a figure is out of tolerance or a budget fails"},
    {k_exit_usage, "bad flags or arguments"},
    {k_exit_input, "a file or name given is malformed, unknown or hostile"},
    {k_exit_infeasible, "plan: no configuration satisfies the constraints"},
    {k_exit_io, "a file cannot be read or written (missing, unreadable, full disk)"},
    {k_exit_memory, "out of memory: an allocation failed"},
    {k_exit_internal, "a bug: an internal invariant broke"},
};

// Prints "trilemma: error: <file:where: message>" to stderr and returns the exit code.
int report_error(const Error& error);

}  // namespace trilemma::cli
