// The unchecked core of EncodeElements (dtype_encoding.h), for the reference
// model's hot loop, which has validated its layout once. Private to
// client/worker.
#pragma once

#include <cstddef>

#include "strata/radix/kv_layout.h"

namespace strata::worker::internal {

// Encodes values[0, n) as `dtype` to out[0, n * DTypeSize(dtype)).
// REQUIRES: dtype is a DType enumerator; out holds n * DTypeSize(dtype) bytes.
void EncodeRow(radix::DType dtype, const float* values, size_t n, std::byte* out);

}  // namespace strata::worker::internal
