// Locating ../shared/ for tests that use the real stories260K model. When it is absent the test
// binary prints why and exits 77, which CTest reports as skipped (SKIP_RETURN_CODE 77).
#pragma once
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

namespace trilemma::testing {

inline std::filesystem::path shared_dir() {
  return std::filesystem::path(TRILEMMA_SOURCE_DIR) / ".." / "shared";
}

inline std::filesystem::path shared_file(const std::string& relative) {
  return shared_dir() / relative;
}

// Call first in a test binary's own main (or a global constructor) when every case needs it.
inline void require_shared_or_skip(const std::string& relative) {
  const auto path = shared_file(relative);
  if (!std::filesystem::exists(path)) {
    std::printf("SKIPPED: %s not found (../shared/ is not beside this checkout)\n", path.c_str());
    std::exit(77);
  }
}

}  // namespace trilemma::testing
