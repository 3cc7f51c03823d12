// BlobMeta: the durable metadata of one blob — what a node must keep to serve (or rebuild)
// the blob after a restart. One record per blob key, written through a MetaStore
// (meta_store.h), encoded by blob_meta_codec.h.
//
// A plain value: copyable, no invariants enforced here (the node engine checks them before
// it writes a record; the codec encodes any value). Thread-compatible.
//
// Fields (the node engine's meaning; the store interprets only `key` and `namespace_hash`):
//   key             h_b, the blob's name (radix::BlobKey)
//   namespace_hash  h_0 of the blob's namespace; the namespace itself is a separate record
//                   of the same store (MetaBatch::PutNamespace)
//   parent          the blob this one continues: {key, pages}, pages = first_page; none for a
//                   blob that starts at page 0
//   start_hash      h_a, the prefix hash before the blob's first page
//   segment_start   the blob starts a segment of its sequence (a cluster's placement): no
//                   parent, first_page > 0, start_hash given by the client, the pages
//                   before it on other nodes
//   first_page      a; pages = b - a; bytes = pages * layout.BytesPerPage()
//   tokens          the blob's own tokens (pages [a, b) only, pages * page_tokens of them)
//   checksums       one XXH3-64 per chunk, layer-major: checksums[l * pages + p]
//                   (radix/chunk_checksum.h), num_layers * pages of them
//   in_dram         the bytes were in the DRAM tier when the record was written. DRAM does
//                   not survive a restart: a restarted node treats such a blob as TEXT unless
//                   `ssd` is set
//   ssd             the blob's SSD extent {offset, length}, set only once its bytes are
//                   durable there
//   created, last_access, hits   eviction inputs
//   pinned          the blob is pinned (eviction never drops it)
//   generation      a caller-owned counter, e.g. bumped at each rewrite of the record; the
//                   store keeps it and never reads it
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/time/time.h"

#include "strata/radix/blob_key.h"
#include "strata/radix/prefix_hash.h"
#include "strata/radix/token_span.h"

namespace strata::store::meta {

// Where a blob's bytes live on the SSD tier: one extent of the SSD file.
struct SsdLocation {
  uint64_t offset = 0;
  uint64_t length = 0;

  friend bool operator==(const SsdLocation&, const SsdLocation&) = default;
};

// The blob a blob continues: pages [0, pages) of the prefix named by `key`.
struct BlobMetaParent {
  radix::BlobKey key;
  uint32_t pages = 0;

  friend bool operator==(const BlobMetaParent&, const BlobMetaParent&) = default;
};

struct BlobMeta {
  radix::BlobKey key;                    // h_b
  radix::PrefixHash namespace_hash;      // h_0
  std::optional<BlobMetaParent> parent;  // none: starts at page 0
  radix::PrefixHash start_hash;          // h_a
  bool segment_start = false;            // starts a segment (no parent, first_page > 0)
  uint32_t first_page = 0;               // a
  uint32_t pages = 0;                    // b - a
  uint64_t bytes = 0;                    // KV bytes of the blob
  std::vector<radix::TokenId> tokens;    // own tokens only
  std::vector<uint64_t> checksums;       // per chunk, layer-major
  bool in_dram = false;                  // bytes were in DRAM (lost at restart)
  std::optional<SsdLocation> ssd;        // durable SSD extent
  absl::Time created = absl::UnixEpoch();
  absl::Time last_access = absl::UnixEpoch();
  uint64_t hits = 0;
  bool pinned = false;
  uint64_t generation = 0;  // caller-owned

  friend bool operator==(const BlobMeta&, const BlobMeta&) = default;
};

// "BlobMeta{key=<hex> ns=<hex> pages=[a, b) tokens=N checksums=C dram=0 ssd=[o, +l) ...}",
// for logs and test failures (tokens and checksums are counted, not listed).
std::string BlobMetaSummary(const BlobMeta& meta);
inline std::ostream& operator<<(std::ostream& os, const BlobMeta& meta) {
  return os << BlobMetaSummary(meta);
}

}  // namespace strata::store::meta
