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
  kHbm = 1,   // GPU memory of the node (no node has one yet)
  kDram = 2,  // the node's DRAM arena: reads are served from it
  kSsd = 3,   // the node's SSD tier: a read promotes the blob into DRAM first
  kText = 4,  // KV bytes gone, tokens kept: not readable, rebuildable (RequestRebuild)
};

// "hbm", "dram", "ssd", "text"; "unknown" for a value outside the enum.
std::string_view TierName(Tier tier);

// Where a Match stands in a request's life, as the caller knows it. Only the node's
// statistics depend on it (hits and misses by phase, Client::Tiers): every phase gets the
// same answer. Same numbers as strata.v1.Phase.
enum class LookupPhase : int {
  kUnspecified = 0,  // not said: the node infers it
  kPrefill = 1,      // the first lookup of a request: its prompt
  kMidfill = 2,      // a later chunk of a long prefill (chunked prefill)
  kDecode = 3,       // a lookup while the request decodes (e.g. a new turn's prefix)
};

// "unspecified", "prefill", "midfill", "decode"; "unknown" for a value outside the enum.
std::string_view LookupPhaseName(LookupPhase phase);

// Matched pages [seq_page_begin, seq_page_begin + page_count) of a query are pages
// [blob_page_offset, blob_page_offset + page_count) of `blob`, a blob of `blob_pages` pages.
struct Segment {
  BlobKey blob;
  uint32_t blob_page_offset = 0;
  uint32_t page_count = 0;
  uint32_t seq_page_begin = 0;
  uint32_t blob_pages = 0;
  // The fastest tier holding the bytes. kText: the node dropped them and kept the tokens;
  // the pages are known but cannot be read (a Read naming them is NOT_FOUND).
  Tier tier = Tier::kDram;
  // kText segments only: the tokens of the matched pages (page_count * page_tokens ids),
  // for recomputing their KV; empty for every other tier.
  std::vector<TokenId> tokens;

  friend bool operator==(const Segment&, const Segment&) = default;
};

// The longest cached prefix of a query: `segments` cover sequence pages [0, matched_pages)
// in order, without gaps. `truncated`: the node cut the answer short (kMaxMatchSegments, or
// kMaxMatchTextTokens of TEXT tokens); more pages may be cached.
//
// matched_pages counts TEXT pages too (their tokens are cached, their KV bytes are not).
// What can be read is the prefix before the first TEXT segment: pass ReadablePages() to
// Client::Read, never matched_pages, when a match may hold TEXT segments:
//
//   auto m = client->Match(ns, tokens);
//   client->Read(ns, m->segments, m->ReadablePages(), dest);   // pages [0, ReadablePages())
//   for (const Segment& s : m->TextSegments()) ...             // recompute, or RequestRebuild
struct MatchResult {
  uint32_t matched_pages = 0;
  std::vector<Segment> segments;
  bool truncated = false;

  // Pages [0, n) whose bytes a byte tier holds: matched_pages up to the first kText
  // segment (all of them when there is none).
  uint32_t ReadablePages() const;
  // The kText segments, in order (with their tokens).
  std::vector<Segment> TextSegments() const;
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

// One byte tier (HBM, DRAM, SSD): capacity, occupancy and event counts.
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
  uint64_t pages = 0;  // index pages whose bytes this tier holds
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

// The TEXT tier: blobs whose KV bytes are gone but whose tokens are kept.
struct TextTierInfo {
  uint64_t capacity_bytes = 0;  // the node's TEXT budget; 0: it keeps no text
  uint64_t used_bytes = 0;      // token bytes of TEXT records plus a per-record overhead
  uint64_t blobs = 0;           // blobs in the TEXT state
  uint64_t drops = 0;           // blobs whose bytes were dropped to TEXT
  uint64_t deletions = 0;       // TEXT records deleted (TEXT pressure or Evict(kText))
  uint64_t rebuilds = 0;        // TEXT blobs filled again by a put
  uint64_t pages = 0;           // index pages in the TEXT state
};

// The node's rebuild queue.
struct RebuildQueueInfo {
  uint64_t queued = 0;     // waiting for a worker
  uint64_t in_flight = 0;  // handed to a worker, not yet filled or expired
  uint64_t requested = 0;  // tasks ever queued
  uint64_t completed = 0;  // filled by a put
  uint64_t expired = 0;    // handed out and not filled in time (queued again)
  uint64_t dropped = 0;    // given up, or their blob went away
};

// Match's page hits and misses in one lookup phase. Each queried page counts once: in the
// fastest tier that held it, or as a miss (queried_pages = hit pages + miss_pages).
struct LookupInfo {
  LookupPhase phase = LookupPhase::kPrefill;  // never kUnspecified (the node infers those)
  uint64_t lookups = 0;                       // Match calls
  uint64_t queried_pages = 0;                 // whole pages they asked for
  uint64_t dram_hit_pages = 0;                // found with their bytes in DRAM
  uint64_t ssd_hit_pages = 0;                 // found with their bytes only on SSD
  uint64_t text_hit_pages = 0;                // found as TEXT (tokens only)
  uint64_t miss_pages = 0;                    // not found

  // dram + ssd + text hit pages.
  uint64_t HitPages() const { return dram_hit_pages + ssd_hit_pages + text_hit_pages; }
};

// One point of a miss-ratio curve: the hit ratio (0..1) a cache of `capacity_bytes` would
// have had on the node's sampled access stream.
struct CurvePoint {
  uint64_t capacity_bytes = 0;
  double hit_ratio = 0;
  friend bool operator==(const CurvePoint&, const CurvePoint&) = default;
};

// The node's live miss-ratio curve (SHARDS sampling of reuse distances): hit ratio against
// capacity for its whole access stream. `points` is empty until enough was sampled.
struct MissRatioCurveInfo {
  std::vector<CurvePoint> points;  // ascending capacity
  uint64_t accesses = 0;           // page accesses seen
  uint64_t sampled_accesses = 0;   // of which sampled
  double sample_rate = 0;          // sampling rate in use, (0, 1]
  uint64_t working_set_bytes = 0;  // estimated distinct bytes accessed
};

// One tier's view of the curve: the hit ratio expected at its capacity now, the curve's
// points, the capacity the node recommends (absent when it made none) and why, in words.
struct TierCurveInfo {
  Tier tier = Tier::kDram;
  uint64_t capacity_bytes = 0;
  double expected_hit_ratio = 0;
  std::vector<CurvePoint> points;  // ascending capacity (TEXT: token bytes)
  std::optional<CurvePoint> recommended;
  std::string advice;  // one sentence for people
};

// Admin.Tiers: per byte tier (fastest first: DRAM, then SSD when the node has one), the
// TEXT tier, the rebuild queue, the index and the engine; Match's hits and misses by
// phase; the live miss-ratio curve and each tier's view of it.
struct TiersInfo {
  std::vector<TierInfo> tiers;
  TextTierInfo text;
  RebuildQueueInfo rebuild;
  IndexInfo index;
  EngineInfo engine;
  std::vector<LookupInfo> lookups;  // prefill, midfill, decode (as the node sends them)
  MissRatioCurveInfo mrc;
  std::vector<TierCurveInfo> curves;  // empty while the node has no curve yet
  // Bytes of token ids per byte of KV on the node (TEXT curves count token bytes); 0: unknown.
  double token_bytes_per_kv_byte = 0;

  // The curve of `tier`; nullptr when the node sent none for it.
  const TierCurveInfo* CurveFor(Tier tier) const;
};

struct EvictResult {
  uint64_t bytes_freed = 0;     // extent bytes (kText: token bytes) returned to the tier
  uint64_t pages_evicted = 0;   // index pages removed (TEXT records that went)
  uint64_t blobs_unlinked = 0;  // blobs that left the index
  uint64_t blobs_demoted = 0;   // kDram: blobs whose bytes moved to SSD
  uint64_t blobs_dropped = 0;   // blobs whose bytes were dropped: now kText
};

// Client::Prefetch: what the node found and started.
struct PrefetchResult {
  uint32_t matched_pages = 0;    // as MatchResult::matched_pages
  uint32_t resident_pages = 0;   // matched pages whose bytes are in DRAM or on SSD
  uint64_t promotions = 0;       // SSD-only blobs whose promotion into DRAM was started
  uint64_t rebuilds_queued = 0;  // TEXT blobs queued for rebuild
};

// Client::RequestRebuild.
struct RebuildRequestResult {
  uint64_t queued = 0;          // tasks added to the node's queue
  uint64_t already_queued = 0;  // TEXT blobs already queued or handed to a worker
  uint64_t resident = 0;        // blobs on the path that still have bytes
};

// One blob to recompute (Client::PullRebuildTasks): its KV bytes were dropped, its tokens
// kept. Compute pages [first_page, first_page + pages) of `sequence_tokens` in ns's layout
// (e.g. worker::ReferenceModel::ComputeBlob(sequence_tokens, first_page, pages, out)) and
// fill the blob with an ordinary Write(ns, parent, OwnTokens(), bytes). The node accepts
// the write only if every chunk checksum equals `chunk_checksums` (the original's), so a
// rebuilt blob is byte-identical; other bytes are refused (DATA_LOSS or FAILED_PRECONDITION)
// and the blob stays TEXT.
struct RebuildTask {
  uint64_t task_id = 0;
  std::optional<Namespace> ns;  // always set in a task from PullRebuildTasks
  BlobKey key;
  std::optional<Parent> parent;  // absent for a blob from sequence page 0
  uint32_t first_page = 0;       // a
  uint32_t pages = 0;            // b - a
  // Tokens of sequence pages [0, first_page + pages): the prefix, then the blob's own.
  std::vector<TokenId> sequence_tokens;
  std::vector<uint64_t> chunk_checksums;  // the original's, layer-major [l * pages + p]
  // This client's clock: the task returns to the queue if no write fills it by then.
  absl::Time deadline = absl::InfinitePast();

  // The blob's own tokens: the last pages * page_tokens ids of sequence_tokens (empty when
  // ns is unset or sequence_tokens is shorter than that).
  std::vector<TokenId> OwnTokens() const;
};

struct HealthInfo {
  bool draining = false;   // Admin.Drain was called: reads served, writes refused
  std::string version;     // the node's strata version
  std::string data_plane;  // "host:port" of the node's UCX listener
  absl::Duration uptime;
};

}  // namespace strata
