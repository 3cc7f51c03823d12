#include "strata/plot/line_chart.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <png.h>
#include <unistd.h>

#include "gtest/gtest.h"

namespace strata::plot {
namespace {

struct Image {
  int width = 0, height = 0;
  std::vector<uint8_t> rgb;
  bool Is(int x, int y, uint8_t r, uint8_t g, uint8_t b) const {
    const size_t i = (static_cast<size_t>(y) * width + x) * 3;
    return rgb[i] == r && rgb[i + 1] == g && rgb[i + 2] == b;
  }
};

// Reads a PNG back through libpng's simplified API.
bool ReadPng(const std::string& path, Image* out) {
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_file(&image, path.c_str())) return false;
  image.format = PNG_FORMAT_RGB;
  out->width = image.width;
  out->height = image.height;
  out->rgb.resize(PNG_IMAGE_SIZE(image));
  const bool ok = png_image_finish_read(&image, nullptr, out->rgb.data(), 0, nullptr) != 0;
  png_image_free(&image);
  return ok;
}

class LineChartTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/plot_test_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::system(("rm -rf " + dir_).c_str()); }
  std::string dir_;
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
  EXPECT_EQ(png_sig_cmp(sig, 0, 8), 0);

  Image img;
  ASSERT_TRUE(ReadPng(path, &img));
  EXPECT_EQ(img.width, 800);
  EXPECT_EQ(img.height, 500);
  // A column a third of the way across (away from the legend and the marker).
  const int x = img.width / 3;
  int low_y = -1, high_y = -1;
  for (int y = 0; y < img.height; ++y) {
    if (img.Is(x, y, 31, 119, 180)) low_y = y;
    if (img.Is(x, y, 255, 127, 14) && high_y < 0) high_y = y;
  }
  ASSERT_GE(low_y, 0);
  ASSERT_GE(high_y, 0);
  EXPECT_GT(low_y, high_y);
  // y = 0.25 and y = 0.75 are symmetric about the plot area's middle, so the
  // gap between them is about half the plot height (> a third of the image).
  EXPECT_GT(low_y - high_y, img.height / 3);
  // The marker is drawn in grey, and the background stays white in a corner.
  int grey = 0;
  for (int y = 0; y < img.height; ++y) {
    for (int xx = 0; xx < img.width; ++xx) grey += img.Is(xx, y, 110, 110, 110);
  }
  EXPECT_GT(grey, 50);
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
      if (img.Is(x, y, 31, 119, 180)) return y;
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
  int blue = 0;
  for (int y = 0; y < img.height; ++y) {
    for (int x = 0; x < img.width; ++x) blue += img.Is(x, y, 31, 119, 180);
  }
  EXPECT_GT(blue, 0);
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
