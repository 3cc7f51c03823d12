#include "strata/store/core/namespace_registry.h"

#include "gtest/gtest.h"

namespace strata::store::core {
namespace {

radix::Namespace Ns(const std::string& tenant, uint32_t page_tokens) {
  return radix::Namespace::Create(tenant, "model",
                                  radix::KvLayout{.num_layers = 2,
                                                  .num_kv_heads = 1,
                                                  .head_dim = 8,
                                                  .dtype = radix::DType::kFloat16,
                                                  .page_tokens = page_tokens,
                                                  .format = radix::KvFormat::kKeyValue,
                                                  .tp_rank = 0,
                                                  .tp_world = 1})
      .value();
}

TEST(NamespaceRegistryTest, SharesOneTreePerPageSize) {
  NamespaceRegistry registry;
  const radix::Namespace a = Ns("a", 16), b = Ns("b", 16), c = Ns("c", 32);
  const NamespaceEntry& ea = registry.Register(a, radix::NamespaceHash(a));
  const NamespaceEntry& eb = registry.Register(b, radix::NamespaceHash(b));
  const NamespaceEntry& ec = registry.Register(c, radix::NamespaceHash(c));
  EXPECT_EQ(ea.tree, eb.tree);
  EXPECT_NE(ea.tree, ec.tree);
  EXPECT_EQ(ec.tree->page_tokens(), 32u);
  EXPECT_EQ(&registry.Register(a, radix::NamespaceHash(a)), &ea);  // idempotent
  EXPECT_EQ(registry.size(), 3u);
  EXPECT_EQ(registry.Find(radix::NamespaceHash(b)), &eb);
  EXPECT_EQ(registry.Find(radix::PrefixHash{1, 2}), nullptr);
  EXPECT_EQ(eb.ns, b);
  const auto trees = registry.trees();
  ASSERT_EQ(trees.size(), 2u);
  EXPECT_EQ(trees[0]->page_tokens(), 16u);
  EXPECT_EQ(trees[1]->page_tokens(), 32u);
  EXPECT_EQ(registry.IndexStats().pages, 0u);
}

}  // namespace
}  // namespace strata::store::core
