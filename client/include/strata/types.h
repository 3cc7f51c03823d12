// The value types of libstrata's public API (client.h): namespaces, keys, match segments,
// memory descriptors, and the records the node answers with.
//
// Vocabulary (docs/api.md, "Conventions"): a Namespace is (tenant, model, KV layout); a
// page is `layout.page_tokens` tokens; a blob holds the KV bytes of pages [a, b) of one
// token sequence, under the key h_b. Sequence pages count from the start of the token
// sequence, blob pages from a blob's first page. The radix types (radix/include/) are pure
// C++ and Abseil and are used here as they are: KvLayout, Namespace, BlobKey, PrefixHash,
// TokenId.
//
// Byte layout of what Read delivers (radix::BlobLayout, drawn in radix/kv_layout.h): the
// bytes of n pages are layer-major, each layer's n pages contiguous. With
// L = layout.BytesPerLayerPage():
//
//   offset            length   content
//   ----------------  -------  ----------------------------------------
//   (l * n + p) * L   L        layer l, page p      (0 <= l < layers, 0 <= p < n)
//   total             layers * n * L  =  n * layout.BytesPerPage()
//
// All types are plain values: copyable, no hidden state, safe to read from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"

#include "strata/gpu/memory_kind.h"
#include "strata/radix/blob_key.h"
#include "strata/radix/kv_layout.h"
#include "strata/radix/namespace.h"
#include "strata/radix/prefix_hash.h"
#include "strata/radix/token_span.h"

namespace strata {

using radix::BlobKey;
using radix::DType;
using radix::KvFormat;
using radix::KvLayout;
using radix::Namespace;
using radix::PrefixHash;
using radix::TokenId;

// Where a blob's bytes (or only its tokens) live. Same numbers as strata.v1.Tier.
enum class Tier : int {
  kHbm = 1,   // GPU memory of the node (not served yet)
  kDram = 2,  // the node's DRAM arena
  kSsd = 3,   // the node's SSD tier (not served yet)
  kText = 4,  // KV bytes gone, tokens kept: rebuildable
};

// "hbm", "dram", "ssd", "text"; "unknown" for a value outside the enum.
std::string_view TierName(Tier tier);

// Matched pages [seq_page_begin, seq_page_begin + page_count) of a query are pages
// [blob_page_offset, blob_page_offset + page_count) of `blob`, a blob of `blob_pages` pages.
struct Segment {
  BlobKey blob;
  uint32_t blob_page_offset = 0;
  uint32_t page_count = 0;
  uint32_t seq_page_begin = 0;
  uint32_t blob_pages = 0;
  Tier tier = Tier::kDram;  // the fastest tier holding the bytes

  friend bool operator==(const Segment&, const Segment&) = default;
};

// The longest cached prefix of a query: `segments` cover sequence pages [0, matched_pages)
// in order, without gaps. `truncated`: the node cut the answer short (kMaxMatchSegments);
// more pages may be cached.
struct MatchResult {
  uint32_t matched_pages = 0;
  std::vector<Segment> segments;
  bool truncated = false;
};

// Pages [first_page, first_page + num_pages) of every layer of `blob` (blob pages).
struct ReadRange {
  BlobKey blob;
  uint32_t first_page = 0;
  uint32_t num_pages = 0;

  // The pages a match segment names.
  static ReadRange FromSegment(const Segment& segment) {
    return ReadRange{segment.blob, segment.blob_page_offset, segment.page_count};
  }
  friend bool operator==(const ReadRange&, const ReadRange&) = default;
};

using gpu::MemoryKind;

// Memory the caller lends to one call: Read writes into it, Write reads from it. The
// library never frees it, and never writes to a Write source.
//
//   kind          what the library does
//   ------------  -------------------------------------------------------------
//   kHost         ordinary host memory: bytes move straight in or out
//   kPinnedHost   page-locked host memory: as kHost
//   kDevice       CUDA device memory of `device`: UNIMPLEMENTED for now (the
//                 staged and GPUDirect paths arrive with the GPU issue; this
//                 type will not change)
struct MemoryDescriptor {
  void* ptr = nullptr;
  size_t bytes = 0;
  MemoryKind kind = MemoryKind::kHost;
  int device = 0;  // CUDA device ordinal; ignored for host memory

  static MemoryDescriptor Host(void* ptr, size_t bytes) {
    return MemoryDescriptor{ptr, bytes, MemoryKind::kHost, 0};
  }
  // A read-only source (Write): the library never writes through it.
  static MemoryDescriptor Host(const void* ptr, size_t bytes) {
    return MemoryDescriptor{const_cast<void*>(ptr), bytes, MemoryKind::kHost, 0};
  }
  static MemoryDescriptor CudaDevice(void* ptr, size_t bytes, int device) {
    return MemoryDescriptor{ptr, bytes, MemoryKind::kDevice, device};
  }
};

// OK when `memory` can take part in a transfer of exactly `expected_bytes` bytes:
//   INVALID_ARGUMENT  null pointer, bytes != expected_bytes, negative device, or a kind
//                     outside the enum
//   UNIMPLEMENTED     kDevice (CUDA device memory is not served yet)
// `what` names the argument in the message ("destinations[2]").
absl::Status CheckMemoryDescriptor(const MemoryDescriptor& memory, uint64_t expected_bytes,
                                   std::string_view what);

// Bytes Read delivers for `num_pages` pages of every layer: num_pages * BytesPerPage().
// REQUIRES: layout.Validate().ok().
inline uint64_t PagesBytes(const KvLayout& layout, uint32_t num_pages) {
  return uint64_t{num_pages} * layout.BytesPerPage();
}

// Where a new blob continues from: the first `pages` pages of its sequence, which end
// inside or at the end of blob `key` (for a parent of pages [a_p, b_p): a_p < pages <= b_p).
struct Parent {
  BlobKey key;
  uint32_t pages = 0;
  friend bool operator==(const Parent&, const Parent&) = default;
};

struct WriteResult {
  BlobKey key;
  // The key was already committed or being put by another writer: nothing was sent.
  bool existed = false;
  // Pages that entered the node's index (CommitPut); fewer than the blob's when other blobs
  // cached some first; 0 when existed.
  uint32_t indexed_pages = 0;
};

struct DeleteResult {
  uint64_t pages_removed = 0;   // index pages removed: the blob's and those cached below
  uint64_t blobs_unlinked = 0;  // blobs that left the index
};

// The node's record of one blob (Stat, List).
struct BlobInfo {
  BlobKey key;
  std::string tenant;
  std::string model;
  KvLayout layout;
  PrefixHash namespace_hash;     // h_0
  std::optional<Parent> parent;  // absent for a blob from sequence page 0
  PrefixHash start_hash;         // h_a
  uint32_t first_page = 0;       // a
  uint32_t pages = 0;            // b - a
  uint64_t bytes = 0;
  uint64_t checksum = 0;       // XXH3-64 of the chunk checksums (docs/api.md, Stat)
  std::vector<Tier> tiers;     // fastest first
  uint32_t pages_indexed = 0;  // pages still in the index
  uint32_t leases = 0;         // read leases holding it
  bool pinned = false;
  absl::Time created;  // node wall clock, for display
  absl::Time last_access;
  uint64_t hits = 0;
  std::vector<TokenId> tokens;  // own tokens; only when asked for (Stat include_tokens)
};

// Which blobs List shows: those of `ns`, or of the namespace with hash `namespace_hash`,
// or (neither) all. Setting both is INVALID_ARGUMENT.
struct ListOptions {
  std::optional<Namespace> ns;
  std::optional<PrefixHash> namespace_hash;
  std::string page_token;  // empty: from the first key; else a previous next_page_token
  uint32_t limit = 0;      // 0: the node's default (100); clamped to 1000
};

struct ListResult {
  std::vector<BlobInfo> blobs;  // ascending key order, without tokens
  std::string next_page_token;  // empty on the last page
};

struct TierInfo {
  Tier tier = Tier::kDram;
  uint64_t capacity_bytes = 0;
  uint64_t used_bytes = 0;
  uint64_t free_bytes = 0;
  uint64_t blobs = 0;  // live extents
  uint64_t hits = 0;
  uint64_t misses = 0;
  uint64_t evictions = 0;
  uint64_t promotions = 0;
  uint64_t demotions = 0;
};

struct IndexInfo {
  uint64_t roots = 0;
  uint64_t nodes = 0;
  uint64_t leaves = 0;
  uint64_t pages = 0;
  uint64_t token_bytes = 0;
  uint64_t index_bytes = 0;
  uint64_t pinned_nodes = 0;
};

struct EngineInfo {
  uint64_t namespaces = 0;
  uint64_t blobs = 0;
  uint64_t unlinked_blobs = 0;
  uint64_t token_only_blobs = 0;
  uint64_t pending_puts = 0;
  uint64_t leases = 0;
  uint64_t matches = 0;
  uint64_t matched_pages = 0;
  uint64_t queried_pages = 0;
  bool draining = false;
};

// Admin.Tiers: per tier (fastest first), the index and the engine.
struct TiersInfo {
  std::vector<TierInfo> tiers;
  IndexInfo index;
  EngineInfo engine;
};

struct EvictResult {
  uint64_t bytes_freed = 0;
  uint64_t pages_evicted = 0;
  uint64_t blobs_unlinked = 0;
};

struct HealthInfo {
  bool draining = false;   // Admin.Drain was called: reads served, writes refused
  std::string version;     // the node's strata version
  std::string data_plane;  // "host:port" of the node's UCX listener
  absl::Duration uptime;
};

}  // namespace strata
