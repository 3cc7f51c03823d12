#include "strata/base/byte_size.h"

#include <cmath>
#include <iterator>
#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace strata::base {
namespace {

// Decimals shown for a value already in its unit.
int Decimals(double v, ByteStyle style) {
  const double a = std::fabs(v);
  if (style == ByteStyle::kThreeDigits) return a < 10 ? 2 : a < 100 ? 1 : 0;
  return a >= 100 ? 0 : a >= 10 ? 1 : 2;
}

double Round(double v, int decimals) {
  const double scale = std::pow(10.0, decimals);
  return std::round(v * scale) / scale;
}

}  // namespace

absl::StatusOr<uint64_t> ParseBytes(std::string_view text) {
  const absl::string_view t =
      absl::StripAsciiWhitespace(absl::string_view(text.data(), text.size()));
  size_t digits = 0;
  while (digits < t.size() && absl::ascii_isdigit(static_cast<unsigned char>(t[digits]))) {
    ++digits;
  }
  uint64_t number = 0;
  if (digits == 0 || !absl::SimpleAtoi(t.substr(0, digits), &number)) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", t, "\" is not a size (e.g. 8GiB, 512MiB, 1000000)"));
  }
  const std::string unit = absl::AsciiStrToLower(absl::StripAsciiWhitespace(t.substr(digits)));
  struct Unit {
    const char* name;
    uint64_t factor;
  };
  static constexpr Unit kUnits[] = {
      {"", 1},
      {"b", 1},
      {"kib", uint64_t{1} << 10},
      {"mib", uint64_t{1} << 20},
      {"gib", uint64_t{1} << 30},
      {"tib", uint64_t{1} << 40},
      {"kb", 1000},
      {"mb", 1000 * 1000},
      {"gb", 1000 * 1000 * 1000},
      {"tb", uint64_t{1000} * 1000 * 1000 * 1000},
  };
  for (const Unit& u : kUnits) {
    if (unit != u.name) continue;
    if (number > std::numeric_limits<uint64_t>::max() / u.factor) {
      return absl::InvalidArgumentError(absl::StrCat("\"", t, "\" is too large"));
    }
    return number * u.factor;
  }
  return absl::InvalidArgumentError(absl::StrCat("\"", t, "\": unknown unit \"", unit,
                                                 "\" (B, KiB, MiB, GiB, TiB, KB, MB, GB, TB)"));
}

std::string FormatBytes(double bytes, ByteStyle style) {
  if (std::isnan(bytes)) return "nan";
  if (std::isinf(bytes)) return bytes > 0 ? "inf" : "-inf";
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  size_t unit = 0;
  double value = bytes;
  // Whole bytes have no decimals; in a larger unit, round first and move up if the rounded
  // value reaches 1024.
  if (std::fabs(value) >= 1024) {
    value /= 1024;
    unit = 1;
    while (std::fabs(Round(value, Decimals(value, style))) >= 1024 &&
           unit + 1 < std::size(kUnits)) {
      value /= 1024;
      ++unit;
    }
  }
  if (unit == 0) return absl::StrCat(absl::StrFormat("%.0f", value == 0 ? 0.0 : value), " B");
  const int decimals = Decimals(Round(value, Decimals(value, style)), style);
  std::string text = absl::StrFormat("%.*f", decimals, Round(value, decimals));
  if (style == ByteStyle::kShort && text.find('.') != std::string::npos) {
    while (text.back() == '0') text.pop_back();
    if (text.back() == '.') text.pop_back();
  }
  return absl::StrCat(text, " ", kUnits[unit]);
}

}  // namespace strata::base
