// NamespaceRegistry: the namespaces a node knows (h_0 -> Namespace) and the radix trees
// they live in.
//
// A namespace becomes known with its first put (Register). All namespaces with the same
// page_tokens share one radix::RadixTree, each as its own root keyed by h_0, so they never
// see each other's prefixes. Entries and trees are never removed, so the pointers
// returned stay valid for the registry's lifetime.
//
// Ownership: owns the trees. REQUIRES: every MatchHandle of its trees is released before
// the registry is destroyed.
// Thread safety: thread-compatible (the NodeEngine guards it); the trees themselves are
// thread-safe.
// Errors: none.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/node_hash_map.h"

#include "strata/radix/namespace.h"
#include "strata/radix/prefix_hash.h"
#include "strata/radix/radix_tree.h"

namespace strata::store::core {

struct NamespaceEntry {
  radix::Namespace ns;
  radix::PrefixHash hash;  // h_0
  radix::RadixTree* tree = nullptr;
};

class NamespaceRegistry {
 public:
  NamespaceRegistry() = default;
  NamespaceRegistry(const NamespaceRegistry&) = delete;
  NamespaceRegistry& operator=(const NamespaceRegistry&) = delete;

  // The entry of `ns` (whose hash is `hash` = NamespaceHash(ns)), added if new.
  const NamespaceEntry& Register(const radix::Namespace& ns, const radix::PrefixHash& hash);
  const NamespaceEntry* Find(const radix::PrefixHash& hash) const;

  size_t size() const { return entries_.size(); }
  // Every tree, in increasing page size.
  std::vector<radix::RadixTree*> trees() const;
  // RadixTree::Stats summed over the trees.
  radix::RadixTreeStats IndexStats() const;

 private:
  absl::node_hash_map<radix::PrefixHash, NamespaceEntry> entries_;
  absl::flat_hash_map<uint32_t, std::unique_ptr<radix::RadixTree>> trees_;
};

}  // namespace strata::store::core
