// Deterministic namespaces and blob records for store/meta's tests and test child process.
// Pure functions of their arguments; thread-safe.
#pragma once

#include <cstdint>

#include "strata/radix/namespace.h"
#include "strata/radix/prefix_hash.h"
#include "strata/store/meta/blob_meta.h"

namespace strata::store::meta {

// A valid namespace "tenant-<i>", model "org/model-<i>", 4 layers, 16-token pages.
radix::Namespace TestNamespace(int i);

// A blob record of `ns_hash` whose every field derives from `seed`: 1..4 pages of 16 tokens
// (ids < 152064), 4 checksums per page, a parent unless seed % 3 == 0, an SSD extent when
// seed % 2 == 0, times with nanosecond parts. Its key is a hash of the seed (not a real
// prefix hash: the store does not check keys against tokens).
BlobMeta TestBlob(uint64_t seed, const radix::PrefixHash& ns_hash);

// The key TestBlob(seed, ...) has.
radix::BlobKey TestBlobKey(uint64_t seed);

}  // namespace strata::store::meta
