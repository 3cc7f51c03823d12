#include "store/meta/test_records.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "glog/logging.h"

namespace strata::store::meta {
namespace {

// SplitMix64: a fixed, portable sequence per seed.
uint64_t Mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

}  // namespace

radix::Namespace TestNamespace(int i) {
  const radix::KvLayout layout{.num_layers = 4,
                               .num_kv_heads = 2,
                               .head_dim = 64,
                               .dtype = radix::DType::kBFloat16,
                               .page_tokens = 16,
                               .format = radix::KvFormat::kKeyValue,
                               .tp_rank = 0,
                               .tp_world = 1};
  absl::StatusOr<radix::Namespace> ns =
      radix::Namespace::Create(absl::StrCat("tenant-", i), absl::StrCat("org/model-", i), layout);
  CHECK(ns.ok()) << ns.status();
  return *ns;
}

radix::BlobKey TestBlobKey(uint64_t seed) {
  return radix::BlobKey{radix::PrefixHash{Mix(seed * 2 + 1), Mix(seed * 2 + 2)}};
}

BlobMeta TestBlob(uint64_t seed, const radix::PrefixHash& ns_hash) {
  uint64_t state = Mix(seed ^ 0x5A5A5A5A5A5A5A5Aull);
  auto next = [&state] { return state = Mix(state); };
  BlobMeta m;
  m.key = TestBlobKey(seed);
  m.namespace_hash = ns_hash;
  m.first_page = static_cast<uint32_t>(next() % 64);
  m.pages = 1 + static_cast<uint32_t>(next() % 4);
  if (seed % 3 != 0) {
    m.parent = BlobMetaParent{TestBlobKey(seed + 1000003), m.first_page};
  }
  m.start_hash = radix::PrefixHash{next(), next()};
  m.bytes = uint64_t{m.pages} * 4 * 2 * 16 * 2 * 64 * 2;
  m.tokens.resize(size_t{m.pages} * 16);
  for (auto& t : m.tokens) t = static_cast<radix::TokenId>(next() % 152064);
  m.checksums.resize(size_t{m.pages} * 4);
  for (auto& c : m.checksums) c = next();
  m.in_dram = (seed % 5) != 0;
  if (seed % 2 == 0) m.ssd = SsdLocation{next() % (uint64_t{1} << 40), m.bytes};
  m.created = absl::FromUnixNanos(1'700'000'000'000'000'000 + static_cast<int64_t>(seed) * 7919);
  m.last_access = m.created + absl::Nanoseconds(static_cast<int64_t>(next() % 1'000'000'007));
  m.hits = next() % 1000;
  m.pinned = seed % 7 == 0;
  m.generation = seed;
  return m;
}

}  // namespace strata::store::meta
