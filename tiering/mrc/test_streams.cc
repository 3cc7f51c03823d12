// Access streams for tiering/mrc's tests and benchmark (test_streams.h).
#include "tiering/mrc/test_streams.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <random>

namespace strata::tiering::mrc::testing {

uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

std::vector<Access> BlockStream(const sim::ReplayTrace& trace) {
  std::vector<Access> stream;
  for (const sim::ReplayRequest& request : trace.requests) {
    for (size_t i = 0; i < request.blocks.size(); ++i) {
      const uint64_t tokens =
          i + 1 == request.blocks.size() ? request.last_block_tokens : trace.block_tokens;
      stream.push_back({Mix(request.blocks[i]), tokens * kKvBytesPerToken});
    }
  }
  return stream;
}

std::vector<Access> ZipfStream(uint64_t seed, uint64_t keys, uint64_t accesses, double alpha) {
  std::mt19937_64 rng(seed);
  std::vector<double> cdf(keys);
  double sum = 0;
  for (uint64_t k = 0; k < keys; ++k) cdf[k] = sum += 1.0 / std::pow(k + 1.0, alpha);
  std::vector<uint64_t> sizes(keys);
  for (uint64_t& s : sizes) s = 1024 * (1 + rng() % 64);
  std::uniform_real_distribution<double> u(0, sum);
  std::vector<Access> stream;
  stream.reserve(accesses);
  for (uint64_t i = 0; i < accesses; ++i) {
    const uint64_t k = std::lower_bound(cdf.begin(), cdf.end(), u(rng)) - cdf.begin();
    stream.push_back({Mix(k + (seed << 40)), sizes[k]});
  }
  return stream;
}

std::string MooncakePath(const char* compiled_in) {
  const char* env = std::getenv("STRATA_MOONCAKE_TRACE");
  return env != nullptr && *env != '\0' ? env : compiled_in;
}

}  // namespace strata::tiering::mrc::testing
