// Process memory figures from /proc/self/status (Linux); 0 where unavailable.
#pragma once
#include <cstdint>

namespace trilemma::engine {

std::uint64_t peak_rss_bytes();     // VmHWM: the high-water mark of resident memory
std::uint64_t current_rss_bytes();  // VmRSS
std::uint64_t current_rss_file_bytes();  // RssFile: resident pages of mapped files

}  // namespace trilemma::engine
