// BlobKey and PrefixHash <-> their strata.v1 messages (two fixed64 words,
// hi and lo, exactly as radix::PrefixHash holds them).
//
// Any 128-bit value is a valid PrefixHash. A BlobKey of all zeros is reserved
// for "unset": an unset BlobKey field reads as zero on the wire, and
// BlobKeyFromProto rejects it with INVALID_ARGUMENT "<field>: missing". (A
// real key is zero with probability 2^-128.)
//
// Pure functions; thread-safe.
#pragma once

#include <string_view>

#include "absl/status/statusor.h"

#include "strata/proto/protocol_internal.h"
#include "strata/radix/blob_key.h"
#include "strata/radix/prefix_hash.h"

namespace strata::proto {

// REQUIRES: out != nullptr. Overwrites both words of *out.
void ToProto(const radix::PrefixHash& hash, v1::PrefixHash* out);
void ToProto(const radix::BlobKey& key, v1::BlobKey* out);

// Never fails.
radix::PrefixHash PrefixHashFromProto(const v1::PrefixHash& hash);

// The key as it is, zero included (for a key the caller has no reason to check: a node's
// answer to the client, a test's expectation). Never fails.
radix::BlobKey BlobKeyOf(const v1::BlobKey& key);

// The key, or INVALID_ARGUMENT "<field>: missing (...)" when it is zero
// (unset).
absl::StatusOr<radix::BlobKey> BlobKeyFromProto(const v1::BlobKey& key, std::string_view field);

}  // namespace strata::proto
