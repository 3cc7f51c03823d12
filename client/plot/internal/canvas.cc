#include "client/plot/internal/canvas.h"

#include <algorithm>
#include <cstdlib>

#include "client/plot/internal/bitmap_font.h"

namespace strata::plot::internal {

Canvas::Canvas(int width, int height, Rgb background)
    : width_(width), height_(height), pixels_(static_cast<size_t>(width) * height * 3) {
  ResetClip();
  for (size_t i = 0; i < pixels_.size(); i += 3) {
    pixels_[i] = background.r;
    pixels_[i + 1] = background.g;
    pixels_[i + 2] = background.b;
  }
}

Rgb Canvas::At(int x, int y) const {
  const size_t i = (static_cast<size_t>(y) * width_ + x) * 3;
  return {pixels_[i], pixels_[i + 1], pixels_[i + 2]};
}

void Canvas::SetClip(int x0, int y0, int x1, int y1) {
  clip_x0_ = std::max(0, x0);
  clip_y0_ = std::max(0, y0);
  clip_x1_ = std::min(width_, x1);
  clip_y1_ = std::min(height_, y1);
}

void Canvas::ResetClip() { SetClip(0, 0, width_, height_); }

void Canvas::Set(int x, int y, Rgb c) {
  if (x < clip_x0_ || y < clip_y0_ || x >= clip_x1_ || y >= clip_y1_) return;
  const size_t i = (static_cast<size_t>(y) * width_ + x) * 3;
  pixels_[i] = c.r;
  pixels_[i + 1] = c.g;
  pixels_[i + 2] = c.b;
}

void Canvas::FillRect(int x0, int y0, int x1, int y1, Rgb c) {
  for (int y = std::max(y0, clip_y0_); y < std::min(y1, clip_y1_); ++y) {
    for (int x = std::max(x0, clip_x0_); x < std::min(x1, clip_x1_); ++x) Set(x, y, c);
  }
}

namespace {

// Calls plot(x, y, step) for each point of the Bresenham line, step counting from 0.
template <typename Plot>
void Walk(int x0, int y0, int x1, int y1, Plot plot) {
  const int dx = std::abs(x1 - x0), sx = x0 < x1 ? 1 : -1;
  const int dy = -std::abs(y1 - y0), sy = y0 < y1 ? 1 : -1;
  int err = dx + dy;
  for (int step = 0;; ++step) {
    plot(x0, y0, step);
    if (x0 == x1 && y0 == y1) break;
    const int e2 = 2 * err;
    if (e2 >= dy) {
      err += dy;
      x0 += sx;
    }
    if (e2 <= dx) {
      err += dx;
      y0 += sy;
    }
  }
}

}  // namespace

void Canvas::Line(int x0, int y0, int x1, int y1, Rgb c, int thickness) {
  const int lo = -(thickness - 1) / 2, hi = thickness / 2;
  Walk(x0, y0, x1, y1, [&](int x, int y, int) {
    for (int oy = lo; oy <= hi; ++oy) {
      for (int ox = lo; ox <= hi; ++ox) Set(x + ox, y + oy, c);
    }
  });
}

void Canvas::DashedLine(int x0, int y0, int x1, int y1, Rgb c, int dash, int gap) {
  Walk(x0, y0, x1, y1, [&](int x, int y, int step) {
    if (step % (dash + gap) < dash) Set(x, y, c);
  });
}

void Canvas::Text(int x, int y, std::string_view s, Rgb c, int scale) {
  for (char ch : s) {
    const auto& glyph = Glyph(ch);
    for (int col = 0; col < kGlyphWidth; ++col) {
      for (int row = 0; row < kGlyphHeight; ++row) {
        if ((glyph[col] >> row) & 1) {
          FillRect(x + col * scale, y + row * scale, x + (col + 1) * scale, y + (row + 1) * scale,
                   c);
        }
      }
    }
    x += kCellWidth * scale;
  }
}

void Canvas::TextUp(int x, int y, std::string_view s, Rgb c, int scale) {
  // Reading direction is up: the first character sits at the bottom. A glyph
  // pixel (col, row) lands at (x + row, bottom - col).
  int bottom = y + TextWidth(s, scale) - 1;
  for (char ch : s) {
    const auto& glyph = Glyph(ch);
    for (int col = 0; col < kGlyphWidth; ++col) {
      for (int row = 0; row < kGlyphHeight; ++row) {
        if ((glyph[col] >> row) & 1) {
          FillRect(x + row * scale, bottom - (col + 1) * scale + 1, x + (row + 1) * scale,
                   bottom - col * scale + 1, c);
        }
      }
    }
    bottom -= kCellWidth * scale;
  }
}

int Canvas::TextWidth(std::string_view s, int scale) {
  if (s.empty()) return 0;
  return (static_cast<int>(s.size()) * kCellWidth - 1) * scale;
}

int Canvas::TextHeight(int scale) { return kGlyphHeight * scale; }

}  // namespace strata::plot::internal
