// Tick label formatters (line_chart.h).
#include <cmath>
#include <cstdio>
#include <string>

#include "strata/base/byte_size.h"
#include "strata/plot/line_chart.h"

namespace strata::plot {
namespace {

// `v` with 0-2 decimals by magnitude (at most ~3-4 significant digits), trailing
// zeros and a trailing point dropped.
std::string Short(double v) {
  const double a = std::fabs(v);
  const int decimals = a >= 100 ? 0 : a >= 10 ? 1 : a >= 1 ? 2 : 3;
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", decimals, v);
  std::string s = buf;
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  if (s == "-0") s = "0";
  return s;
}

}  // namespace

std::string FormatNumber(double v) {
  if (!std::isfinite(v)) return std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf");
  const double a = std::fabs(v);
  if (a < 1e-12) return "0";
  static constexpr struct {
    double scale;
    const char* suffix;
  } kSuffixes[] = {{1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}};
  for (const auto& s : kSuffixes) {
    if (a >= s.scale) return Short(v / s.scale) + s.suffix;
  }
  if (a < 0.001) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.2g", v);
    return buf;
  }
  return Short(v);
}

std::string FormatBytes(double v) { return base::FormatBytes(v); }

std::string FormatPercent(double v) {
  if (!std::isfinite(v)) return FormatNumber(v);
  return Short(v * 100) + "%";
}

}  // namespace strata::plot
