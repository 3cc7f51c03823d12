// The durable encoding of a BlobMeta (blob_meta.h): a versioned binary record with a
// trailing XXH3-64, so a torn or corrupted value is detected when it is read back.
//
// Format version 1. All integers little-endian, no padding; hashes as u64 hi then u64 lo.
//
//   offset  size  field
//   ------  ----  -------------------------------------------------------------------------
//   0       1     u8  format version = 1
//   1       1     u8  flags: bit 0 has parent, bit 1 in_dram, bit 2 has ssd, bit 3 pinned,
//                     bit 4 segment_start (since 2026-12-06; a build from before reads such
//                     a record as DATA_LOSS); bits 5-7 are 0
//   2       16    key (h_b)
//   18      16    namespace_hash (h_0)
//   34      16    start_hash (h_a)
//   50      4     u32 first_page
//   54      4     u32 pages
//   58      8     u64 bytes
//   66      8     u64 generation
//   74      8     i64 created, ns since the Unix epoch (INT64_MIN = InfinitePast,
//                     INT64_MAX = InfiniteFuture)
//   82      8     i64 last_access, same encoding
//   90      8     u64 hits
//   98      20    parent (only if flag bit 0): key (16) + u32 pages
//   ..      16    ssd (only if flag bit 2): u64 offset + u64 length
//   ..      4     u32 N = number of tokens
//   ..      1     u8  token codec (token_codec.h)
//   ..      4     u32 P = token payload bytes
//   ..      P     token payload (token_codec.h)
//   ..      4     u32 C = number of chunk checksums
//   ..      8*C   u64 checksums[0..C-1]
//   end-8   8     u64 XXH3_64bits_withSeed(every byte before it, kBlobMetaSeed)
//
//   size = 98 + 20*(has parent) + 16*(has ssd) + 9 + P + 4 + 8*C + 8
//
// Times keep nanosecond precision (sub-nanosecond parts are floored); a finite time outside
// the i64-nanosecond range (years 1677..2262) saturates to the infinite one on its side.
// The encoding does not check BlobMeta's own invariants (tokens = pages * page_tokens,
// C = num_layers * pages): it round-trips any value, including 0 tokens or 0 checksums.
//
// A new format gets a new version byte; a decoder reads every version it knows.
//
// Errors: DecodeBlobMeta returns DATA_LOSS "blob meta <key hex>: <what>" for anything but
// the exact encoding of a value: too short, checksum mismatch (torn or corrupt), unknown
// version or flag bits, a length past the end, an unknown token codec or malformed token
// payload (token_codec.h), bytes left over, or a key other than `expected_key`. The key
// named is `expected_key` when given, else the record's own key once its checksum holds,
// else "?". It never crashes or over-allocates on malformed input: every count is checked
// against the bytes that remain before anything is allocated.
//
// All functions are pure and thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

#include "strata/radix/blob_key.h"
#include "strata/store/meta/blob_meta.h"

namespace strata::store::meta {

inline constexpr uint8_t kBlobMetaFormatVersion = 1;
// The seed of the trailing XXH3-64: the ASCII bytes "strata.m" read as a big-endian u64.
inline constexpr uint64_t kBlobMetaSeed = 0x7374726174612E6D;
// Size of a record with no parent, no ssd extent, no tokens and no checksums.
inline constexpr size_t kBlobMetaMinSize = 98 + 9 + 4 + 8;

// Appends the encoding of `meta` to *out, with the token codec that is smallest for
// meta.tokens (SmallestTokenCodec). REQUIRES: out != nullptr; fewer than 2^32 tokens and
// checksums (CHECKed).
void AppendBlobMeta(const BlobMeta& meta, std::string* out);
std::string EncodeBlobMeta(const BlobMeta& meta);

// The BlobMeta `bytes` encodes; DATA_LOSS as described above.
absl::StatusOr<BlobMeta> DecodeBlobMeta(std::string_view bytes,
                                        const std::optional<radix::BlobKey>& expected_key = {});

}  // namespace strata::store::meta
