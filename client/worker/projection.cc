#include "internal/projection.h"

#include <cstring>

#include "glog/logging.h"

namespace strata::worker::internal {
namespace {

constexpr uint32_t kRows = kProjectionRows;

// Four floats in one SIMD register (GCC/clang vector extension): element-wise
// IEEE operations, lowered to SSE, NEON or scalar code, the same bits either
// way.
using Vec4 = float __attribute__((vector_size(16)));

Vec4 Load(const float* p) {
  Vec4 v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

Vec4 Broadcast(float x) { return Vec4{x, x, x, x}; }

// One token, columns [j0, j0 + 4 * kVectors). Eight accumulators in flight
// hide the add latency; fewer would be bound by it.
template <uint32_t kVectors>
void ProjectBlock(const float* w, size_t stride, uint32_t j0, const float* h, float* y) {
  Vec4 acc[kVectors] = {};
  const float* row = w + j0;
  for (uint32_t r = 0; r < kRows; ++r, row += stride) {
    const Vec4 hr = Broadcast(h[r]);
#pragma GCC unroll 8
    for (uint32_t v = 0; v < kVectors; ++v) acc[v] = acc[v] + Load(row + 4 * v) * hr;
  }
  std::memcpy(y + j0, acc, sizeof(acc));
}

}  // namespace

void Project(const float* w, size_t stride, uint32_t columns, const float* h, float* y) {
  DCHECK_EQ(columns % kProjectionColumnAlign, 0u);
  uint32_t j0 = 0;
  for (; j0 + 32 <= columns; j0 += 32) ProjectBlock<8>(w, stride, j0, h, y);
  for (; j0 < columns; j0 += 8) ProjectBlock<2>(w, stride, j0, h, y);
}

void ProjectFour(const float* w, size_t stride, uint32_t columns, const float* h, float* y,
                 size_t y_stride) {
  DCHECK_EQ(columns % kProjectionColumnAlign, 0u);
  // The four tokens' hidden values, broadcast once: hb[r][t].
  Vec4 hb[kRows][4];
  for (uint32_t r = 0; r < kRows; ++r) {
    for (uint32_t t = 0; t < 4; ++t) hb[r][t] = Broadcast(h[t * kRows + r]);
  }
  // 8 columns x 4 tokens = 8 accumulators; each pair of weight loads feeds
  // eight multiply-adds, so the weights stream from L2 at a quarter of the
  // one-token rate.
  for (uint32_t j0 = 0; j0 < columns; j0 += 8) {
    Vec4 acc[4][2] = {};
    const float* row = w + j0;
    for (uint32_t r = 0; r < kRows; ++r, row += stride) {
      const Vec4 w0 = Load(row);
      const Vec4 w1 = Load(row + 4);
#pragma GCC unroll 4
      for (uint32_t t = 0; t < 4; ++t) {
        acc[t][0] = acc[t][0] + w0 * hb[r][t];
        acc[t][1] = acc[t][1] + w1 * hb[r][t];
      }
    }
    for (uint32_t t = 0; t < 4; ++t) std::memcpy(y + t * y_stride + j0, acc[t], sizeof(acc[t]));
  }
}

}  // namespace strata::worker::internal
