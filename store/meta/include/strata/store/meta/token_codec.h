// Token compression for BlobMeta records: three codecs of a token id sequence, and a
// chooser that picks the smallest for each sequence.
//
// Token ids are u32 below the vocabulary size (152064 for Qwen2, ~128K-256K for current
// models), so raw u32 wastes 14-15 bits per token. Text tokens are far from uniform: BPE
// vocabularies put frequent tokens at small ids, so a plain varint is often ~2 bytes per
// token, while a uniform stream is best served by fixed-width bit packing (18 bits for a
// 152064 vocabulary). Deltas help runs of nearby ids (byte-fallback tokens, digits,
// generated id ranges). None wins everywhere, so an encoder computes all three sizes
// (one pass each, no allocation) and stores the smallest, behind a one-byte codec tag.
// Measured bytes/token: store/meta/bench/meta_bench.cc (BM_TokenCodec).
//
// Payload of `n` tokens t[0..n-1] (n itself is stored by the caller):
//
//   codec          payload
//   -------------  --------------------------------------------------------------------
//   kVarint  (1)   LEB128(t[i]) for each i: 7 bits per byte, low bits first, high bit set
//                  on every byte but the last; 1..5 bytes per token
//   kDelta   (2)   LEB128(t[0]), then LEB128(ZigZag(t[i] - t[i-1])) for i >= 1, the
//                  difference taken mod 2^32 as an int32; ZigZag(d) = (d << 1) ^ (d >> 31)
//   kBitPacked (3) u8 w (1..32: the bit width of max(t), at least 1), then ceil(n*w/8) bytes:
//                  t[i] is bits [i*w, (i+1)*w) of the payload read as one little-endian
//                  bit string (bit k = bit k%8 of byte k/8); the unused high bits of the
//                  last byte are 0
//
// Decoding is strict, so every payload has one reading: a varint must be minimal (no
// trailing 0x80/0x00 groups, at most 5 bytes, the 5th <= 0x0F), the payload must be consumed
// exactly, 1 <= w <= 32, and padding bits 0. Anything else is DATA_LOSS. Decoding never
// reads past the payload, and allocates its `n` tokens only after checking that the payload
// can hold them — at most 8 tokens per payload byte (w >= 1), so a malformed count cannot
// make it allocate more than 32 times the payload's size.
//
// All functions are pure and thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"

#include "strata/radix/token_span.h"

namespace strata::store::meta {

// Values are stored in records: frozen.
enum class TokenCodec : uint8_t {
  kVarint = 1,
  kDelta = 2,
  kBitPacked = 3,
};

// "varint", "delta", "bitpacked"; "unknown(N)" for any other value.
std::string TokenCodecName(TokenCodec codec);

// True for the three enumerators above.
bool IsKnownTokenCodec(uint8_t value);

// The exact payload size of `tokens` under `codec`, without encoding.
size_t TokenPayloadSize(TokenCodec codec, absl::Span<const radix::TokenId> tokens);

// The codec with the smallest payload for `tokens` (ties go to the lower value).
TokenCodec SmallestTokenCodec(absl::Span<const radix::TokenId> tokens);

// Appends the payload of `tokens` under `codec` to *out.
void AppendTokenPayload(TokenCodec codec, absl::Span<const radix::TokenId> tokens,
                        std::string* out);

// Replaces *out with the `count` tokens that `payload` encodes under `codec`.
// DATA_LOSS (naming the codec and the problem) for an unknown codec or a payload that is
// not exactly the canonical encoding of `count` tokens; *out is then unspecified.
// REQUIRES: out != nullptr.
absl::Status DecodeTokenPayload(TokenCodec codec, uint32_t count, std::string_view payload,
                                std::vector<radix::TokenId>* out);

}  // namespace strata::store::meta
