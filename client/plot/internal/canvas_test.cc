#include "client/plot/internal/canvas.h"

#include "gtest/gtest.h"

namespace strata::plot::internal {
namespace {

constexpr Rgb kWhite{255, 255, 255};
constexpr Rgb kRed{255, 0, 0};

int Count(const Canvas& c, Rgb color, int x0 = 0, int y0 = 0, int x1 = -1, int y1 = -1) {
  if (x1 < 0) x1 = c.width();
  if (y1 < 0) y1 = c.height();
  int n = 0;
  for (int y = y0; y < y1; ++y) {
    for (int x = x0; x < x1; ++x) n += c.At(x, y) == color;
  }
  return n;
}

TEST(CanvasTest, LineIncludesBothEndsAndStaysOnItsPath) {
  Canvas c(50, 50, kWhite);
  c.Line(5, 5, 40, 5, kRed);
  EXPECT_EQ(Count(c, kRed), 36);
  EXPECT_EQ(c.At(5, 5), kRed);
  EXPECT_EQ(c.At(40, 5), kRed);
  c.Line(10, 10, 20, 20, kRed);  // diagonal: 11 pixels
  EXPECT_EQ(Count(c, kRed), 36 + 11);
}

TEST(CanvasTest, DashedLineLeavesGaps) {
  Canvas c(100, 10, kWhite);
  c.DashedLine(0, 5, 99, 5, kRed, 6, 4);
  EXPECT_EQ(Count(c, kRed), 60);
}

TEST(CanvasTest, ClipCutsDrawing) {
  Canvas c(20, 20, kWhite);
  c.SetClip(0, 0, 10, 20);
  c.Line(0, 3, 19, 3, kRed);
  EXPECT_EQ(Count(c, kRed), 10);
  c.ResetClip();
  c.Set(-1, -1, kRed);  // outside: ignored
  c.Set(25, 3, kRed);
  EXPECT_EQ(Count(c, kRed), 10);
}

TEST(CanvasTest, TextDrawsInsideItsBox) {
  Canvas c(100, 40, kWhite);
  const std::string s = "Hit 42%";
  c.Text(10, 10, s, kRed, 2);
  const int w = Canvas::TextWidth(s, 2), h = Canvas::TextHeight(2);
  EXPECT_EQ(w, (7 * 6 - 1) * 2);
  const int inside = Count(c, kRed, 10, 10, 10 + w, 10 + h);
  EXPECT_GT(inside, 40);
  EXPECT_EQ(Count(c, kRed), inside);
}

TEST(CanvasTest, TextUpIsTheTransposedBox) {
  Canvas c(40, 100, kWhite);
  const std::string s = "ratio";
  c.TextUp(5, 10, s, kRed);
  const int w = Canvas::TextWidth(s), h = Canvas::TextHeight();
  const int inside = Count(c, kRed, 5, 10, 5 + h, 10 + w);
  EXPECT_GT(inside, 20);
  EXPECT_EQ(Count(c, kRed), inside);
}

TEST(CanvasTest, DistinctGlyphsDiffer) {
  Canvas a(10, 10, kWhite), b(10, 10, kWhite), q(10, 10, kWhite), u(10, 10, kWhite);
  a.Text(0, 0, "1", kRed);
  b.Text(0, 0, "7", kRed);
  q.Text(0, 0, "?", kRed);
  u.Text(0, 0, "\x01", kRed);  // outside ASCII 32-126: drawn as '?'
  EXPECT_NE(a.pixels(), b.pixels());
  EXPECT_EQ(q.pixels(), u.pixels());
}

}  // namespace
}  // namespace strata::plot::internal
