// The request and reply values of NodeEngine (node_engine.h), one struct per call.
//
// Plain values with standard-library, Abseil, radix and tiering types only, so the gRPC
// adapter (store/rpc) and the data plane (store/dataplane) convert them field by field.
// Spans in requests are borrowed for the duration of the call only.
//
// Page numbering: "sequence pages" count from the start of the token sequence (page 0 is
// the first page under the namespace root); "blob pages" count from a blob's first page.
// A blob of pages [a, b) of its sequence has first_page = a and pages = b - a.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "absl/types/span.h"

#include "strata/radix/blob_key.h"
#include "strata/radix/kv_layout.h"
#include "strata/radix/namespace.h"
#include "strata/radix/prefix_hash.h"
#include "strata/radix/radix_tree.h"
#include "strata/radix/token_span.h"
#include "strata/report/lookup.h"
#include "strata/report/match.h"
#include "strata/report/node_tiers.h"
#include "strata/report/tier.h"
#include "strata/tiering/tier.h"

namespace strata::store::core {

// The reported values are report's (strata/report/): the one tier enum (where a blob's
// bytes are: kDram, kSsd — a blob may be in both — or kText, nowhere but its tokens kept),
// lookup phases and their counts, match segments and results, and everything Tiers()
// reports (NodeTiers).
using report::kCountedPhases;
using report::kLookupPhases;
using report::LookupCounts;
using report::LookupPhase;
using report::LookupPhaseIndex;
using report::LookupPhaseName;
using report::MatchResult;
using report::NodeTiers;
using report::RebuildQueueStats;
using report::Segment;
using report::TextTierStats;
using report::Tier;
using report::TierName;

// ---------------------------------------------------------------------------- Put

// Where a new blob continues: the first `pages` pages of its sequence (its first_page a)
// end inside or at the end of blob `key`. For a blob of pages [a_p, b_p):
// a_p < pages <= b_p. pages < b_p is a branch off the middle of the parent.
// A tenant label's byte quotas per tier (TierLedger, TierMover): the extent bytes of its
// records in DRAM and on SSD may not pass them; a label at its quota evicts its own blobs
// first. 0: no quota.
struct TenantQuota {
  uint64_t dram_bytes = 0;
  uint64_t ssd_bytes = 0;
  friend bool operator==(const TenantQuota&, const TenantQuota&) = default;
};
// By tenant label (radix::Namespace::tenant()).
using TenantQuotas = absl::flat_hash_map<std::string, TenantQuota>;

struct BlobParent {
  radix::BlobKey key;
  uint32_t pages = 0;

  friend bool operator==(const BlobParent&, const BlobParent&) = default;
};

// Where a segment of a sequence starts (a cluster's placement, issue 13): the blob begins at
// sequence page `pages` (>= 1), whose prefix hash is `hash` = h_pages. The pages before it
// are on other nodes (or nowhere): this node neither has nor checks them. Its index roots
// the blob's sub-trie at `hash`, and a Match starting from the same hash finds it.
struct SegmentStart {
  radix::PrefixHash hash;
  uint32_t pages = 0;

  friend bool operator==(const SegmentStart&, const SegmentStart&) = default;
};

struct PutRequest {
  // None, and no segment_start: the blob starts at page 0 of its sequence.
  std::optional<BlobParent> parent;
  // The blob starts a segment (exclusive with parent).
  std::optional<SegmentStart> segment_start;
  // The blob's own tokens (its pages only, not the prefix): a whole number of pages, >= 1.
  absl::Span<const radix::TokenId> tokens;
  // Must equal pages * layout.BytesPerPage().
  uint64_t bytes = 0;
  // One per chunk, layer-major (chunk_checksum.h): num_layers * pages of them.
  absl::Span<const uint64_t> checksums;
  // The key the client computed, checked against the node's; none to skip the check.
  std::optional<radix::BlobKey> key;
};

struct BeginPutReply {
  // True: a blob with this key is committed or being put already; nothing is to be
  // transferred and put_id is 0.
  bool exists = false;
  radix::BlobKey key;
  uint64_t put_id = 0;
  // The blob's extent in the DRAM arena (length is the granted, rounded-up size).
  tiering::Extent extent;
  // The put is abandoned (and reclaimed) if no call names it before this instant. Each
  // PutTarget / PutReceived moves it to now + put_ttl.
  absl::Time deadline = absl::InfinitePast();
  // PutText only: pages that entered the index as TEXT (0 when exists, or all were cached).
  uint32_t indexed_pages = 0;
};

struct CommitPutReply {
  radix::BlobKey key;
  // Pages of the blob that entered the index. Fewer than its pages when other blobs
  // already cached some of them (first writer wins). 0: every page was cached already;
  // the blob is redundant, its bytes are dropped and its key is not kept.
  uint32_t indexed_pages = 0;
};

// ---------------------------------------------------------------------------- Read

// Pages [first_page, first_page + num_pages) (blob pages) of layers
// [layer_begin, layer_end) of `blob`.
struct ReadRange {
  radix::BlobKey blob;
  uint32_t first_page = 0;
  uint32_t num_pages = 0;
  uint32_t layer_begin = 0;
  uint32_t layer_end = 0;
};

struct ReadRangeReply {
  // One byte range of the blob per layer in [layer_begin, layer_end), in layer order
  // (offsets relative to the blob's first byte; pass them to ReadSource).
  std::vector<radix::ByteRange> layer_ranges;
  // Checksums of the covered chunks, layer-major over the range:
  // checksums[(l - layer_begin) * num_pages + (p - first_page)].
  std::vector<uint64_t> checksums;
  // The blob's total size and its extent's offset in the DRAM arena (for a same-host
  // client that maps the arena read-only).
  uint64_t blob_bytes = 0;
  uint64_t arena_offset = 0;
  // The offset of the blob's copy in the HBM tier's pool, if it has one (a same-host GPU
  // reader copies from there device to device; everyone else reads the DRAM copy).
  std::optional<uint64_t> hbm_offset;
};

struct ReadReply {
  uint64_t lease_id = 0;
  absl::Time expiry = absl::InfinitePast();
  std::vector<ReadRangeReply> ranges;  // one per requested range, in order
};

// ---------------------------------------------------------------------------- Admin

struct DeleteReply {
  uint64_t pages_removed = 0;   // index pages removed (the blob's and those below it)
  uint64_t blobs_unlinked = 0;  // blobs that left the index (bytes freed once unleased)
};

// A blob record as Stat and List show it.
struct BlobInfo {
  radix::BlobKey key;
  radix::PrefixHash namespace_hash;  // h_0
  std::string tenant;
  std::string model;
  radix::KvLayout layout;
  std::optional<BlobParent> parent;
  radix::PrefixHash start_hash;  // h_a
  uint32_t first_page = 0;       // a
  uint32_t pages = 0;            // b - a
  uint64_t bytes = 0;
  uint64_t blob_checksum = 0;  // BlobChecksum(chunk checksums)
  // Where the bytes are, fastest first: some of kDram, kSsd; exactly {kText} when the
  // bytes were dropped and only the tokens are kept.
  std::vector<Tier> tiers;
  tiering::Extent extent;      // the DRAM extent; empty when not in DRAM
  tiering::Extent ssd_extent;  // the SSD extent; empty when not on SSD
  uint32_t pages_in_index = 0;
  uint32_t leases = 0;
  bool pinned = false;
  absl::Time created = absl::InfinitePast();
  absl::Time last_access = absl::InfinitePast();  // last Read (created if never read)
  uint64_t hits = 0;                              // Reads that named it
  std::vector<radix::TokenId> tokens;             // own tokens; only when asked for
  std::vector<uint64_t> chunk_checksums;          // layer-major; only with the tokens
};

struct ListRequest {
  // Only blobs of this namespace (h_0 = radix::NamespaceHash(ns)); none: all.
  std::optional<radix::PrefixHash> namespace_hash;
  // Empty for the first page, else the next_page_token of the previous reply.
  std::string page_token;
  // Blobs per page: 0 means 100; at most 1000 (larger values are clamped).
  uint32_t limit = 0;
};

struct ListReply {
  std::vector<BlobInfo> blobs;  // in key order (BlobKey's operator<), without tokens
  std::string next_page_token;  // empty when this was the last page
};

struct EvictReply {
  uint64_t bytes_freed = 0;       // granted extent bytes returned to the tier (TEXT: token bytes)
  uint64_t pages_evicted = 0;     // index pages removed (TEXT evictions only)
  uint64_t blobs_unlinked = 0;    // blobs that left the index (TEXT evictions only)
  uint64_t blobs_demoted = 0;     // DRAM evictions: blobs whose bytes moved to SSD
  uint64_t blobs_dropped = 0;     // blobs whose bytes were dropped (now TEXT)
  uint64_t demotions_failed = 0;  // SSD writes that failed (the blobs stay in DRAM)
  absl::Status first_failure;     // the first of them
};

// What the engine found in its metadata store at Create (a restart).
struct RestoreReport {
  uint64_t restored = 0;  // blobs back in the index
  uint64_t on_ssd = 0;    // ... of which with their SSD bytes (verified when promoted)
  uint64_t text = 0;      // ... of which TEXT (their bytes were in DRAM, or the SSD copy
                          // could not be taken back)
  uint64_t dropped = 0;   // records that failed a check or were redundant (deleted)
  uint64_t corrupt = 0;   // records the store could not decode (skipped)
  absl::Duration load_time = absl::ZeroDuration();   // reading the store
  absl::Duration ready_time = absl::ZeroDuration();  // until the index was rebuilt
};

// ---------------------------------------------------------------------------- Rebuild

// One blob to recompute: its KV bytes were dropped, its tokens kept. The worker computes
// pages [first_page, first_page + pages) of the sequence `sequence_tokens` (pages
// [0, first_page + pages), i.e. the blob's prefix and its own tokens) in `ns`'s layout and
// fills the blob with an ordinary put: BeginPut(ns, {parent, own tokens, bytes,
// checksums}) + data + CommitPut. The node accepts the put only if every chunk checksum
// equals the original's (`checksums`), so a rebuilt blob is byte-identical.
struct RebuildTask {
  uint64_t task_id = 0;
  std::optional<radix::Namespace> ns;  // always set (Namespace has no empty value)
  radix::BlobKey key;
  std::optional<BlobParent> parent;
  // Set when the blob's sequence on this node starts a segment: sequence_tokens then hold
  // pages [segment_start->pages, first_page + pages) only; the pages before them are on
  // other nodes, and the worker must find them there.
  std::optional<SegmentStart> segment_start;
  uint32_t first_page = 0;
  uint32_t pages = 0;
  std::vector<radix::TokenId> sequence_tokens;
  std::vector<uint64_t> checksums;  // the original's, layer-major
  // The task returns to the queue if no put fills the blob before this instant.
  absl::Time deadline = absl::InfinitePast();
};

struct RebuildRequestReply {
  uint64_t queued = 0;          // tasks added to the queue
  uint64_t already_queued = 0;  // TEXT blobs already queued or handed out
  uint64_t resident = 0;        // blobs on the path that still have bytes (nothing to do)
};

struct PrefetchReply {
  uint32_t matched_pages = 0;    // as Match
  uint32_t resident_pages = 0;   // matched pages whose bytes are in DRAM or SSD
  uint64_t promotions = 0;       // SSD-only blobs whose promotion into DRAM was started
  uint64_t rebuilds_queued = 0;  // TEXT blobs queued for rebuild
};

struct ReapReply {
  uint64_t leases_expired = 0;
  uint64_t puts_expired = 0;
};

}  // namespace strata::store::core
