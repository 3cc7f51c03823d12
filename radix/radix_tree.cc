#include "strata/radix/radix_tree.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "glog/logging.h"

#include "internal/radix_node.h"
#include "strata/base/status_macros.h"

namespace strata::radix {

using internal::FlatMapHeapBytes;
using internal::MallocChunkBytes;
using internal::TokenArrayBytes;

namespace {

constexpr uint64_t kMaxPages = std::numeric_limits<uint32_t>::max();

// Number of leading pages that are equal in `a` and `b` (each `pages` long).
uint32_t CommonPages(const TokenId* a, const TokenId* b, uint32_t pages, uint32_t page_tokens) {
  const size_t page_bytes = size_t{page_tokens} * sizeof(TokenId);
  if (std::memcmp(a, b, pages * page_bytes) == 0) return pages;
  for (uint32_t i = 0; i < pages; ++i) {
    const size_t at = size_t{i} * page_tokens;
    if (std::memcmp(a + at, b + at, page_bytes) != 0) return i;
  }
  return pages;
}

// Checks that `tokens` is a non-empty whole number of (at most 2^32-1) pages.
absl::Status CheckWholePages(absl::Span<const TokenId> tokens, uint32_t page_tokens,
                             const char* what) {
  if (tokens.empty()) return absl::InvalidArgumentError(absl::StrCat(what, " is empty"));
  if (tokens.size() % page_tokens != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": ", tokens.size(), " tokens is not a multiple of page_tokens ", page_tokens));
  }
  if (tokens.size() / page_tokens > kMaxPages) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": more than 2^32-1 pages"));
  }
  return absl::OkStatus();
}

}  // namespace

// ---------------------------------------------------------------------------
// MatchHandle

MatchHandle::MatchHandle(MatchHandle&& other) noexcept
    : tree_(std::exchange(other.tree_, nullptr)), node_(std::exchange(other.node_, nullptr)) {}

MatchHandle& MatchHandle::operator=(MatchHandle&& other) noexcept {
  if (this != &other) {
    Release();
    tree_ = std::exchange(other.tree_, nullptr);
    node_ = std::exchange(other.node_, nullptr);
  }
  return *this;
}

void MatchHandle::Release() {
  if (node_ == nullptr) return;
  tree_->Unpin(node_);
  node_ = nullptr;
  tree_ = nullptr;
}

// ---------------------------------------------------------------------------
// Construction

RadixTree::RadixTree(uint32_t page_tokens) : page_tokens_(page_tokens) {
  CHECK_GT(page_tokens, 0u) << "RadixTree needs page_tokens > 0";
}

RadixTree::~RadixTree() {
  DCHECK_EQ(pinned_nodes_.load(), 0u) << "a MatchHandle outlived its RadixTree";
  absl::MutexLock lock(&mu_);
  std::vector<Node*> nodes;
  for (auto& [hash, root] : roots_) CollectSubtree(root, &nodes);
  for (Node* node : nodes) delete node;
}

// ---------------------------------------------------------------------------
// Walking

template <typename Visit>
RadixTree::Position RadixTree::Walk(Node* root, const TokenId* tokens, uint32_t max_pages,
                                    Visit&& visit) const {
  const uint32_t page_tokens = page_tokens_;
  Position pos{root, 0, 0};
  Node* node = root;
  while (pos.pages < max_pages) {
    const TokenId* query = tokens + size_t{pos.pages} * page_tokens;
    auto it = node->children.find(absl::MakeConstSpan(query, page_tokens));
    if (it == node->children.end()) break;
    Node* child = it->second;
    const uint32_t want = std::min(child->pages, max_pages - pos.pages);
    const uint32_t got = CommonPages(child->tokens.get(), query, want, page_tokens);
    DCHECK_GE(got, 1u);  // the key (first page) matched exactly
    visit(child, got, pos.pages);
    pos = Position{child, got, pos.pages + got};
    if (got < child->pages) break;
    node = child;
  }
  return pos;
}

RadixTree::Node* RadixTree::FindRoot(const PrefixHash& root) const {
  auto it = roots_.find(root);
  return it == roots_.end() ? nullptr : it->second;
}

void RadixTree::CollectSubtree(Node* node, std::vector<Node*>* out) {
  const size_t begin = out->size();
  out->push_back(node);
  for (size_t i = begin; i < out->size(); ++i) {
    for (const auto& [key, child] : (*out)[i]->children) out->push_back(child);
  }
}

EvictedSpan RadixTree::SpanOf(const Node* node) {
  return EvictedSpan{node->root->blob.hash, node->blob, node->blob_page_offset, node->pages,
                     node->depth_pages - node->pages};
}

// ---------------------------------------------------------------------------
// Structure changes (exclusive lock)

RadixTree::Node* RadixTree::NewNode(Node* parent, const TokenId* tokens, uint32_t pages,
                                    const BlobKey& blob, uint32_t blob_page_offset,
                                    uint32_t depth_pages) {
  auto* node = new Node;
  const size_t count = size_t{pages} * page_tokens_;
  node->tokens.reset(new TokenId[count]);
  std::memcpy(node->tokens.get(), tokens, count * sizeof(TokenId));
  node->parent = parent;
  node->root = parent->root;
  node->blob = blob;
  node->blob_page_offset = blob_page_offset;
  node->pages = pages;
  node->depth_pages = depth_pages;
  ++nodes_;
  node_bytes_ += MallocChunkBytes(sizeof(Node)) + TokenArrayBytes(pages, page_tokens_);
  return node;
}

void RadixTree::AttachChild(Node* parent, Node* child) {
  node_bytes_ -= FlatMapHeapBytes(parent->children);
  const bool inserted = parent->children.emplace(child->FirstPage(page_tokens_), child).second;
  node_bytes_ += FlatMapHeapBytes(parent->children);
  DCHECK(inserted) << "two children with the same first page";
  child->parent = parent;
}

void RadixTree::DetachChild(Node* parent, Node* child) {
  const size_t erased = parent->children.erase(child->FirstPage(page_tokens_));
  DCHECK_EQ(erased, 1u);
}

RadixTree::Node* RadixTree::Split(Node* node, uint32_t head_pages) {
  DCHECK(!node->is_root());
  DCHECK_GT(head_pages, 0u);
  DCHECK_LT(head_pages, node->pages);
  Node* parent = node->parent;
  const uint32_t tail_pages = node->pages - head_pages;
  DetachChild(parent, node);

  Node* head = NewNode(parent, node->tokens.get(), head_pages, node->blob, node->blob_page_offset,
                       node->depth_pages - tail_pages);
  // The head is on every path that goes through `node`: it inherits the pins.
  const uint32_t pins = node->lock_ref.load(std::memory_order_relaxed);
  head->lock_ref.store(pins, std::memory_order_relaxed);
  if (pins > 0) pinned_nodes_.fetch_add(1, std::memory_order_relaxed);

  const size_t tail_count = size_t{tail_pages} * page_tokens_;
  std::unique_ptr<TokenId[]> tail(new TokenId[tail_count]);
  std::memcpy(tail.get(), node->tokens.get() + size_t{head_pages} * page_tokens_,
              tail_count * sizeof(TokenId));
  node_bytes_ -= TokenArrayBytes(node->pages, page_tokens_);
  node_bytes_ += TokenArrayBytes(tail_pages, page_tokens_);
  node->tokens = std::move(tail);
  node->pages = tail_pages;
  node->blob_page_offset += head_pages;

  AttachChild(head, node);
  AttachChild(parent, head);
  return head;
}

void RadixTree::AddLeaf(Node* node) {
  DCHECK(!node->leaf);
  node->leaf = true;
  ++leaves_;
}

void RadixTree::RemoveLeaf(Node* node) {
  DCHECK(node->leaf);
  node->leaf = false;
  --leaves_;
}

void RadixTree::FreeNode(Node* node) {
  DCHECK_EQ(node->lock_ref.load(), 0u);
  if (node->leaf) RemoveLeaf(node);
  node_bytes_ -= MallocChunkBytes(sizeof(Node)) + TokenArrayBytes(node->pages, page_tokens_) +
                 FlatMapHeapBytes(node->children);
  --nodes_;
  pages_ -= node->pages;
  delete node;
}

void RadixTree::DropRoot(Node* root) {
  DCHECK(root->children.empty());
  roots_.erase(root->blob.hash);
  node_bytes_ -= MallocChunkBytes(sizeof(Node)) + FlatMapHeapBytes(root->children);
  delete root;
}

bool RadixTree::AfterChildRemoved(Node* parent) {
  if (!parent->children.empty()) return false;
  if (parent->is_root()) {
    DropRoot(parent);
    return false;
  }
  AddLeaf(parent);
  return true;
}

// ---------------------------------------------------------------------------
// Public operations

absl::StatusOr<uint32_t> RadixTree::Insert(const PrefixHash& root, absl::Span<const TokenId> tokens,
                                           uint32_t begin_page, const BlobKey& blob) {
  STRATA_RETURN_IF_ERROR(CheckWholePages(tokens, page_tokens_, "Insert tokens"));
  const auto total_pages = static_cast<uint32_t>(tokens.size() / page_tokens_);
  if (begin_page >= total_pages) {
    return absl::InvalidArgumentError(absl::StrCat("Insert: begin_page ", begin_page,
                                                   " out of range for a sequence of ", total_pages,
                                                   " pages"));
  }
  absl::MutexLock lock(&mu_);
  Node* root_node = FindRoot(root);
  if (root_node == nullptr) {
    if (begin_page > 0) {
      return absl::FailedPreconditionError(
          absl::StrCat("Insert: prefix pages [0, ", begin_page, ") are not cached (unknown root)"));
    }
    root_node = new Node;
    root_node->root = root_node;
    root_node->blob = BlobKey{root};
    roots_.emplace(root, root_node);
    node_bytes_ += MallocChunkBytes(sizeof(Node));
  }
  const Position pos =
      Walk(root_node, tokens.data(), total_pages, [](Node*, uint32_t, uint32_t) {});
  if (pos.pages < begin_page) {
    return absl::FailedPreconditionError(
        absl::StrCat("Insert: prefix pages [", pos.pages, ", ", begin_page, ") are not cached"));
  }
  if (pos.pages == total_pages) return 0;

  Node* attach = pos.node;
  if (pos.node_pages < attach->pages) attach = Split(attach, pos.node_pages);
  const uint32_t new_pages = total_pages - pos.pages;
  Node* leaf = NewNode(attach, tokens.data() + size_t{pos.pages} * page_tokens_, new_pages, blob,
                       pos.pages - begin_page, total_pages);
  if (attach->leaf) RemoveLeaf(attach);
  AttachChild(attach, leaf);
  AddLeaf(leaf);
  pages_ += new_pages;
  return new_pages;
}

MatchResult RadixTree::Match(const PrefixHash& root, absl::Span<const TokenId> tokens, bool pin) {
  MatchResult result;
  const uint32_t max_pages =
      static_cast<uint32_t>(std::min<uint64_t>(tokens.size() / page_tokens_, kMaxPages));
  if (max_pages == 0) return result;

  absl::ReaderMutexLock lock(&mu_);
  Node* root_node = FindRoot(root);
  if (root_node == nullptr) return result;
  std::vector<MatchSegment>& segments = result.segments;
  const Position pos =
      Walk(root_node, tokens.data(), max_pages, [&](Node* node, uint32_t pages, uint32_t seq) {
        if (!segments.empty()) {
          MatchSegment& last = segments.back();
          if (last.blob == node->blob &&
              last.blob_page_offset + last.page_count == node->blob_page_offset) {
            last.page_count += pages;
            return;
          }
        }
        segments.push_back(MatchSegment{node->blob, node->blob_page_offset, pages, seq});
      });
  result.matched_pages = pos.pages;
  if (pin && pos.pages > 0) {
    for (Node* node = pos.node; !node->is_root(); node = node->parent) {
      if (node->lock_ref.fetch_add(1, std::memory_order_relaxed) == 0) {
        pinned_nodes_.fetch_add(1, std::memory_order_relaxed);
      }
    }
    result.handle = MatchHandle(this, pos.node);
  }
  return result;
}

void RadixTree::Unpin(Node* node) {
  absl::ReaderMutexLock lock(&mu_);
  for (; !node->is_root(); node = node->parent) {
    const uint32_t before = node->lock_ref.fetch_sub(1, std::memory_order_relaxed);
    DCHECK_GT(before, 0u);
    if (before == 1) pinned_nodes_.fetch_sub(1, std::memory_order_relaxed);
  }
}

absl::StatusOr<uint64_t> RadixTree::RemoveSubtree(
    const PrefixHash& root, absl::Span<const TokenId> prefix,
    absl::FunctionRef<void(const EvictedSpan&)> on_removed) {
  STRATA_RETURN_IF_ERROR(CheckWholePages(prefix, page_tokens_, "RemoveSubtree prefix"));
  const auto prefix_pages = static_cast<uint32_t>(prefix.size() / page_tokens_);
  absl::MutexLock lock(&mu_);
  Node* root_node = FindRoot(root);
  if (root_node == nullptr) return absl::NotFoundError("RemoveSubtree: unknown root");
  const Position pos =
      Walk(root_node, prefix.data(), prefix_pages, [](Node*, uint32_t, uint32_t) {});
  if (pos.pages < prefix_pages) {
    return absl::NotFoundError(absl::StrCat("RemoveSubtree: only ", pos.pages, " of the ",
                                            prefix_pages, " prefix pages are cached"));
  }
  Node* node = pos.node;  // holds page prefix_pages - 1 as its pos.node_pages-th page
  std::vector<Node*> subtree;
  CollectSubtree(node, &subtree);
  for (const Node* n : subtree) {
    if (n->lock_ref.load(std::memory_order_relaxed) > 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          "RemoveSubtree: pages from ", n->depth_pages - n->pages, " are pinned by a match"));
    }
  }
  if (pos.node_pages > 1) Split(node, pos.node_pages - 1);  // `node` keeps the tail

  Node* parent = node->parent;
  DetachChild(parent, node);
  uint64_t removed = 0;
  // Reverse breadth-first order: children before parents.
  for (auto it = subtree.rbegin(); it != subtree.rend(); ++it) {
    on_removed(SpanOf(*it));
    removed += (*it)->pages;
    FreeNode(*it);
  }
  AfterChildRemoved(parent);
  return removed;
}

RadixTreeStats RadixTree::Stats() const {
  absl::ReaderMutexLock lock(&mu_);
  RadixTreeStats stats;
  stats.roots = roots_.size();
  stats.nodes = nodes_;
  stats.leaves = leaves_;
  stats.pages = pages_;
  stats.token_bytes = pages_ * page_tokens_ * sizeof(TokenId);
  stats.index_bytes = sizeof(RadixTree) + node_bytes_ + FlatMapHeapBytes(roots_);
  stats.pinned_nodes = pinned_nodes_.load(std::memory_order_relaxed);
  return stats;
}

}  // namespace strata::radix
