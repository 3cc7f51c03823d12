#include "strata/store/core/namespace_registry.h"

#include <algorithm>

namespace strata::store::core {

const NamespaceEntry& NamespaceRegistry::Register(const radix::Namespace& ns,
                                                  const radix::PrefixHash& hash) {
  auto it = entries_.find(hash);
  if (it != entries_.end()) return it->second;
  const uint32_t page_tokens = ns.layout().page_tokens;
  std::unique_ptr<radix::RadixTree>& tree = trees_[page_tokens];
  if (tree == nullptr) tree = std::make_unique<radix::RadixTree>(page_tokens);
  return entries_.emplace(hash, NamespaceEntry{ns, hash, tree.get()}).first->second;
}

const NamespaceEntry* NamespaceRegistry::Find(const radix::PrefixHash& hash) const {
  auto it = entries_.find(hash);
  return it == entries_.end() ? nullptr : &it->second;
}

std::vector<radix::RadixTree*> NamespaceRegistry::trees() const {
  std::vector<radix::RadixTree*> out;
  out.reserve(trees_.size());
  for (const auto& [page_tokens, tree] : trees_) out.push_back(tree.get());
  std::sort(out.begin(), out.end(), [](const radix::RadixTree* a, const radix::RadixTree* b) {
    return a->page_tokens() < b->page_tokens();
  });
  return out;
}

radix::RadixTreeStats NamespaceRegistry::IndexStats() const {
  radix::RadixTreeStats sum;
  for (const auto& [page_tokens, tree] : trees_) {
    const radix::RadixTreeStats s = tree->Stats();
    sum.roots += s.roots;
    sum.nodes += s.nodes;
    sum.leaves += s.leaves;
    sum.pages += s.pages;
    sum.token_bytes += s.token_bytes;
    sum.index_bytes += s.index_bytes;
    sum.pinned_nodes += s.pinned_nodes;
  }
  return sum;
}

}  // namespace strata::store::core
