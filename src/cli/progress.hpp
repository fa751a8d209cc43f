// Progress of work that takes seconds: one line per step on stderr, on a terminal only, and
// never under -q or with --json (issue 50). A pipe or a CI log gets the result alone.
#pragma once
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <functional>
#include <string>

namespace trilemma::cli {

// Whether progress is shown: stderr is a terminal, the log level lets info through, no --json.
inline bool shows_terminal_progress(bool as_json) {
  return !as_json && isatty(STDERR_FILENO) != 0 && spdlog::default_logger_raw()->should_log(spdlog::level::info);
}

// A step reporter for `command`, or an empty function when progress is not shown.
inline std::function<void(const std::string&)> terminal_progress(const std::string& command, bool as_json) {
  if (!shows_terminal_progress(as_json)) return {};
  return [command](const std::string& step) { spdlog::info("{}: {} ...", command, step); };
}

}  // namespace trilemma::cli
