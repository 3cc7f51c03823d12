// Token lists, checksum arrays and byte ranges <-> strata.v1 fields, and the
// count check every adapter applies to a repeated field before using it.
//
// Token ids travel as one `bytes` field (MatchRequest.tokens,
// BeginPutRequest.tokens, BlobInfo.tokens), not as packed varints: coding
// 32K varints dominated a Match's CPU time on both sides. The layout:
//
//   offset   size  field
//   -------  ----  -------------------------------------------
//   0        4     token id 0, uint32 little-endian
//   4        4     token id 1, uint32 little-endian
//   ...
//   4(n-1)   4     token id n-1, uint32 little-endian
//
// n = length / 4; empty bytes = no tokens. strata only builds for
// little-endian hosts (static_assert in repeated_convert.cc), so the wire
// bytes are the in-memory TokenId array: TokensToProto is one memcpy, and
// TokensFromProto views the message's buffer in place when it is 4-byte
// aligned (a heap std::string always is) and copies it otherwise.
//
// Checksums are repeated fixed64, packed: contiguous in the message
// (google::protobuf::RepeatedField), so ChecksumsFromProto returns a view
// into the message, valid while the message lives and is not modified.
//
// Errors (all INVALID_ARGUMENT, message starting with "<field>: "):
//   CheckCount, ChecksumsFromProto
//                         more entries than the limit: "<field>: N entries
//                         exceed the limit of M"
//   TokensFromProto       a length that is not a multiple of 4: "<field>: N
//                         bytes is not a whole number of 4-byte token ids";
//                         more than kMaxTokensPerRequest tokens: "<field>: N
//                         entries exceed the limit of M" (N in tokens)
//   ByteRangeFromProto    length 0, or offset + length past 2^64 - 1
//
// Pure functions; thread-safe (on distinct messages, or on one message that no
// thread modifies). A TokenView is a value: not synchronized, safe for
// concurrent const use.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

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

// Bytes per token id on the wire.
inline constexpr size_t kTokenIdBytes = sizeof(radix::TokenId);
static_assert(kTokenIdBytes == 4, "the wire carries token ids as 4-byte little-endian words");

// The token ids of one wire field: a view of the message's bytes when they are
// 4-byte aligned, else a view of a copy this object owns. Either way span() is
// valid while this TokenView lives and, for a view in place, while the bytes it
// was made from live unmodified (for a message: the message lives and no one
// sets the field). Move-only, so no copy can alias another's buffer; moving it
// keeps span() valid (a moved std::vector keeps its buffer) and leaves the
// source empty.
class TokenView {
 public:
  TokenView() = default;
  TokenView(TokenView&& other) noexcept;
  TokenView& operator=(TokenView&& other) noexcept;
  TokenView(const TokenView&) = delete;
  TokenView& operator=(const TokenView&) = delete;
  ~TokenView() = default;

  // The ids. Not callable on a temporary (its copy would die with it).
  absl::Span<const radix::TokenId> span() const& { return span_; }
  absl::Span<const radix::TokenId> span() const&& = delete;
  size_t size() const { return span_.size(); }
  bool empty() const { return span_.empty(); }
  // True when the bytes were misaligned and span() views this object's copy.
  bool copied() const { return !copy_.empty(); }

 private:
  friend absl::StatusOr<TokenView> TokensFromProto(std::string_view bytes, std::string_view field);

  std::vector<radix::TokenId> copy_;  // empty unless the bytes were misaligned
  absl::Span<const radix::TokenId> span_;
};

// The token ids in `bytes` (a tokens field, layout above); at most
// kMaxTokensPerRequest of them. `bytes` may be any string view: a message's
// field (`request.tokens()`) or a slice of one.
absl::StatusOr<TokenView> TokensFromProto(std::string_view bytes, std::string_view field);

// Replaces *out with `tokens` as little-endian uint32s: one memcpy.
// REQUIRES: out != nullptr.
void TokensToProto(absl::Span<const radix::TokenId> tokens, std::string* out);

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
