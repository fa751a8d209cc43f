#include "cli/log.hpp"

#include <spdlog/sinks/stdout_sinks.h>

#include <cstdlib>

namespace trilemma::cli {

bool configure_logging(bool verbose, bool quiet) {
  auto logger = spdlog::stderr_logger_st("trilemma-stderr");
  logger->set_pattern("%v");  // messages carry their own prefix ("trilemma: warning: ")
  spdlog::set_default_logger(logger);
  bool known = true;
  auto level = spdlog::level::info;
  if (const char* env = std::getenv("TRILEMMA_LOG"); env && *env) {
    const std::string name = env;
    if (name == "debug") level = spdlog::level::debug;
    else if (name == "info") level = spdlog::level::info;
    else if (name == "warn" || name == "warning") level = spdlog::level::warn;
    else if (name == "error") level = spdlog::level::err;
    else known = false;
  }
  if (verbose) level = spdlog::level::debug;
  if (quiet) level = spdlog::level::err;
  spdlog::set_level(level);
  return known;
}

}  // namespace trilemma::cli
