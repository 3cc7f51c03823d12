// strata::plot — line charts drawn with cairo and written as PNG.
//
// A LineChart is a plain value: a title, axis labels, one or more series of (x, y)
// points drawn as anti-aliased polylines in distinct colours, an optional fixed y range,
// optional vertical markers (dashed lines with a label, e.g. "current capacity") and an
// optional logarithmic x axis. WritePng() lays it out and draws it with cairo: white
// background, axes, ticks on "nice" 1-2-5 steps with labels (the finest step whose labels
// do not overlap; on an axis formatted with FormatBytes, power-of-two multiples of
// KiB/MiB/GiB; on a log axis, each power of two (bytes) or ten, labelled as often as the
// labels fit), a light grid, a legend (one entry per named series, in the plot corner
// covering the fewest data pixels) and text in DejaVu Sans (fontconfig's nearest font
// when it is missing), sized to the image (12 px at 960x600).
//
//   strata::plot::LineChart chart;
//   chart.title = "miss-ratio curve";
//   chart.x_label = "capacity";
//   chart.y_label = "miss ratio";
//   chart.series.push_back({"live", {{1e9, 0.4}, {2e9, 0.3}}});
//   chart.x_markers.push_back({1.5e9, "current"});
//   chart.x_format = strata::plot::FormatBytes;   // tick labels "512 MiB", "1 GiB"
//   chart.x_log = true;                           // 32 MiB, 64 MiB, ... equally spaced
//   absl::Status s = strata::plot::WritePng(chart, "/tmp/mrc.png");
//
// Ownership: WritePng reads the chart and writes the file; nothing is retained.
// Thread safety: all functions are pure (apart from the file written) and may be
// called from any thread concurrently (for different paths).
//
// Errors (WritePng):
//   INVALID_ARGUMENT  no series, no finite point in any series, width or height
//                     outside [160, 8192] x [120, 8192], y_min >= y_max when both set,
//                     or an empty path.
//   UNAVAILABLE       the file cannot be opened for writing (message names the path
//                     and errno's text).
//   INTERNAL          cairo failed, or the write/close failed (message names the path).
// Points with a non-finite coordinate (on a log axis also x <= 0) are skipped (they break
// the polyline); a log axis without any point at x > 0 falls back to a linear one.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"

namespace strata::plot {

// One polyline. Points are drawn in the order given (sort by x for a curve).
struct Series {
  std::string name;                               // legend text; an empty name has no legend entry
  std::vector<std::pair<double, double>> points;  // (x, y)
};

// Formats a tick value as its label.
using TickFormatter = std::function<std::string(double)>;

struct LineChart {
  std::string title, x_label, y_label;
  std::vector<Series> series;
  // Fixed y range; each unset end is taken from the data (with a small margin).
  std::optional<double> y_min, y_max;
  // Vertical dashed lines at x, labelled (e.g. {capacity, "current"}). A marker
  // outside the data's x range widens the x range to include it.
  std::vector<std::pair<double, std::string>> x_markers;
  // Tick label formatters; unset means FormatNumber.
  TickFormatter x_format, y_format;
  // A logarithmic x axis: equal distances are equal ratios, ticks at powers of two when
  // x_format is FormatBytes (else of ten), the range widened to whole powers. For
  // capacities, where a 50 MiB working set and an 8 GiB tier share one axis. Points and
  // markers at x <= 0 are not drawn; with no point at x > 0 the axis is linear.
  bool x_log = false;
};

// Writes `chart` as a width x height 8-bit RGB PNG at `path` (truncating it).
absl::Status WritePng(const LineChart& chart, const std::string& path, int width = 960,
                      int height = 600);

// Tick label helpers usable as TickFormatter.
// "0", "0.25", "12", "1.5k", "3M", "2G", "-4" — at most ~4 significant digits.
std::string FormatNumber(double v);
// Binary byte units: "0 B", "512 B", "1.5 KiB", "64 MiB", "2 GiB", "1 TiB" (base::FormatBytes).
std::string FormatBytes(double v);
// v as a percentage: 0.25 -> "25%".
std::string FormatPercent(double v);

}  // namespace strata::plot
