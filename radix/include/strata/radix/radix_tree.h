// RadixTree: the prefix index of one storage node.
//
// What it is
//   A forest of page-granular radix tries. Each trie hangs off a root keyed by a
//   PrefixHash: the namespace hash h_0 (or, in a cluster, the hash h_{kS} where
//   a segment starts). Nothing under different roots ever matches. Each node
//   below a root holds a run of whole pages (page_tokens tokens each) that are
//   consecutive pages of ONE blob: (blob, blob_page_offset). The edge tokens are
//   stored in the node, so lookups compare tokens exactly (no hash collisions).
//   Children are keyed by their first page's tokens.
//
//       root h_0
//        └─ [pages 0..3  blob A @0] ── [pages 4..5 blob A @4] ── [6..9 blob C @0]
//                                   └─ [pages 4..7 blob B @0]
//
//   Sequence pages are numbered from the root (page 0 = the first page under
//   the root); a blob's pages are numbered from its first page (blob page 0).
//
// Ownership
//   The tree owns its nodes and copies of their tokens. It stores blob keys
//   only; blob bytes live elsewhere (tiers), and the callback of RemoveSubtree
//   tells the owner which (blob, pages) left the index.
//
// Eviction
//   The tree does not choose victims. The owner (store/core's engine) ranks its
//   blobs with one tiering::EvictionPolicy per tier, a priority function over
//   tiering::LeafFirstIndex (the one eviction model), and removes a victim's
//   pages with RemoveSubtree, children before parents.
//   A MatchHandle borrows the tree. REQUIRES: every MatchHandle is destroyed
//   or Release()d before the tree is destroyed.
//
// Concurrency
//   All public methods are thread-safe. Match, Stats and MatchHandle release
//   take the shared (reader) lock; pin counts are atomics, so matchers run in
//   parallel. Insert and RemoveSubtree take the exclusive lock. The callback of
//   RemoveSubtree runs with the exclusive lock held: REQUIRES it does not call
//   into the tree.
//
// Pinning
//   Match(pin=true) returns a MatchHandle that pins every node from the deepest
//   matched node up to the root. A pinned node is never removed (RemoveSubtree
//   fails with FAILED_PRECONDITION). Pins are
//   per node: a match ending inside a node pins the whole node, so removing
//   the unmatched tail of a pinned node also fails. Insert may split a pinned
//   node; both halves stay pinned.
//
// Errors (see strata/base/status_macros.h for the meaning of each code)
//   Insert        INVALID_ARGUMENT   empty or unaligned tokens, begin_page out
//                                    of range, more than 2^32-1 pages
//                 FAILED_PRECONDITION  pages [0, begin_page) not all cached
//   RemoveSubtree INVALID_ARGUMENT   empty or unaligned prefix
//                 NOT_FOUND          the prefix is not fully cached
//                 FAILED_PRECONDITION  a node of the subtree is pinned
//   Match, Stats never fail.
//
// Costs
//   Match: one exact child lookup per node on the path plus one memcmp of the
//   matched tokens; no allocation besides the result vector. Insert: the same
//   walk plus O(new tokens) copy, and O(node tokens) for a split.
//   RemoveSubtree: the walk plus O(removed nodes).
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"

#include "strata/radix/blob_key.h"
#include "strata/radix/prefix_hash.h"
#include "strata/radix/token_span.h"

namespace strata::radix {

namespace internal {
struct RadixNode;
}  // namespace internal

class RadixTree;

// Pins a matched path until destroyed or released. Move-only; an empty
// (default-constructed, moved-from or released) handle pins nothing.
// Release is thread-safe with respect to the tree; one handle must not be
// used from two threads at once.
class MatchHandle {
 public:
  MatchHandle() = default;
  MatchHandle(MatchHandle&& other) noexcept;
  MatchHandle& operator=(MatchHandle&& other) noexcept;
  MatchHandle(const MatchHandle&) = delete;
  MatchHandle& operator=(const MatchHandle&) = delete;
  ~MatchHandle() { Release(); }

  // Unpins the path. Idempotent.
  void Release();
  bool pinned() const { return node_ != nullptr; }

 private:
  friend class RadixTree;
  MatchHandle(RadixTree* tree, internal::RadixNode* node) : tree_(tree), node_(node) {}

  RadixTree* tree_ = nullptr;
  internal::RadixNode* node_ = nullptr;  // deepest pinned node
};

// Matched pages [seq_page_begin, seq_page_begin + page_count) of the query are
// pages [blob_page_offset, blob_page_offset + page_count) of `blob`.
struct MatchSegment {
  BlobKey blob;
  uint32_t blob_page_offset = 0;
  uint32_t page_count = 0;
  uint32_t seq_page_begin = 0;

  friend bool operator==(const MatchSegment&, const MatchSegment&) = default;
};

struct MatchResult {
  // Whole pages of the query found under the root, from page 0.
  uint32_t matched_pages = 0;
  // Cover [0, matched_pages) in order; adjacent pieces of one blob with
  // contiguous blob offsets are merged, so a blob appears once per run.
  std::vector<MatchSegment> segments;
  // Pins the path when Match was called with pin=true and matched_pages > 0.
  MatchHandle handle;
};

// A run of pages that left the index (RemoveSubtree): pages
// [seq_page_begin, seq_page_begin + page_count) under `root`, which were
// pages [blob_page_offset, +page_count) of `blob`.
struct EvictedSpan {
  PrefixHash root;
  BlobKey blob;
  uint32_t blob_page_offset = 0;
  uint32_t page_count = 0;
  uint32_t seq_page_begin = 0;

  friend bool operator==(const EvictedSpan&, const EvictedSpan&) = default;
};

struct RadixTreeStats {
  uint64_t roots = 0;         // non-empty roots
  uint64_t nodes = 0;         // page-holding nodes (roots not counted)
  uint64_t leaves = 0;        // nodes without children
  uint64_t pages = 0;         // cached pages
  uint64_t token_bytes = 0;   // bytes of token ids held: pages * page_tokens * 4
  uint64_t index_bytes = 0;   // all heap and object memory of the index, token
                              // storage included, estimated from allocation sizes
                              // and capacities with glibc malloc chunk rounding
  uint64_t pinned_nodes = 0;  // page-holding nodes with at least one pin
};

class RadixTree {
 public:
  // REQUIRES: page_tokens > 0.
  explicit RadixTree(uint32_t page_tokens);
  ~RadixTree();
  RadixTree(const RadixTree&) = delete;
  RadixTree& operator=(const RadixTree&) = delete;

  uint32_t page_tokens() const { return page_tokens_; }

  // Caches pages [begin_page, tokens.size() / page_tokens) of the sequence
  // `tokens` (the whole sequence from the root) as pages 0.. of `blob`.
  // Pages already cached keep their existing blob (first writer wins); only
  // the uncached tail is attached, pointing at (blob, its page offset in the
  // blob). Splits a node where the sequence diverges inside it. Returns the
  // number of newly cached pages (0 for a full duplicate).
  // INVALID_ARGUMENT: tokens empty or not a multiple of page_tokens, or
  //   begin_page >= tokens.size() / page_tokens.
  // FAILED_PRECONDITION: pages [0, begin_page) are not all cached under root.
  absl::StatusOr<uint32_t> Insert(const PrefixHash& root, absl::Span<const TokenId> tokens,
                                  uint32_t begin_page, const BlobKey& blob)
      ABSL_LOCKS_EXCLUDED(mu_);

  // Longest cached prefix of the whole pages of `tokens` (a trailing partial
  // page is ignored). Writes nothing but pin counts (the owner keeps access
  // statistics per blob). Never restructures the tree. With pin=true and a
  // non-empty match, result.handle pins the matched path.
  MatchResult Match(const PrefixHash& root, absl::Span<const TokenId> tokens, bool pin)
      ABSL_LOCKS_EXCLUDED(mu_);

  // `prefix` is k >= 1 whole pages. Removes page k-1 and everything cached
  // below it (splitting the node that holds page k-1 if it starts earlier);
  // pages [0, k-1) stay. Reports each removed node's run to `on_removed`,
  // children before parents, and returns the number of pages removed. A root
  // left empty is dropped. Nothing changes on error.
  // INVALID_ARGUMENT: prefix empty or not a multiple of page_tokens.
  // NOT_FOUND: the k pages are not all cached under root.
  // FAILED_PRECONDITION: a node holding a page to remove is pinned.
  absl::StatusOr<uint64_t> RemoveSubtree(const PrefixHash& root, absl::Span<const TokenId> prefix,
                                         absl::FunctionRef<void(const EvictedSpan&)> on_removed)
      ABSL_LOCKS_EXCLUDED(mu_);

  RadixTreeStats Stats() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  friend class MatchHandle;
  using Node = internal::RadixNode;

  // Where a walk from a root stopped: `node` is the deepest node with a
  // matched page (the root itself when none), `node_pages` how many of its
  // pages matched, `pages` the total matched pages.
  struct Position {
    Node* node = nullptr;
    uint32_t node_pages = 0;
    uint32_t pages = 0;
  };

  // Walks from `root` along the first `max_pages` pages of `tokens`, calling
  // visit(node, matched_pages_of_node, seq_page_begin) for each node with a
  // matched page, top-down.
  template <typename Visit>
  Position Walk(Node* root, const TokenId* tokens, uint32_t max_pages, Visit&& visit) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);

  Node* FindRoot(const PrefixHash& root) const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  Node* NewNode(Node* parent, const TokenId* tokens, uint32_t pages, const BlobKey& blob,
                uint32_t blob_page_offset, uint32_t depth_pages) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void AttachChild(Node* parent, Node* child) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void DetachChild(Node* parent, Node* child) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Moves the first `head_pages` pages of `node` into a new parent node and
  // returns it; `node` keeps the tail (and its identity, handles, children).
  Node* Split(Node* node, uint32_t head_pages) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Frees a node that is already detached from its parent and childless.
  void FreeNode(Node* node) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Called after `parent` lost a child: drops a root left empty, or records a
  // node left childless as a leaf. Returns true in the latter case.
  bool AfterChildRemoved(Node* parent) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void AddLeaf(Node* node) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void RemoveLeaf(Node* node) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void DropRoot(Node* root) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Pushes `node` and its descendants onto `out`, parents before children.
  static void CollectSubtree(Node* node, std::vector<Node*>* out);
  static EvictedSpan SpanOf(const Node* node);
  void Unpin(Node* node) ABSL_LOCKS_EXCLUDED(mu_);

  const uint32_t page_tokens_;
  mutable absl::Mutex mu_;
  // Root sentinels (no pages) by root hash; a root exists while it has children.
  absl::flat_hash_map<PrefixHash, Node*> roots_ ABSL_GUARDED_BY(mu_);
  // Childless page-holding nodes (those with RadixNode::leaf set).
  uint64_t leaves_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t nodes_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t pages_ ABSL_GUARDED_BY(mu_) = 0;
  // Bytes of nodes, token arrays and child maps (roots_ is added by Stats
  // from its capacity).
  uint64_t node_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  std::atomic<uint64_t> pinned_nodes_{0};
};

}  // namespace strata::radix
