// Whether this translation unit is built with AddressSanitizer: GCC defines
// __SANITIZE_ADDRESS__, clang answers __has_feature(address_sanitizer). Tests use it to
// leave out what ASan makes meaningless (resident-memory bounds: its quarantine keeps freed
// memory) or too slow (long randomized runs, which the release build runs in full).
#pragma once

#if defined(__SANITIZE_ADDRESS__)
#define STRATA_ADDRESS_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define STRATA_ADDRESS_SANITIZER 1
#endif
#endif
#ifndef STRATA_ADDRESS_SANITIZER
#define STRATA_ADDRESS_SANITIZER 0
#endif

namespace strata {

inline constexpr bool kAddressSanitizer = STRATA_ADDRESS_SANITIZER != 0;

}  // namespace strata
