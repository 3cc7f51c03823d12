// Token lists, checksum arrays and byte ranges <-> strata.v1 fields, and the
// count check every adapter applies to a repeated field before using it.
//
// Repeated scalar fields are contiguous (google::protobuf::RepeatedField), so
// the *FromProto functions return views into the message: no copy. A view is
// valid while the message lives and is not modified.
//
// Errors (all INVALID_ARGUMENT, message starting with "<field>: "):
//   CheckCount, TokensFromProto, ChecksumsFromProto
//                         more entries than the limit: "<field>: N entries
//                         exceed the limit of M"
//   ByteRangeFromProto    length 0, or offset + length past 2^64 - 1
//
// Pure functions; thread-safe (on distinct messages, or on one message that no
// thread modifies).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"

#include "google/protobuf/repeated_field.h"
#include "strata/proto/protocol_internal.h"
#include "strata/radix/kv_layout.h"
#include "strata/radix/token_span.h"

namespace strata::proto {

// OK when count <= limit, else INVALID_ARGUMENT (above).
absl::Status CheckCount(std::string_view field, size_t count, size_t limit);

// A view of the token ids; at most kMaxTokensPerRequest of them.
absl::StatusOr<absl::Span<const radix::TokenId>> TokensFromProto(
    const google::protobuf::RepeatedField<uint32_t>& tokens, std::string_view field);

// Replaces *out with `tokens`. REQUIRES: out != nullptr.
void TokensToProto(absl::Span<const radix::TokenId> tokens,
                   google::protobuf::RepeatedField<uint32_t>* out);

// A view of the checksums; at most `limit` of them (kMaxChunksPerBlob for
// BeginPut).
absl::StatusOr<absl::Span<const uint64_t>> ChecksumsFromProto(
    const google::protobuf::RepeatedField<uint64_t>& checksums, std::string_view field,
    size_t limit);

// Replaces *out with `checksums`. REQUIRES: out != nullptr.
void ChecksumsToProto(absl::Span<const uint64_t> checksums,
                      google::protobuf::RepeatedField<uint64_t>* out);

// REQUIRES: out != nullptr.
void ToProto(const radix::ByteRange& range, v1::ByteRange* out);

// The range, or INVALID_ARGUMENT (above).
absl::StatusOr<radix::ByteRange> ByteRangeFromProto(const v1::ByteRange& range,
                                                    std::string_view field);

}  // namespace strata::proto
