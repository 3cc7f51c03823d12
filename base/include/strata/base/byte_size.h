// Byte sizes read from people (flags, config files) and written for them (tables, advice,
// plot ticks): the one parser and the one formatter.
//
// ParseBytes: a decimal integer, optionally followed by a unit (case-insensitive, spaces
// allowed around and between): B; KiB MiB GiB TiB (powers of 1024); KB MB GB TB (powers of
// 1000). "4096", "64MiB", "512 mib", "10GB". No fractions, no signs.
// Errors (INVALID_ARGUMENT; the message quotes the text, leading/trailing spaces stripped):
//   "\"x\" is not a size (e.g. 8GiB, 512MiB, 1000000)"   no leading digits / does not fit
//   "\"x\": unknown unit \"u\" (B, KiB, MiB, GiB, TiB, KB, MB, GB, TB)"
//   "\"x\" is too large"                                  the product passes 2^64 - 1
//
// FormatBytes: IEC units (B, KiB, ..., EiB) in one of two styles:
//   kShort (default)   0-2 decimals by magnitude, trailing zeros dropped: "0 B", "512 B",
//                      "1.5 KiB", "64 MiB", "1.25 GiB", "100 GiB" (advice, plot ticks)
//   kThreeDigits       three significant digits: "0 B", "1023 B", "1.00 KiB", "64.0 MiB",
//                      "1.50 GiB" (table columns that should line up)
// A value is rounded before its unit is chosen (1048575 B is "1 MiB", not "1024 KiB").
// Negative values get a '-'; a non-finite one is "nan" / "inf" / "-inf".
//
// kKiB, kMiB, kGiB: the binary units as constants, for code and tests that size things.
//
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace strata::base {

inline constexpr uint64_t kKiB = uint64_t{1} << 10;
inline constexpr uint64_t kMiB = uint64_t{1} << 20;
inline constexpr uint64_t kGiB = uint64_t{1} << 30;

absl::StatusOr<uint64_t> ParseBytes(std::string_view text);

enum class ByteStyle { kShort, kThreeDigits };

std::string FormatBytes(double bytes, ByteStyle style = ByteStyle::kShort);

}  // namespace strata::base
