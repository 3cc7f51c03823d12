// Canvas: an 8-bit RGB raster with the few primitives a line chart needs —
// pixels, filled rectangles, 1-3 px lines (Bresenham), dashed lines and text in
// the 5x7 bitmap font (bitmap_font.h), horizontal or rotated 90 degrees
// counter-clockwise. Drawing outside the raster, or outside the clip rectangle
// when one is set, is silently cut off.
//
// Ownership: the canvas owns its pixels. Thread safety: none (one thread per canvas).
// REQUIRES: width > 0, height > 0.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace strata::plot::internal {

struct Rgb {
  uint8_t r, g, b;
  bool operator==(const Rgb& o) const { return r == o.r && g == o.g && b == o.b; }
};

class Canvas {
 public:
  Canvas(int width, int height, Rgb background);

  int width() const { return width_; }
  int height() const { return height_; }
  // Row-major RGB bytes, 3 per pixel.
  const std::vector<uint8_t>& pixels() const { return pixels_; }
  Rgb At(int x, int y) const;

  // Drawing is limited to [x0, x1) x [y0, y1) until ResetClip().
  void SetClip(int x0, int y0, int x1, int y1);
  void ResetClip();

  void Set(int x, int y, Rgb c);
  void FillRect(int x0, int y0, int x1, int y1, Rgb c);  // [x0, x1) x [y0, y1)
  // A line from (x0, y0) to (x1, y1), both ends included, `thickness` px wide.
  void Line(int x0, int y0, int x1, int y1, Rgb c, int thickness = 1);
  // Dashes of `dash` px on, `gap` px off.
  void DashedLine(int x0, int y0, int x1, int y1, Rgb c, int dash, int gap);

  // Text with its top-left corner at (x, y), each font pixel `scale` x `scale`.
  void Text(int x, int y, std::string_view s, Rgb c, int scale = 1);
  // Text rotated 90 degrees counter-clockwise (reads bottom to top); (x, y) is
  // the top-left corner of its bounding box.
  void TextUp(int x, int y, std::string_view s, Rgb c, int scale = 1);
  // Width (length along the reading direction) and height of a text in pixels.
  static int TextWidth(std::string_view s, int scale = 1);
  static int TextHeight(int scale = 1);

 private:
  int width_, height_;
  int clip_x0_, clip_y0_, clip_x1_, clip_y1_;
  std::vector<uint8_t> pixels_;
};

}  // namespace strata::plot::internal
