#include "strata/plot/line_chart.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <cairo.h>
#include <unistd.h>

#include "gtest/gtest.h"

#include "strata/testing/temp_dir.h"

namespace strata::plot {
namespace {

struct Image {
  int width = 0, height = 0;
  std::vector<uint32_t> rgb;  // 0x00RRGGBB, row by row
  uint32_t At(int x, int y) const { return rgb[static_cast<size_t>(y) * width + x]; }
  // The pixel is within `tolerance` of (r, g, b) in every channel (anti-aliasing blends
  // the edges of lines and glyphs; their cores keep the colour).
  bool Near(int x, int y, int r, int g, int b, int tolerance = 24) const {
    const uint32_t v = At(x, y);
    return std::abs(static_cast<int>((v >> 16) & 0xff) - r) <= tolerance &&
           std::abs(static_cast<int>((v >> 8) & 0xff) - g) <= tolerance &&
           std::abs(static_cast<int>(v & 0xff) - b) <= tolerance;
  }
  bool Is(int x, int y, int r, int g, int b) const { return Near(x, y, r, g, b, 0); }
  // Pixels near (r, g, b) in the rectangle [x0, x1) x [y0, y1).
  int Count(int x0, int y0, int x1, int y1, int r, int g, int b) const {
    int n = 0;
    for (int y = y0; y < y1; ++y) {
      for (int x = x0; x < x1; ++x) n += Near(x, y, r, g, b);
    }
    return n;
  }
};

// Reads a PNG back with cairo (which checks the signature, the chunks and their CRCs).
bool ReadPng(const std::string& path, Image* out) {
  cairo_surface_t* surface = cairo_image_surface_create_from_png(path.c_str());
  const bool ok = cairo_surface_status(surface) == CAIRO_STATUS_SUCCESS;
  if (ok) {
    cairo_surface_flush(surface);
    out->width = cairo_image_surface_get_width(surface);
    out->height = cairo_image_surface_get_height(surface);
    const int stride = cairo_image_surface_get_stride(surface);
    const unsigned char* data = cairo_image_surface_get_data(surface);
    out->rgb.resize(static_cast<size_t>(out->width) * out->height);
    for (int y = 0; y < out->height; ++y) {
      std::memcpy(&out->rgb[static_cast<size_t>(y) * out->width], data + y * stride,
                  static_cast<size_t>(out->width) * 4);
    }
    for (uint32_t& v : out->rgb) v &= 0xffffff;
  }
  cairo_surface_destroy(surface);
  return ok;
}

class LineChartTest : public ::testing::Test {
 protected:
  strata::testing::ScopedTempDir temp_{"strata-plot-test"};
  const std::string dir_ = temp_.path();
};

// Two flat series: every column of the plot area crossing them holds the first
// palette colour (31,119,180) below the second (255,127,14).
TEST_F(LineChartTest, WritesReadablePngWithLinesWhereTheDataIs) {
  LineChart chart;
  chart.title = "hit rate";
  chart.x_label = "capacity";
  chart.y_label = "ratio";
  chart.y_min = 0;
  chart.y_max = 1;
  chart.series.push_back({"low", {{0, 0.25}, {10, 0.25}}});
  chart.series.push_back({"high", {{0, 0.75}, {10, 0.75}}});
  chart.x_markers.push_back({5, "current"});
  const std::string path = dir_ + "/chart.png";
  ASSERT_TRUE(WritePng(chart, path, 800, 500).ok());

  FILE* f = std::fopen(path.c_str(), "rb");
  ASSERT_NE(f, nullptr);
  unsigned char sig[8];
  ASSERT_EQ(std::fread(sig, 1, 8, f), 8u);
  std::fclose(f);
  EXPECT_EQ(std::memcmp(sig, "\x89PNG\r\n\x1a\n", 8), 0);

  Image img;
  ASSERT_TRUE(ReadPng(path, &img));
  EXPECT_EQ(img.width, 800);
  EXPECT_EQ(img.height, 500);
  // A column a third of the way across (away from the legend and the marker).
  const int x = img.width / 3;
  int low_y = -1, high_y = -1;
  for (int y = 0; y < img.height; ++y) {
    if (img.Near(x, y, 31, 119, 180)) low_y = y;
    if (img.Near(x, y, 255, 127, 14) && high_y < 0) high_y = y;
  }
  ASSERT_GE(low_y, 0);
  ASSERT_GE(high_y, 0);
  EXPECT_GT(low_y, high_y);
  // y = 0.25 and y = 0.75 are symmetric about the plot area's middle, so the
  // gap between them is about half the plot height (> a third of the image).
  EXPECT_GT(low_y - high_y, img.height / 3);
  // The marker is drawn in grey, and the background stays white in a corner.
  EXPECT_GT(img.Count(0, 0, img.width, img.height, 110, 110, 110), 50);
  EXPECT_TRUE(img.Is(img.width - 1, img.height - 1, 255, 255, 255));
}

// A rising line: its pixels get higher (smaller y) from left to right.
TEST_F(LineChartTest, RisingSeriesRisesOnTheImage) {
  LineChart chart;
  Series s{"", {}};
  for (int i = 0; i <= 100; ++i) s.points.push_back({i * 1e9, i / 100.0});
  chart.series.push_back(s);
  chart.x_format = FormatBytes;
  chart.y_format = FormatPercent;
  const std::string path = dir_ + "/rise.png";
  ASSERT_TRUE(WritePng(chart, path).ok());
  Image img;
  ASSERT_TRUE(ReadPng(path, &img));
  EXPECT_EQ(img.width, 960);
  EXPECT_EQ(img.height, 600);
  auto first_y = [&](int x) {
    for (int y = 0; y < img.height; ++y) {
      if (img.Near(x, y, 31, 119, 180)) return y;
    }
    return -1;
  };
  const int a = first_y(img.width / 4), b = first_y(img.width * 3 / 4);
  ASSERT_GE(a, 0);
  ASSERT_GE(b, 0);
  EXPECT_GT(a, b + 100);
}

TEST_F(LineChartTest, RejectsInvalidCharts) {
  LineChart empty;
  EXPECT_EQ(WritePng(empty, dir_ + "/a.png").code(), absl::StatusCode::kInvalidArgument);
  LineChart chart;
  chart.series.push_back({"x", {{0, 1}, {1, 2}}});
  EXPECT_EQ(WritePng(chart, dir_ + "/a.png", 10, 600).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(WritePng(chart, dir_ + "/a.png", 960, 100000).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(WritePng(chart, "").code(), absl::StatusCode::kInvalidArgument);
  LineChart bad_range = chart;
  bad_range.y_min = 1;
  bad_range.y_max = 1;
  EXPECT_EQ(WritePng(bad_range, dir_ + "/a.png").code(), absl::StatusCode::kInvalidArgument);
  LineChart nan_only;
  nan_only.series.push_back({"n", {{0, std::nan("")}}});
  EXPECT_EQ(WritePng(nan_only, dir_ + "/a.png").code(), absl::StatusCode::kInvalidArgument);
  // Nothing was written by the rejected calls.
  EXPECT_NE(access((dir_ + "/a.png").c_str(), F_OK), 0);
}

TEST_F(LineChartTest, UnwritablePathIsUnavailableAndNamesThePath) {
  LineChart chart;
  chart.series.push_back({"x", {{0, 1}, {1, 2}}});
  const std::string path = dir_ + "/no/such/dir/c.png";
  const absl::Status s = WritePng(chart, path);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(s.message().find(path), std::string::npos) << s;
}

TEST_F(LineChartTest, SinglePointAndDegenerateRangesStillDraw) {
  LineChart chart;
  chart.series.push_back({"one", {{3, 3}}});
  const std::string path = dir_ + "/one.png";
  ASSERT_TRUE(WritePng(chart, path, 320, 200).ok());
  Image img;
  ASSERT_TRUE(ReadPng(path, &img));
  EXPECT_GT(img.Count(0, 0, img.width, img.height, 31, 119, 180), 0);
}

// Text is anti-aliased: glyph edges blend ink into the background (grey levels), which a
// bitmap font never produces.
TEST_F(LineChartTest, TextIsAntiAliased) {
  LineChart chart;
  chart.title = "anti-aliased title text";
  chart.series.push_back({"x", {{0, 0}, {1, 1}}});
  const std::string path = dir_ + "/aa.png";
  ASSERT_TRUE(WritePng(chart, path).ok());
  Image img;
  ASSERT_TRUE(ReadPng(path, &img));
  // The title's band: above the plot area, across the middle of the image.
  int ink = 0, blended = 0;
  for (int y = 0; y < 40; ++y) {
    for (int x = img.width / 4; x < img.width * 3 / 4; ++x) {
      const int g = static_cast<int>(img.At(x, y) & 0xff);
      ink += g < 64;
      blended += g >= 64 && g < 192;
    }
  }
  EXPECT_GT(ink, 50);
  EXPECT_GT(blended, 50);
}

// A log x axis: capacities from 32 MiB to 8 GiB spread over the width (on a linear axis
// everything below 1 GiB would sit in the first eighth).
TEST_F(LineChartTest, LogAxisSpreadsPowersOfTwoEvenly) {
  constexpr double kMiB = 1024.0 * 1024;
  LineChart chart;
  chart.x_format = FormatBytes;
  chart.x_log = true;
  chart.y_min = 0;
  chart.y_max = 1;
  // A step: hit ratio 0 up to 256 MiB, 1 from 512 MiB on.
  chart.series.push_back(
      {"", {{0, 0}, {32 * kMiB, 0}, {256 * kMiB, 0}, {512 * kMiB, 1}, {8192 * kMiB, 1}}});
  chart.x_markers.push_back({8192 * kMiB, "8 GiB tier"});
  const std::string path = dir_ + "/log.png";
  ASSERT_TRUE(WritePng(chart, path).ok());
  Image img;
  ASSERT_TRUE(ReadPng(path, &img));
  // The rise from 256 to 512 MiB is the fourth octave of eight: the line crosses the middle
  // height near the middle of the image (on a linear axis: within 5% of the left edge).
  const int mid_y = img.height / 2;
  int first = -1;
  for (int x = 0; x < img.width && first < 0; ++x) {
    for (int y = mid_y - 30; y < mid_y + 30; ++y) {
      if (img.Near(x, y, 31, 119, 180)) {
        first = x;
        break;
      }
    }
  }
  ASSERT_GE(first, 0);
  EXPECT_GT(first, img.width / 3);
  EXPECT_LT(first, img.width * 2 / 3);
  // A point at x = 0 cannot be drawn on a log axis: skipped, not an error; with no point
  // at x > 0 at all (an empty tier's curve) the chart is drawn on a linear axis.
  LineChart zeros;
  zeros.x_log = true;
  zeros.series.push_back({"z", {{0, 1}, {-1, 2}}});
  ASSERT_TRUE(WritePng(zeros, dir_ + "/z.png").ok());
  Image z;
  ASSERT_TRUE(ReadPng(dir_ + "/z.png", &z));
  EXPECT_GT(z.Count(0, 0, z.width, z.height, 31, 119, 180), 0);
  LineChart one;
  one.x_log = true;
  one.series.push_back({"one", {{4096, 0.5}}});
  EXPECT_TRUE(WritePng(one, dir_ + "/one_log.png").ok());
}

TEST(TickFormatTest, Numbers) {
  EXPECT_EQ(FormatNumber(0), "0");
  EXPECT_EQ(FormatNumber(0.25), "0.25");
  EXPECT_EQ(FormatNumber(0.1 + 0.2), "0.3");
  EXPECT_EQ(FormatNumber(12), "12");
  EXPECT_EQ(FormatNumber(-4), "-4");
  EXPECT_EQ(FormatNumber(1500), "1.5k");
  EXPECT_EQ(FormatNumber(3e6), "3M");
  EXPECT_EQ(FormatNumber(2e9), "2G");
}

TEST(TickFormatTest, BytesAndPercent) {
  EXPECT_EQ(FormatBytes(0), "0 B");
  EXPECT_EQ(FormatBytes(512), "512 B");
  EXPECT_EQ(FormatBytes(1536), "1.5 KiB");
  EXPECT_EQ(FormatBytes(64.0 * 1024 * 1024), "64 MiB");
  EXPECT_EQ(FormatBytes(2.0 * 1024 * 1024 * 1024), "2 GiB");
  EXPECT_EQ(FormatBytes(1024.0 * 1024 * 1024 * 1024), "1 TiB");
  EXPECT_EQ(FormatPercent(0.25), "25%");
  EXPECT_EQ(FormatPercent(1), "100%");
}

}  // namespace
}  // namespace strata::plot
