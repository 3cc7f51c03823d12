// What both data planes (UCX: data_plane_*.cc; same host: same_host_server.cc) make of the
// wire's READ and PUT messages: engine requests, checked the same way. Private to
// store/dataplane. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"

#include "strata/radix/blob_key.h"
#include "strata/radix/namespace.h"
#include "strata/store/core/node_engine_types.h"
#include "strata/store/transport/wire.h"

namespace strata::store::dataplane::internal {

radix::BlobKey KeyOf(const transport::wire::BlobKeyBits& bits);
transport::wire::BlobKeyBits BitsOf(const radix::BlobKey& key);

// The namespace of a READ or PUT; INVALID_ARGUMENT "<what>: <why>" when it does not decode.
absl::StatusOr<radix::Namespace> NamespaceOf(absl::Span<const uint8_t> encoding, const char* what);

// A READ's ranges as the engine's, after checking that they cover at most
// wire::kMaxReadChunks chunks (INVALID_ARGUMENT) — bounded before anything is leased.
absl::StatusOr<std::vector<core::ReadRange>> ReadRangesOf(
    absl::Span<const transport::wire::ReadRangeBits> ranges);

// A PUT's BeginPut request. Its spans point into `payload`, which must outlive it.
core::PutRequest PutRequestOf(const transport::wire::PutHeader& header,
                              const transport::wire::PutPayload& payload);

}  // namespace strata::store::dataplane::internal
