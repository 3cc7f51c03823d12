// Xxh3Secrets::For (xxh3.h): the secrets libxxhash uses for a seed.
#include "strata/gpu/xxh3.h"

#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

namespace strata::gpu {

static_assert(kXxh3SecretBytes == XXH3_SECRET_DEFAULT_SIZE);

Xxh3Secrets Xxh3Secrets::For(uint64_t seed) {
  Xxh3Secrets s;
  s.seed = seed;
  XXH3_generateSecret_fromSeed(s.base, 0);  // seed 0: the default secret itself
  XXH3_generateSecret_fromSeed(s.seeded, seed);
  return s;
}

}  // namespace strata::gpu
