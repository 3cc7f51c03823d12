#include "strata/plot/line_chart.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <png.h>

#include "absl/strings/str_cat.h"

#include "client/plot/internal/bitmap_font.h"
#include "client/plot/internal/canvas.h"

namespace strata::plot {
namespace {

using internal::Canvas;
using internal::Rgb;

constexpr Rgb kBackground{255, 255, 255};
constexpr Rgb kInk{0, 0, 0};
constexpr Rgb kGrid{225, 225, 225};
constexpr Rgb kMarker{110, 110, 110};
// Distinct colours (Tableau 10), cycled.
constexpr Rgb kPalette[] = {{31, 119, 180},  {255, 127, 14}, {44, 160, 44},   {214, 39, 40},
                            {148, 103, 189}, {140, 86, 75},  {227, 119, 194}, {127, 127, 127},
                            {188, 189, 34},  {23, 190, 207}};

struct Range {
  double lo = std::numeric_limits<double>::infinity();
  double hi = -std::numeric_limits<double>::infinity();
  void Add(double v) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  bool Empty() const { return !(lo <= hi); }
};

// The 1-2-5 step giving about `target` intervals over [lo, hi]. With `binary`, a
// step of at least 1 KiB is a power-of-two multiple of KiB, MiB, GiB, ... (byte axes).
double NiceStep(double lo, double hi, int target, bool binary) {
  const double raw = (hi - lo) / std::max(1, target);
  double unit = 1;
  if (binary && raw >= 1024) {
    while (raw / unit >= 1024) unit *= 1024;
  }
  const double r = raw / unit;
  // Byte axes above 1 KiB: power-of-two multiples of the unit (256 MiB, 512 MiB, 1 GiB).
  if (binary && unit > 1) {
    const double p = std::pow(2.0, std::round(std::log2(r)));
    return (p >= 1024 ? 1024 : std::max(1.0, p)) * unit;
  }
  const double mag = std::pow(10.0, std::floor(std::log10(r)));
  const double f = r / mag;
  return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * mag;
}

// The next coarser step after `step` (1-2-5 order).
double CoarserStep(double lo, double hi, double step, bool binary) {
  for (int target = std::max(1, static_cast<int>((hi - lo) / step)); target > 1; --target) {
    const double next = NiceStep(lo, hi, target, binary);
    if (next > step * 1.0001) return next;
  }
  return hi - lo;
}

bool IsBytesFormatter(const TickFormatter& f) {
  using Fn = std::string (*)(double);
  const Fn* fn = f.target<Fn>();
  return fn != nullptr && *fn == &FormatBytes;
}

// Tick values k * step within [lo, hi] (a small tolerance at both ends).
std::vector<double> Ticks(double lo, double hi, double step) {
  std::vector<double> ticks;
  const double eps = step * 1e-9;
  for (double k = std::ceil((lo - eps) / step); k * step <= hi + eps && ticks.size() < 64; ++k) {
    double v = k * step;
    if (std::fabs(v) < eps) v = 0;
    ticks.push_back(v);
  }
  return ticks;
}

// Widens a degenerate range so it can be mapped.
void Widen(Range& r) {
  if (r.hi > r.lo) return;
  const double pad = r.lo == 0 ? 1 : std::fabs(r.lo) * 0.1;
  r.lo -= pad;
  r.hi += pad;
}

// libpng's error handler must not return: jump back to WriteRaster.
void PngError(png_structp png, png_const_charp message) {
  auto* buf = static_cast<std::string*>(png_get_error_ptr(png));
  if (buf != nullptr) *buf = message;
  png_longjmp(png, 1);
}
void PngWarning(png_structp, png_const_charp) {}

// Writes the canvas to an open file. Only trivially destructible objects live
// between setjmp and a longjmp from libpng.
bool WriteRaster(FILE* f, const Canvas& canvas, std::string* error) {
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, error, PngError, PngWarning);
  if (png == nullptr) {
    *error = "png_create_write_struct failed";
    return false;
  }
  png_infop info = png_create_info_struct(png);
  if (info == nullptr) {
    png_destroy_write_struct(&png, nullptr);
    *error = "png_create_info_struct failed";
    return false;
  }
  const uint8_t* pixels = canvas.pixels().data();
  const int width = canvas.width(), height = canvas.height();
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    return false;
  }
  png_init_io(png, f);
  png_set_IHDR(png, info, width, height, 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  for (int y = 0; y < height; ++y) {
    png_write_row(png, pixels + static_cast<size_t>(y) * width * 3);
  }
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  return true;
}

}  // namespace

absl::Status WritePng(const LineChart& chart, const std::string& path, int width, int height) {
  if (path.empty()) return absl::InvalidArgumentError("WritePng: empty path");
  if (width < 160 || width > 8192 || height < 120 || height > 8192) {
    return absl::InvalidArgumentError(
        absl::StrCat("WritePng: size ", width, "x", height, " outside [160, 8192]x[120, 8192]"));
  }
  if (chart.series.empty()) return absl::InvalidArgumentError("WritePng: chart has no series");
  if (chart.y_min && chart.y_max && !(*chart.y_min < *chart.y_max)) {
    return absl::InvalidArgumentError("WritePng: y_min must be below y_max");
  }
  Range xr, yr;
  for (const Series& s : chart.series) {
    for (const auto& [x, y] : s.points) {
      if (!std::isfinite(x) || !std::isfinite(y)) continue;
      xr.Add(x);
      yr.Add(y);
    }
  }
  if (xr.Empty()) return absl::InvalidArgumentError("WritePng: no finite point in any series");
  for (const auto& [x, label] : chart.x_markers) {
    if (std::isfinite(x)) xr.Add(x);
  }
  Widen(xr);
  if (chart.y_min) yr.lo = *chart.y_min;
  if (chart.y_max) yr.hi = *chart.y_max;
  if (yr.lo > yr.hi) yr.lo = yr.hi;  // a fixed end beyond all the data
  Widen(yr);
  const TickFormatter fx = chart.x_format ? chart.x_format : TickFormatter(FormatNumber);
  const TickFormatter fy = chart.y_format ? chart.y_format : TickFormatter(FormatNumber);

  const int s = (width >= 720 && height >= 450) ? 2 : 1;  // text scale
  const int pad = 6 * s;
  // Y ticks first: unset ends snap outwards to the nice step.
  const double ystep = NiceStep(yr.lo, yr.hi, height / (40 * s), IsBytesFormatter(fy));
  if (!chart.y_min) yr.lo = std::floor(yr.lo / ystep + 1e-9) * ystep;
  if (!chart.y_max) yr.hi = std::ceil(yr.hi / ystep - 1e-9) * ystep;
  const std::vector<double> yticks = Ticks(yr.lo, yr.hi, ystep);
  std::vector<std::string> ylabels;
  int ylabel_width = 0;
  for (double v : yticks) {
    ylabels.push_back(fy(v));
    ylabel_width = std::max(ylabel_width, Canvas::TextWidth(ylabels.back(), s));
  }
  const int th = Canvas::TextHeight(s);
  const int left = pad + (chart.y_label.empty() ? 0 : th + pad) + ylabel_width + pad + 4 * s;
  const int top = pad + (chart.title.empty() ? 0 : Canvas::TextHeight(s + 1) + pad) + th / 2;
  const int bottom = height - (pad + (chart.x_label.empty() ? 0 : th + pad) + th + pad + 4 * s);
  const int right = width - pad - 4 * internal::kCellWidth * s;
  if (right - left < 40 || bottom - top < 40) {
    return absl::InvalidArgumentError(
        absl::StrCat("WritePng: ", width, "x", height, " leaves no room for the plot area"));
  }
  // X ticks: the finest 1-2-5 step whose labels do not overlap; the ends snap
  // outwards to the step.
  const bool x_bytes = IsBytesFormatter(fx);
  const Range x_data = xr;
  double xstep = NiceStep(x_data.lo, x_data.hi, std::max(2, (right - left) / (60 * s)), x_bytes);
  std::vector<double> xticks;
  std::vector<std::string> xlabels;
  for (int attempt = 0; attempt < 16; ++attempt) {
    xr.lo = std::floor(x_data.lo / xstep + 1e-9) * xstep;
    xr.hi = std::ceil(x_data.hi / xstep - 1e-9) * xstep;
    xticks = Ticks(xr.lo, xr.hi, xstep);
    xlabels.clear();
    int widest = 0;
    for (double v : xticks) {
      xlabels.push_back(fx(v));
      widest = std::max(widest, Canvas::TextWidth(xlabels.back(), s));
    }
    const double spacing = (right - left) / std::max(1.0, (xr.hi - xr.lo) / xstep);
    if (spacing >= widest + 12 * s) break;
    xstep = CoarserStep(x_data.lo, x_data.hi, xstep, x_bytes);
  }

  auto px = [&](double x) {
    return left + static_cast<int>(std::lround((x - xr.lo) / (xr.hi - xr.lo) * (right - left)));
  };
  auto py = [&](double y) {
    const double t = std::clamp((y - yr.lo) / (yr.hi - yr.lo), -4.0, 5.0);
    return bottom - static_cast<int>(std::lround(t * (bottom - top)));
  };

  Canvas canvas(width, height, kBackground);
  // Grid, axes, ticks and labels.
  for (size_t i = 0; i < yticks.size(); ++i) {
    const int y = py(yticks[i]);
    canvas.Line(left, y, right, y, kGrid);
    canvas.Line(left - 4 * s, y, left, y, kInk);
    canvas.Text(left - 4 * s - pad / 2 - Canvas::TextWidth(ylabels[i], s), y - th / 2, ylabels[i],
                kInk, s);
  }
  for (size_t i = 0; i < xticks.size(); ++i) {
    const int x = px(xticks[i]);
    canvas.Line(x, top, x, bottom, kGrid);
    canvas.Line(x, bottom, x, bottom + 4 * s, kInk);
    const std::string& label = xlabels[i];
    canvas.Text(x - Canvas::TextWidth(label, s) / 2, bottom + 4 * s + pad / 2, label, kInk, s);
  }
  canvas.Line(left, top, left, bottom, kInk);
  canvas.Line(left, bottom, right, bottom, kInk);
  if (!chart.title.empty()) {
    // The title's scale shrinks to fit the width; at scale 1 a title still too long is cut
    // with "...".
    int ts = s + 1;
    while (ts > 1 && Canvas::TextWidth(chart.title, ts) > width - 2 * pad) --ts;
    std::string title = chart.title;
    if (Canvas::TextWidth(title, ts) > width - 2 * pad) {
      while (!title.empty() && Canvas::TextWidth(title + "...", ts) > width - 2 * pad) {
        title.pop_back();
      }
      title += "...";
    }
    canvas.Text((width - Canvas::TextWidth(title, ts)) / 2, pad, title, kInk, ts);
  }
  if (!chart.x_label.empty()) {
    canvas.Text((left + right - Canvas::TextWidth(chart.x_label, s)) / 2, height - pad - th,
                chart.x_label, kInk, s);
  }
  if (!chart.y_label.empty()) {
    canvas.TextUp(pad, (top + bottom - Canvas::TextWidth(chart.y_label, s)) / 2, chart.y_label,
                  kInk, s);
  }

  // Markers, then the series on top, clipped to the plot area.
  canvas.SetClip(left + 1, top, right + 1, bottom);
  // Marker labels go on the first row where they do not overlap an earlier label.
  std::vector<std::vector<std::pair<int, int>>> label_rows;  // per row: [x0, x1) spans
  for (const auto& [x, label] : chart.x_markers) {
    if (!std::isfinite(x)) continue;
    const int mx = px(x);
    canvas.DashedLine(mx, top, mx, bottom, kMarker, 6 * s, 4 * s);
    const int w = Canvas::TextWidth(label, s);
    int tx = mx + 3 * s;
    if (tx + w > right) tx = mx - 3 * s - w;
    size_t row = 0;
    for (; row < label_rows.size(); ++row) {
      bool free = true;
      for (const auto& [x0, x1] : label_rows[row])
        free = free && (tx + w + 2 * s <= x0 || tx >= x1);
      if (free) break;
    }
    if (row == label_rows.size()) label_rows.emplace_back();
    label_rows[row].emplace_back(tx, tx + w + 2 * s);
    canvas.Text(tx, top + 2 * s + static_cast<int>(row) * (th + s), label, kMarker, s);
  }
  for (size_t i = 0; i < chart.series.size(); ++i) {
    const Rgb color = kPalette[i % std::size(kPalette)];
    bool have_prev = false;
    int prev_x = 0, prev_y = 0;
    for (const auto& [x, y] : chart.series[i].points) {
      if (!std::isfinite(x) || !std::isfinite(y)) {
        have_prev = false;
        continue;
      }
      const int cx = px(x), cy = py(y);
      if (have_prev) {
        canvas.Line(prev_x, prev_y, cx, cy, color, s);
      } else {
        canvas.FillRect(cx - s, cy - s, cx + s + 1, cy + s + 1, color);
      }
      prev_x = cx;
      prev_y = cy;
      have_prev = true;
    }
  }
  // Legend: top-right corner of the plot area.
  int legend_width = 0, entries = 0;
  for (const Series& se : chart.series) {
    if (se.name.empty()) continue;
    legend_width = std::max(legend_width, Canvas::TextWidth(se.name, s));
    ++entries;
  }
  if (entries > 0) {
    const int swatch = 16 * s, row = th + pad;
    const int box_w = pad + swatch + pad + legend_width + pad;
    const int box_h = pad + entries * row;
    // The corner of the plot area where the fewest data pixels would be covered.
    const int marker_room = chart.x_markers.empty() ? 0 : th + pad;
    const int xs[2] = {right - box_w - pad, left + pad};
    const int ys[2] = {top + pad + marker_room, bottom - box_h - pad};
    int bx = xs[0], by = ys[0];
    long best = -1;
    for (int yi = 0; yi < 2; ++yi) {
      for (int xi = 0; xi < 2; ++xi) {
        long covered = 0;
        for (int y = std::max(0, ys[yi]); y <= std::min(height - 1, ys[yi] + box_h); ++y) {
          for (int x = std::max(0, xs[xi]); x <= std::min(width - 1, xs[xi] + box_w); ++x) {
            const Rgb c = canvas.At(x, y);
            covered += !(c == kBackground) && !(c == kGrid);
          }
        }
        if (best < 0 || covered < best) {
          best = covered;
          bx = xs[xi];
          by = ys[yi];
        }
      }
    }
    canvas.FillRect(bx, by, bx + box_w, by + box_h, kBackground);
    canvas.Line(bx, by, bx + box_w, by, kMarker);
    canvas.Line(bx, by + box_h, bx + box_w, by + box_h, kMarker);
    canvas.Line(bx, by, bx, by + box_h, kMarker);
    canvas.Line(bx + box_w, by, bx + box_w, by + box_h, kMarker);
    int y = by + pad;
    for (size_t i = 0; i < chart.series.size(); ++i) {
      if (chart.series[i].name.empty()) continue;
      const Rgb color = kPalette[i % std::size(kPalette)];
      canvas.FillRect(bx + pad, y + th / 2 - s, bx + pad + swatch, y + th / 2 + s, color);
      canvas.Text(bx + pad + swatch + pad, y, chart.series[i].name, kInk, s);
      y += row;
    }
  }
  canvas.ResetClip();

  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) {
    return absl::UnavailableError(
        absl::StrCat("WritePng: cannot open ", path, ": ", std::strerror(errno)));
  }
  std::string error;
  const bool written = WriteRaster(f, canvas, &error);
  const bool flushed = std::fflush(f) == 0 && !std::ferror(f);
  const int saved_errno = errno;
  const bool closed = std::fclose(f) == 0;
  if (!written) return absl::InternalError(absl::StrCat("WritePng: libpng: ", error, ": ", path));
  if (!flushed || !closed) {
    return absl::InternalError(
        absl::StrCat("WritePng: writing ", path, " failed: ", std::strerror(saved_errno)));
  }
  return absl::OkStatus();
}

}  // namespace strata::plot
