// Whether this test binary is the sanitizer build's (scripts/sanitize): a few tests cannot run
// under AddressSanitizer, or would cost CI minutes there for no memory-safety coverage the
// others lack; they say so and skip (they run in the gcc build).
#pragma once

namespace trilemma::testing {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool k_address_sanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool k_address_sanitizer = true;
#else
inline constexpr bool k_address_sanitizer = false;
#endif
#else
inline constexpr bool k_address_sanitizer = false;
#endif

}  // namespace trilemma::testing
