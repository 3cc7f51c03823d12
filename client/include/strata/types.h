// The value types of libstrata's public API (client.h): namespaces, keys, match segments,
// memory descriptors, and the records the node answers with.
//
// Vocabulary (docs/api.md, "Conventions"): a Namespace is (tenant, model, KV layout); a
// page is `layout.page_tokens` tokens; a blob holds the KV bytes of pages [a, b) of one
// token sequence, under the key h_b. Sequence pages count from the start of the token
// sequence, blob pages from a blob's first page. The radix types (radix/include/) are pure
// C++ and Abseil and are used here as they are: KvLayout, Namespace, BlobKey, PrefixHash,
// TokenId; so are the reported values of report/include/ (Tier, Segment, NodeTiers, ...).
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
#include "strata/report/curve.h"
#include "strata/report/lookup.h"
#include "strata/report/match.h"
#include "strata/report/node_tiers.h"
#include "strata/report/tier.h"

namespace strata {

using radix::BlobKey;
using radix::DType;
using radix::KvFormat;
using radix::KvLayout;
using radix::Namespace;
using radix::PrefixHash;
using radix::TokenId;

// What the node reports and the client shows is strata/report/'s, one set of types for the
// node, the wire converter and the client:
//   Tier           where a blob's bytes (or only its tokens) live: kHbm, kDram, kSsd, kText
//                  (report/tier.h; TierName); same numbers as strata.v1.Tier
//   LookupPhase    what a Match is for (prefill, midfill, decode; kUnspecified: the node
//                  infers it); only statistics depend on it (report/lookup.h)
//   Segment, MatchResult  the longest cached prefix of a query (report/match.h): pass
//                  ReadablePages() to Client::Read, never matched_pages, when a match may
//                  hold TEXT segments:
//
//     auto m = client->Match(ns, tokens);
//     client->Read(ns, m->segments, m->ReadablePages(), dest);   // pages [0, ReadablePages())
//     for (const Segment& s : m->TextSegments()) ...             // recompute, or RequestRebuild
//
//   NodeTiers      Admin.Tiers (Client::Tiers): TierStats per byte tier, TextTierStats,
//                  RebuildQueueStats, IndexStats, EngineStats, MetaStats, LookupCounts by phase,
//                  the live MissRatioCurve and a TierCurve per tier (report/node_tiers.h,
//                  report/curve.h)
using report::CurvePoint;
using report::EngineStats;
using report::IndexStats;
using report::LookupCounts;
using report::LookupPhase;
using report::LookupPhaseName;
using report::MatchResult;
using report::MetaStats;
using report::MissRatioCurve;
using report::NodeTiers;
using report::RebuildQueueStats;
using report::Segment;
using report::TextTierStats;
using report::Tier;
using report::TierCurve;
using report::TierName;
using report::TierStats;

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
//   kDevice       device memory of `device` (a CUDA ordinal; ClientOptions::open_device
//                 says which gpu::Device serves it): the library never touches it with
//                 the CPU. Reads land in it, and writes leave it, through that Device:
//                 staged through a pinned host pool with the copies of one chunk
//                 overlapping the receive of the next, or — on the node's host — DMA'd
//                 straight out of the node's DRAM tier (docs/design/device-memory.md)
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

// Where a segment of a sequence starts, for a node that holds the segment but not the
// pages before it (a cluster: strata/cluster_client.h). `hash` is the prefix hash of the
// sequence's first `pages` pages (radix::PrefixHashAt from NamespaceHash(ns)); pages >= 1.
struct SegmentStart {
  PrefixHash hash;
  uint32_t pages = 0;
  friend bool operator==(const SegmentStart&, const SegmentStart&) = default;
};

// One lookup of Client::MatchSegments: a segment's tokens from its start (none: from the
// sequence's page 0).
struct SegmentQuery {
  std::optional<SegmentStart> start;
  absl::Span<const TokenId> tokens;
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

struct EvictResult {
  uint64_t bytes_freed = 0;     // extent bytes (kText: token bytes) returned to the tier
  uint64_t pages_evicted = 0;   // index pages removed (TEXT records that went)
  uint64_t blobs_unlinked = 0;  // blobs that left the index
  uint64_t blobs_demoted = 0;   // kDram: blobs whose bytes moved to SSD; kHbm: copies dropped
  uint64_t blobs_dropped = 0;   // blobs whose bytes were dropped: now kText
};

// What a node that left its cluster handed over (Client::Leave, Admin.Leave).
struct LeaveResult {
  uint64_t segments = 0;              // segments handed over whole to their new owners
  uint64_t blobs = 0;                 // their blobs
  uint64_t bytes = 0;                 // KV bytes sent (blobs an owner had already: none)
  uint64_t blobs_existing = 0;        // blobs their owner had already
  uint64_t cold_segments = 0;         // never read: left behind
  uint64_t over_budget_segments = 0;  // read, but past the hand-over budget: left behind
  uint64_t text_blobs = 0;            // TEXT blobs (their text has replicas): left behind
  uint64_t failures = 0;              // segments that failed part-way
  uint64_t held_bytes = 0;            // KV bytes the node held in all
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
  // Set when the blob's sequence on its node starts at a cluster segment (pages before it
  // are on other nodes: ClusterClient::PrefixTokens); write it there from the parent if
  // any, else from this start.
  std::optional<SegmentStart> segment_start;
  uint32_t first_page = 0;  // a
  uint32_t pages = 0;       // b - a
  // Tokens of sequence pages [P, first_page + pages), P = segment_start->pages or 0: the
  // prefix on this node, then the blob's own.
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
