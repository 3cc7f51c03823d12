// Small builders of strata.v1 requests for tests that speak the wire to a node
// (strata::testing_node; test-only): a tiny KV layout (2 layers x 1 KV head x 4 dims, fp16,
// 4-token pages: 32 bytes a page), token runs, and a BeginPut that is well formed for them.
//
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/types/span.h"

#include "strata/proto/protocol_internal.h"
#include "strata/radix/blob_key.h"
#include "strata/radix/namespace.h"

namespace strata::testing {

radix::KvLayout TinyLayout(uint32_t num_layers = 2);

// A valid namespace of TinyLayout(num_layers).
radix::Namespace TinyNamespace(const std::string& tenant, const std::string& model = "org/tiny",
                               uint32_t num_layers = 2);

v1::Namespace ToWire(const radix::Namespace& ns);
v1::BlobKey ToWire(const radix::BlobKey& key);
radix::BlobKey FromWire(const v1::BlobKey& key);

// `count` tokens starting at `first`, counting up.
std::vector<uint32_t> TokenRun(uint32_t first, uint32_t count);

// A BeginPut of `tokens` (whole pages) in `ns`: the right byte size and checksum count
// (the checksums are `checksums` if given, else zeros), no parent, no key.
v1::BeginPutRequest BeginPutFor(const radix::Namespace& ns, absl::Span<const uint32_t> tokens,
                                absl::Span<const uint64_t> checksums = {});

// The key the node computes for a blob of `tokens` from sequence page 0 of `ns`.
radix::BlobKey KeyFromRoot(const radix::Namespace& ns, absl::Span<const uint32_t> tokens);

}  // namespace strata::testing
