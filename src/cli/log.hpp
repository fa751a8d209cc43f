// Diagnostics on stderr through spdlog: progress and notes at info, what a user should know
// about a result (a tensor kept at a higher precision, a choice a runtime cannot express) at
// warn. Reports go to stdout and errors through report_error, whatever the level.
//   default info; TRILEMMA_LOG=debug|info|warn|error sets it; --verbose (debug) and --quiet
//   (errors only) override both.
#pragma once
#include <spdlog/spdlog.h>

#include <string>

namespace trilemma::cli {

// Installs the stderr logger at the level the environment and flags ask for. `verbose` and
// `quiet` are the command line's flags. Returns false (and leaves info) for an unknown
// TRILEMMA_LOG value, which the caller reports.
bool configure_logging(bool verbose, bool quiet);

// "trilemma: warning: <message>" on stderr unless the level is above warn.
template <class... Args>
void warn(fmt::format_string<Args...> format, Args&&... args) {
  spdlog::warn("trilemma: warning: {}", fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace trilemma::cli
