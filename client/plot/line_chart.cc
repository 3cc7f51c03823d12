#include "strata/plot/line_chart.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <cairo.h>

#include "absl/strings/str_cat.h"

namespace strata::plot {
namespace {

struct Rgb {
  int r, g, b;
};
constexpr Rgb kBackground{255, 255, 255};
constexpr Rgb kInk{0, 0, 0};
constexpr Rgb kGrid{225, 225, 225};
constexpr Rgb kMinorGrid{240, 240, 240};
constexpr Rgb kMarker{110, 110, 110};
// Distinct colours (Tableau 10), cycled.
constexpr Rgb kPalette[] = {{31, 119, 180},  {255, 127, 14}, {44, 160, 44},   {214, 39, 40},
                            {148, 103, 189}, {140, 86, 75},  {227, 119, 194}, {127, 127, 127},
                            {188, 189, 34},  {23, 190, 207}};
constexpr char kFont[] = "DejaVu Sans";

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

// One x tick: where (in axis units), its label (empty: a minor grid line only).
struct Tick {
  double value;
  std::string label;
};

// Owners of cairo's reference-counted objects.
struct SurfaceDeleter {
  void operator()(cairo_surface_t* s) const { cairo_surface_destroy(s); }
};
struct ContextDeleter {
  void operator()(cairo_t* c) const { cairo_destroy(c); }
};

// Drawing helpers over one cairo context; sizes in pixels.
class Painter {
 public:
  explicit Painter(cairo_t* cr) : cr_(cr) {}

  void Color(Rgb c) { cairo_set_source_rgb(cr_, c.r / 255.0, c.g / 255.0, c.b / 255.0); }
  void Font(double size, bool bold = false) {
    cairo_select_font_face(cr_, kFont, CAIRO_FONT_SLANT_NORMAL,
                           bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(cr_, size);
  }
  double TextWidth(const std::string& text) {
    cairo_text_extents_t e;
    cairo_text_extents(cr_, text.c_str(), &e);
    return e.x_advance;
  }
  // The current font's ascent (baseline to the top of capitals, about).
  double Ascent() {
    cairo_font_extents_t e;
    cairo_font_extents(cr_, &e);
    return e.ascent;
  }
  // `text` with its top-left corner at (x, y).
  void Text(double x, double y, const std::string& text, Rgb c) {
    Color(c);
    cairo_move_to(cr_, x, y + Ascent());
    cairo_show_text(cr_, text.c_str());
  }
  // `text` rotated to read bottom-up, its left end at (x, y) (y is where the text starts).
  void TextUp(double x, double y, const std::string& text, Rgb c) {
    cairo_save(cr_);
    cairo_translate(cr_, x + Ascent(), y);
    cairo_rotate(cr_, -M_PI / 2);
    Color(c);
    cairo_move_to(cr_, 0, 0);
    cairo_show_text(cr_, text.c_str());
    cairo_restore(cr_);
  }
  // A crisp 1-pixel axis-parallel line (or `width` wide), or any line anti-aliased.
  void Line(double x0, double y0, double x1, double y1, Rgb c, double width = 1) {
    const double half = std::fmod(width, 2.0) == 1.0 ? 0.5 : 0.0;
    if (x0 == x1) x0 = x1 = std::floor(x0) + half;
    if (y0 == y1) y0 = y1 = std::floor(y0) + half;
    Color(c);
    cairo_set_line_width(cr_, width);
    cairo_move_to(cr_, x0, y0);
    cairo_line_to(cr_, x1, y1);
    cairo_stroke(cr_);
  }
  void FillRect(double x0, double y0, double x1, double y1, Rgb c) {
    Color(c);
    cairo_rectangle(cr_, x0, y0, x1 - x0, y1 - y0);
    cairo_fill(cr_);
  }
  void Frame(double x0, double y0, double x1, double y1, Rgb c) {
    Color(c);
    cairo_set_line_width(cr_, 1);
    cairo_rectangle(cr_, std::floor(x0) + 0.5, std::floor(y0) + 0.5, std::floor(x1 - x0),
                    std::floor(y1 - y0));
    cairo_stroke(cr_);
  }
  cairo_t* cr() { return cr_; }

 private:
  cairo_t* cr_;
};

cairo_status_t WriteToFile(void* closure, const unsigned char* data, unsigned int length) {
  FILE* f = static_cast<FILE*>(closure);
  return std::fwrite(data, 1, length, f) == length ? CAIRO_STATUS_SUCCESS
                                                   : CAIRO_STATUS_WRITE_ERROR;
}

// Log-axis ticks at integer powers of `base` over [lo_exp, hi_exp]; every `every`-th
// exponent is labelled, the others are minor grid lines.
std::vector<Tick> LogTicks(int lo_exp, int hi_exp, double base, int every, const TickFormatter& f) {
  std::vector<Tick> ticks;
  for (int e = lo_exp; e <= hi_exp; ++e) {
    ticks.push_back({static_cast<double>(e), e % every == 0 ? f(std::pow(base, e)) : ""});
  }
  return ticks;
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
  const TickFormatter fx = chart.x_format ? chart.x_format : TickFormatter(FormatNumber);
  const TickFormatter fy = chart.y_format ? chart.y_format : TickFormatter(FormatNumber);
  const bool x_bytes = IsBytesFormatter(fx);
  // On a log axis x is drawn as log_base(x): powers of two for bytes, else of ten.
  const double base = x_bytes ? 2 : 10;
  // A log axis needs a point with x > 0; without one the chart falls back to a linear axis.
  bool x_log = false;
  for (const Series& s : chart.series) {
    for (const auto& [x, y] : s.points) {
      x_log = x_log || (chart.x_log && std::isfinite(x) && std::isfinite(y) && x > 0);
    }
  }
  auto drawable = [&](double x, double y) {
    return std::isfinite(x) && std::isfinite(y) && (!x_log || x > 0);
  };
  auto ax = [&](double x) { return x_log ? std::log(x) / std::log(base) : x; };
  Range xr, yr;
  for (const Series& s : chart.series) {
    for (const auto& [x, y] : s.points) {
      if (!drawable(x, y)) continue;
      xr.Add(ax(x));
      yr.Add(y);
    }
  }
  if (xr.Empty()) {
    return absl::InvalidArgumentError("WritePng: no finite point in any series");
  }
  for (const auto& [x, label] : chart.x_markers) {
    if (drawable(x, 0)) xr.Add(ax(x));
  }
  if (x_log) {
    xr.lo = std::floor(xr.lo + 1e-9);
    xr.hi = std::ceil(xr.hi - 1e-9);
    if (xr.hi <= xr.lo) xr.hi = xr.lo + 1;
  } else {
    Widen(xr);
  }
  if (chart.y_min) yr.lo = *chart.y_min;
  if (chart.y_max) yr.hi = *chart.y_max;
  if (yr.lo > yr.hi) yr.lo = yr.hi;  // a fixed end beyond all the data
  Widen(yr);

  std::unique_ptr<cairo_surface_t, SurfaceDeleter> surface(
      cairo_image_surface_create(CAIRO_FORMAT_RGB24, width, height));
  std::unique_ptr<cairo_t, ContextDeleter> context(cairo_create(surface.get()));
  if (cairo_status(context.get()) != CAIRO_STATUS_SUCCESS) {
    return absl::InternalError(
        absl::StrCat("WritePng: cairo: ", cairo_status_to_string(cairo_status(context.get()))));
  }
  Painter p(context.get());
  // Text and line sizes grow with the image: 12 px text at 960x600.
  const double fs = std::clamp(std::min(width / 80.0, height / 50.0), 9.0, 24.0);
  const double line_width = std::max(1.5, fs / 6);
  const double pad = std::round(fs / 2);
  const double tick = std::round(fs / 3);
  p.Font(fs);
  const double th = std::ceil(p.Ascent() * 1.25);  // a text row, descenders included

  // Y ticks first: unset ends snap outwards to the nice step.
  const double ystep = NiceStep(yr.lo, yr.hi, std::max(2, static_cast<int>(height / (fs * 5))),
                                IsBytesFormatter(fy));
  if (!chart.y_min) yr.lo = std::floor(yr.lo / ystep + 1e-9) * ystep;
  if (!chart.y_max) yr.hi = std::ceil(yr.hi / ystep - 1e-9) * ystep;
  const std::vector<double> yticks = Ticks(yr.lo, yr.hi, ystep);
  std::vector<std::string> ylabels;
  double ylabel_width = 0;
  for (double v : yticks) {
    ylabels.push_back(fy(v));
    ylabel_width = std::max(ylabel_width, p.TextWidth(ylabels.back()));
  }
  p.Font(fs * 1.3, /*bold=*/true);
  const double title_h = std::ceil(p.Ascent() * 1.25);
  p.Font(fs);
  const double left =
      std::ceil(pad + (chart.y_label.empty() ? 0 : th + pad) + ylabel_width + pad + tick);
  const double top = std::ceil(pad + (chart.title.empty() ? 0 : title_h + pad) + th / 2);
  const double bottom =
      std::floor(height - (pad + (chart.x_label.empty() ? 0 : th + pad) + th + pad + tick));
  const double right = std::floor(width - pad - 3 * fs);
  if (right - left < 40 || bottom - top < 40) {
    return absl::InvalidArgumentError(
        absl::StrCat("WritePng: ", width, "x", height, " leaves no room for the plot area"));
  }

  // X ticks: the finest step whose labels do not overlap.
  std::vector<Tick> xticks;
  const double gap = fs;
  if (x_log) {
    const int lo = static_cast<int>(xr.lo), hi = static_cast<int>(xr.hi);
    const double spacing = (right - left) / (hi - lo);
    for (int every = 1; every <= hi - lo + 1; ++every) {
      xticks = LogTicks(lo, hi, base, every, fx);
      double widest = 0;
      for (const Tick& t : xticks) widest = std::max(widest, p.TextWidth(t.label));
      if (spacing * every >= widest + gap) break;
    }
  } else {
    const Range x_data = xr;
    double xstep = NiceStep(x_data.lo, x_data.hi,
                            std::max(2, static_cast<int>((right - left) / (5 * fs))), x_bytes);
    for (int attempt = 0; attempt < 16; ++attempt) {
      xr.lo = std::floor(x_data.lo / xstep + 1e-9) * xstep;
      xr.hi = std::ceil(x_data.hi / xstep - 1e-9) * xstep;
      xticks.clear();
      double widest = 0;
      for (double v : Ticks(xr.lo, xr.hi, xstep)) {
        xticks.push_back({v, fx(v)});
        widest = std::max(widest, p.TextWidth(xticks.back().label));
      }
      const double spacing = (right - left) / std::max(1.0, (xr.hi - xr.lo) / xstep);
      if (spacing >= widest + gap) break;
      xstep = CoarserStep(x_data.lo, x_data.hi, xstep, x_bytes);
    }
  }

  auto px = [&](double axis_x) {
    return left + (axis_x - xr.lo) / (xr.hi - xr.lo) * (right - left);
  };
  auto py = [&](double y) {
    const double t = std::clamp((y - yr.lo) / (yr.hi - yr.lo), -4.0, 5.0);
    return bottom - t * (bottom - top);
  };

  p.FillRect(0, 0, width, height, kBackground);
  // Grid, axes, ticks and labels.
  for (size_t i = 0; i < yticks.size(); ++i) {
    const double y = std::round(py(yticks[i]));
    p.Line(left, y, right, y, kGrid);
    p.Line(left - tick, y, left, y, kInk);
    p.Text(left - tick - pad / 2 - p.TextWidth(ylabels[i]), y - th / 2, ylabels[i], kInk);
  }
  for (const Tick& t : xticks) {
    const double x = std::round(px(t.value));
    p.Line(x, top, x, bottom, t.label.empty() ? kMinorGrid : kGrid);
    if (t.label.empty()) continue;
    p.Line(x, bottom, x, bottom + tick, kInk);
    p.Text(x - p.TextWidth(t.label) / 2, bottom + tick + pad / 2, t.label, kInk);
  }
  p.Line(left, top, left, bottom, kInk);
  p.Line(left, bottom, right, bottom, kInk);
  if (!chart.title.empty()) {
    // The title shrinks to fit the width; at the text size a title still too long is cut
    // with "...".
    double ts = fs * 1.3;
    p.Font(ts, /*bold=*/true);
    while (ts > fs && p.TextWidth(chart.title) > width - 2 * pad) p.Font(ts -= 0.5, true);
    std::string title = chart.title;
    if (p.TextWidth(title) > width - 2 * pad) {
      while (!title.empty() && p.TextWidth(title + "...") > width - 2 * pad) title.pop_back();
      title += "...";
    }
    p.Text((width - p.TextWidth(title)) / 2, pad, title, kInk);
    p.Font(fs);
  }
  if (!chart.x_label.empty()) {
    p.Text((left + right - p.TextWidth(chart.x_label)) / 2, height - pad - th, chart.x_label, kInk);
  }
  if (!chart.y_label.empty()) {
    p.TextUp(pad, (top + bottom + p.TextWidth(chart.y_label)) / 2, chart.y_label, kInk);
  }

  // Markers, then the series on top, clipped to the plot area.
  cairo_t* cr = p.cr();
  cairo_save(cr);
  cairo_rectangle(cr, left + 1, top - line_width, right - left, bottom - top + line_width);
  cairo_clip(cr);
  // Marker labels go on the first row where they do not overlap an earlier label.
  std::vector<std::vector<std::pair<double, double>>> label_rows;  // per row: [x0, x1) spans
  for (const auto& [x, label] : chart.x_markers) {
    if (!drawable(x, 0)) continue;
    const double mx = std::round(px(ax(x)));
    const double dash[] = {fs / 2, fs / 3};
    cairo_set_dash(cr, dash, 2, 0);
    p.Line(mx, top, mx, bottom, kMarker);
    cairo_set_dash(cr, nullptr, 0, 0);
    const double w = p.TextWidth(label);
    double tx = mx + fs / 4;
    if (tx + w > right) tx = mx - fs / 4 - w;
    size_t row = 0;
    for (; row < label_rows.size(); ++row) {
      bool free = true;
      for (const auto& [x0, x1] : label_rows[row]) free = free && (tx + w + 2 <= x0 || tx >= x1);
      if (free) break;
    }
    if (row == label_rows.size()) label_rows.emplace_back();
    label_rows[row].emplace_back(tx, tx + w + 2);
    p.Text(tx, top + 2 + row * th, label, kMarker);
  }
  cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
  cairo_set_line_cap(cr, CAIRO_LINE_CAP_ROUND);
  cairo_set_line_width(cr, line_width);
  for (size_t i = 0; i < chart.series.size(); ++i) {
    p.Color(kPalette[i % std::size(kPalette)]);
    size_t run = 0;  // points in the current polyline
    double last_x = 0, last_y = 0;
    auto finish = [&] {
      if (run == 1) {  // a lone point: a dot
        cairo_new_path(cr);
        cairo_arc(cr, last_x, last_y, line_width * 1.5, 0, 2 * M_PI);
        cairo_fill(cr);
      } else if (run > 1) {
        cairo_stroke(cr);
      }
      run = 0;
    };
    for (const auto& [x, y] : chart.series[i].points) {
      if (!drawable(x, y)) {
        finish();
        continue;
      }
      last_x = px(ax(x));
      last_y = py(y);
      if (run++ == 0) {
        cairo_move_to(cr, last_x, last_y);
      } else {
        cairo_line_to(cr, last_x, last_y);
      }
    }
    finish();
  }
  cairo_restore(cr);

  // Legend: the corner of the plot area where the fewest data pixels would be covered.
  double legend_width = 0;
  int entries = 0;
  for (const Series& se : chart.series) {
    if (se.name.empty()) continue;
    legend_width = std::max(legend_width, p.TextWidth(se.name));
    ++entries;
  }
  if (entries > 0) {
    const double swatch = 2 * fs, row = th + pad / 2;
    const double box_w = std::ceil(pad + swatch + pad + legend_width + pad);
    const double box_h = std::ceil(pad + entries * row);
    const double marker_room = chart.x_markers.empty() ? 0 : th + pad;
    const double xs[2] = {right - box_w - pad, left + pad};
    const double ys[2] = {top + pad + marker_room, bottom - box_h - pad};
    cairo_surface_flush(surface.get());
    const unsigned char* data = cairo_image_surface_get_data(surface.get());
    const int stride = cairo_image_surface_get_stride(surface.get());
    auto is_data = [&](int x, int y) {
      uint32_t v;
      std::memcpy(&v, data + static_cast<size_t>(y) * stride + x * 4, 4);
      const int r = (v >> 16) & 0xff, g = (v >> 8) & 0xff, b = v & 0xff;
      return std::min({r, g, b}) < 220;  // neither background nor grid
    };
    double bx = xs[0], by = ys[0];
    long best = -1;
    for (int yi = 0; yi < 2; ++yi) {
      for (int xi = 0; xi < 2; ++xi) {
        long covered = 0;
        const int x0 = std::max(0, static_cast<int>(xs[xi]));
        const int y0 = std::max(0, static_cast<int>(ys[yi]));
        const int x1 = std::min(width - 1, static_cast<int>(xs[xi] + box_w));
        const int y1 = std::min(height - 1, static_cast<int>(ys[yi] + box_h));
        for (int y = y0; y <= y1; ++y) {
          for (int x = x0; x <= x1; ++x) covered += is_data(x, y);
        }
        if (best < 0 || covered < best) {
          best = covered;
          bx = xs[xi];
          by = ys[yi];
        }
      }
    }
    bx = std::round(bx);
    by = std::round(by);
    p.FillRect(bx, by, bx + box_w, by + box_h, kBackground);
    p.Frame(bx, by, bx + box_w, by + box_h, kMarker);
    double y = by + pad;
    for (size_t i = 0; i < chart.series.size(); ++i) {
      if (chart.series[i].name.empty()) continue;
      const double mid = std::round(y + th / 2);
      p.Line(bx + pad, mid, bx + pad + swatch, mid, kPalette[i % std::size(kPalette)],
             std::round(line_width));
      p.Text(bx + pad + swatch + pad, y + th * 0.1, chart.series[i].name, kInk);
      y += row;
    }
  }
  cairo_surface_flush(surface.get());

  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) {
    return absl::UnavailableError(
        absl::StrCat("WritePng: cannot open ", path, ": ", std::strerror(errno)));
  }
  const cairo_status_t written = cairo_surface_write_to_png_stream(surface.get(), WriteToFile, f);
  const bool flushed = std::fflush(f) == 0 && !std::ferror(f);
  const int saved_errno = errno;
  const bool closed = std::fclose(f) == 0;
  if (written != CAIRO_STATUS_SUCCESS) {
    return absl::InternalError(
        absl::StrCat("WritePng: cairo: ", cairo_status_to_string(written), ": ", path));
  }
  if (!flushed || !closed) {
    return absl::InternalError(
        absl::StrCat("WritePng: writing ", path, " failed: ", std::strerror(saved_errno)));
  }
  return absl::OkStatus();
}

}  // namespace strata::plot
