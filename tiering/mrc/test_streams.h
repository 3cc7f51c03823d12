// Access streams shared by tiering/mrc's accuracy test and benchmark: the Mooncake trace's
// block stream, any ReplayTrace's, and a seeded Zipf stream with per-key sizes. Not part of
// the module's library (strata_tiering_mrc_testing). Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "strata/tiering/sim/replay_trace.h"

namespace strata::tiering::mrc::testing {

inline constexpr uint64_t kKvBytesPerToken = 128 * 1024;  // an 8B-class model, fp16

// splitmix64 (with its increment): a well-mixed key per id.
uint64_t Mix(uint64_t x);

struct Access {
  uint64_t key;
  uint64_t bytes;
};

// One access per block of every request, sized by its tokens (kKvBytesPerToken each).
std::vector<Access> BlockStream(const sim::ReplayTrace& trace);

// Zipf(alpha) over `keys` keys, each with its own size in [1, 64] KiB.
std::vector<Access> ZipfStream(uint64_t seed, uint64_t keys, uint64_t accesses, double alpha);

// The Mooncake trace's path: $STRATA_MOONCAKE_TRACE, else `compiled_in`.
std::string MooncakePath(const char* compiled_in);

}  // namespace strata::tiering::mrc::testing
