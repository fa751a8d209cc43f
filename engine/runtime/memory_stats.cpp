#include "engine/runtime/memory_stats.hpp"

#include <fstream>
#include <string>

namespace trilemma::engine {
namespace {

std::uint64_t status_kib(const std::string& key) {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind(key, 0) == 0) return std::stoull(line.substr(key.size())) * 1024;
  return 0;
}

}  // namespace

std::uint64_t peak_rss_bytes() { return status_kib("VmHWM:"); }
std::uint64_t current_rss_bytes() { return status_kib("VmRSS:"); }
std::uint64_t current_rss_file_bytes() { return status_kib("RssFile:"); }

}  // namespace trilemma::engine
