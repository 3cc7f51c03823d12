// BlobRecord: what the node keeps about one blob (design note, "Blobs and their records").
//
// A plain struct owned by the BlobTable; the NodeEngine reads and changes it under its
// lock (thread-compatible, no locking of its own). tokens, first_page, pages, parent_id,
// root_hash, root_page, ns and tree never change once the record is made (RecordKeeper's lock-free
// token walks rely on it). Fields and their invariants:
//
//   state      kPending  a put in progress: not in the index, invisible to readers
//              kLinked   committed and in the index (pages_in_index > 0)
//              kUnlinked out of the index (evicted, deleted, aborted, redundant); bytes
//                        kept while leases > 0 or holds > 0, tokens kept while children > 0
//   extent     the DRAM bytes; none once freed or dropped. A pending record always has one.
//   ssd_extent the SSD copy, if the blob was demoted (bytes durable there). A linked record
//              with neither extent is TEXT: tokens and checksums kept, KV bytes gone.
//   hbm_extent a copy of the DRAM bytes in device memory (the HBM tier, hbm_cache.h: an
//              inclusive cache), only ever beside `extent`: it goes before the DRAM bytes do.
//              hbm_queued: waiting for admission; hbm_filling: being copied in (the record
//              held meanwhile). children_in_hbm: linked children with an HBM copy (the HBM
//              copy is dropped leaf-first too).
//   children_in_dram / children_with_bytes
//              linked records whose parent_id is this record and that have DRAM bytes /
//              any bytes (DRAM or SSD): eviction is leaf-first, so a blob leaves DRAM only
//              when children_in_dram == 0 and drops its last bytes only when
//              children_with_bytes == 0.
//   path_pins  pins (Pin) whose prefix path includes this blob's index pages: never evicted
//   moving     a demotion or promotion of its bytes is in flight (I/O without the lock)
//   rebuild    where the blob is in the rebuild queue
//   tokens     the blob's own tokens (pages [first_page, first_page + pages) only)
//   checksums  one per chunk, layer-major: checksums[l * pages + p] (chunk_checksum.h)
//   parent_id  the record of parent->key (it stays alive while this record does), 0 = none
//   root_id    the first blob of its sequence (a session's root): the policies' session hint
//   children   records whose parent_id is this record
//   leases     leases naming this record (each lease counts once)
//   holds      live HeldSpans over its bytes
//   pin        holds the whole prefix path in the index while pinned
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

#include "strata/radix/blob_key.h"
#include "strata/radix/kv_layout.h"
#include "strata/radix/namespace.h"
#include "strata/radix/prefix_hash.h"
#include "strata/radix/radix_tree.h"
#include "strata/radix/token_span.h"
#include "strata/store/core/node_engine_types.h"
#include "strata/tiering/blob_id.h"
#include "strata/tiering/tier.h"

namespace strata::store::core {

enum class BlobState { kPending, kLinked, kUnlinked };
enum class RebuildStage { kNone, kQueued, kInFlight };

struct BlobRecord {
  tiering::BlobId id = 0;  // unique among records; the put id while pending
  radix::BlobKey key;
  radix::PrefixHash namespace_hash;
  const radix::Namespace* ns = nullptr;  // owned by the NamespaceRegistry
  radix::RadixTree* tree = nullptr;      // the tree of ns's page size
  std::optional<BlobParent> parent;
  tiering::BlobId parent_id = 0;
  tiering::BlobId root_id = 0;  // the record of the sequence's first blob (itself at page 0)
  // The index root of the record's sub-trie and the sequence page it starts at: h_0 and 0,
  // or the segment start of the root record (SegmentStart). The index numbers pages from
  // root_page.
  radix::PrefixHash root_hash;
  uint32_t root_page = 0;
  radix::PrefixHash start_hash;  // h_a
  uint32_t first_page = 0;       // a
  uint32_t pages = 0;            // b - a
  uint64_t bytes = 0;
  std::vector<radix::TokenId> tokens;
  std::vector<uint64_t> checksums;
  std::optional<tiering::Extent> extent;
  std::optional<tiering::Extent> ssd_extent;
  std::optional<tiering::Extent> hbm_extent;

  BlobState state = BlobState::kPending;
  uint32_t pages_in_index = 0;
  uint32_t leases = 0;
  uint32_t holds = 0;
  uint32_t children = 0;
  uint32_t children_in_dram = 0;
  uint32_t children_with_bytes = 0;
  uint32_t children_in_hbm = 0;
  bool hbm_queued = false;
  bool hbm_filling = false;
  uint32_t path_pins = 0;
  bool moving = false;
  bool text_tracked = false;  // counted in the TEXT tier (linked, no bytes)
  RebuildStage rebuild = RebuildStage::kNone;
  uint32_t rebuild_attempts = 0;
  absl::Time created = absl::InfinitePast();
  absl::Time last_access = absl::InfinitePast();
  uint64_t hits = 0;
  uint32_t replicas = 0;        // copies of it in the cluster, this one included (MarkReplicated)
  uint64_t insert_tick = 0;     // the engine's logical clock (one tick per put or read)
  uint64_t read_tick = 0;       // ... at the last Read (insert_tick if never read)
  bool transient_dram = false;  // a DRAM copy admission did not keep: dropped when unleased
  bool pinned = false;
  radix::MatchHandle pin;
  std::vector<tiering::BlobId> pinned_path;  // records whose path_pins this pin counts in

  uint32_t end_page() const { return first_page + pages; }
  bool in_dram() const { return extent.has_value(); }
  bool on_ssd() const { return ssd_extent.has_value(); }
  bool in_hbm() const { return hbm_extent.has_value(); }
  bool has_bytes() const { return in_dram() || on_ssd(); }
};

// What Stat and List show of a record (its tokens and chunk checksums only when with_tokens).
// REQUIRES: the lock that guards the record, shared at least.
BlobInfo BlobInfoOf(const BlobRecord& record, bool with_tokens);
// What Match shows of index segment `s` of linked `record`: its fastest tier, and for a
// TEXT blob the segment's tokens (`page_tokens` a page). Same REQUIRES.
Segment MatchedSegmentOf(const radix::MatchSegment& s, const BlobRecord& record,
                         uint32_t page_tokens);
// Whether `range` can be read from `record` (of a namespace with `layout`):
// INVALID_ARGUMENT for an empty range (no pages, or layer_begin >= layer_end), OUT_OF_RANGE
// for pages or layers outside the blob. The record's lock as above.
absl::Status CheckReadRange(const BlobRecord& record, const ReadRange& range,
                            const radix::KvLayout& layout);
// What Read answers for `range` of `record`: the blob's bytes and DRAM offset, a byte
// range per layer and the range's chunk checksums. REQUIRES: the record in DRAM, the
// range checked against it; the record's lock as above. Errors: radix::BlobLayout's.
absl::StatusOr<ReadRangeReply> ReadRangeReplyOf(const BlobRecord& record, const ReadRange& range,
                                                const radix::KvLayout& layout);

}  // namespace strata::store::core
