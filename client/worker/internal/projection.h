// The reference model's projection kernels: the specification's dot product
// (reference_model.h) of hidden vectors with the columns of one layer's weight
// matrix. Private to client/worker.
//
// Each output is summed in the order r = 0 .. kRows-1 starting from +0, every
// product and sum rounded to float32 (no FMA: this target is built with
// -ffp-contract=off). The kernels vectorise across columns and tokens, which
// keeps that order per output, so their bits equal the scalar definition's.
#pragma once

#include <cstddef>
#include <cstdint>

namespace strata::worker::internal {

// Rows of every weight matrix: the model's residual width.
inline constexpr uint32_t kProjectionRows = 32;
// Every column count must be a multiple of this.
inline constexpr uint32_t kProjectionColumnAlign = 8;

// y[j] = dot(w[.][j], h) for j in [0, columns); row r of the matrix starts at
// w + r * stride. REQUIRES: columns % kProjectionColumnAlign == 0; h holds
// kProjectionRows floats.
void Project(const float* w, size_t stride, uint32_t columns, const float* h, float* y);

// Project for four hidden vectors at once (h + t * kProjectionRows, t < 4) into
// y + t * y_stride: each weight is loaded once for the four.
void ProjectFour(const float* w, size_t stride, uint32_t columns, const float* h, float* y,
                 size_t y_stride);

}  // namespace strata::worker::internal
