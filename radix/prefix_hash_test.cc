#include "strata/radix/prefix_hash.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/types/span.h"
#include "gtest/gtest.h"

#include "strata/radix/blob_key.h"
#include "strata/radix/kv_layout.h"
#include "strata/radix/namespace.h"
#include "strata/radix/token_span.h"

namespace strata::radix {
namespace {

// ---------------------------------------------------------------------------
// Golden vectors. They pin the prefix hash across machines and versions:
// if one of these changes, every stored key and every client breaks.
//
// How they were produced: independently of this C++ code, by the Python
// script below, run with Debian's python3-xxhash 3.2.0 (libxxhash 0.8.1):
//   apt-get install -y python3-xxhash && /usr/bin/python3 gen.py
// It builds the byte encodings from the tables in namespace.h and
// prefix_hash.h with struct.pack. Its XXH3-128 was first checked against
// upstream xxHash's own frozen XXH3_128bits seeded vectors
// (cli/xsum_sanity_check.c: lengths 0, 81, 222, 403, 2048, 2367; all agreed),
// which also confirms the (hi, lo) = (high64, low64) split. The C++ tests below
// agree with every value.
//
//   import struct, xxhash
//   SEED = int.from_bytes(b"strata.1", "big")
//   def h128(data):
//       v = xxhash.xxh3_128_intdigest(data, seed=SEED)
//       return (v >> 64, v & (2**64 - 1))  # (hi, lo) = (high64, low64)
//   def ns(tenant, model, layers, heads, dim, dtype, page, fmt, rank, world):
//       t, m = tenant.encode(), model.encode()
//       enc = (b"strata.ns.v1" + struct.pack("<I", len(t)) + t +
//              struct.pack("<I", len(m)) + m +
//              struct.pack("<IIIBIBII", layers, heads, dim, dtype, page, fmt,
//                          rank, world))
//       return h128(enc)
//   def chain(parent, page):
//       return h128(struct.pack("<QQ", parent[1], parent[0]) +
//                   struct.pack("<%dI" % len(page), *page))
//   def hashes(root, tokens, p):
//       out, h = [], root
//       for i in range(len(tokens) // p):
//           h = chain(h, tokens[i * p:(i + 1) * p]); out.append(h)
//       return out
//   hexs = lambda h: "%016x%016x" % h
//   LLAMA = "meta-llama/Llama-3.1-8B-Instruct"
//   A = ns("acme", LLAMA, 32, 8, 128, 2, 16, 1, 0, 1)
//   B = ns("globex", LLAMA, 32, 8, 128, 2, 16, 1, 0, 1)
//   C = ns("acme", LLAMA, 32, 8, 128, 2, 512, 1, 0, 1)
//   D = ns("acme", "deepseek-ai/DeepSeek-V3", 61, 1, 576, 2, 64, 2, 0, 1)
//   E = ns("acme", LLAMA, 32, 1, 128, 4, 16, 1, 3, 8)
//   ... then print hexs() of each case checked below (same inputs as the
//   C++ helpers ChainTokens() and LongTokens() build).
// ---------------------------------------------------------------------------

constexpr char kLlama[] = "meta-llama/Llama-3.1-8B-Instruct";

KvLayout Layout(uint32_t layers, uint32_t heads, uint32_t dim, DType dtype, uint32_t page,
                KvFormat format, uint32_t rank, uint32_t world) {
  return KvLayout{.num_layers = layers,
                  .num_kv_heads = heads,
                  .head_dim = dim,
                  .dtype = dtype,
                  .page_tokens = page,
                  .format = format,
                  .tp_rank = rank,
                  .tp_world = world};
}

Namespace MakeNamespace(const std::string& tenant, const std::string& model,
                        const KvLayout& layout) {
  absl::StatusOr<Namespace> ns = Namespace::Create(tenant, model, layout);
  EXPECT_TRUE(ns.ok()) << ns.status();
  return *ns;
}

KvLayout LlamaLayout(uint32_t page) {
  return Layout(32, 8, 128, DType::kBFloat16, page, KvFormat::kKeyValue, 0, 1);
}
Namespace NsA() { return MakeNamespace("acme", kLlama, LlamaLayout(16)); }
Namespace NsB() { return MakeNamespace("globex", kLlama, LlamaLayout(16)); }
Namespace NsC() { return MakeNamespace("acme", kLlama, LlamaLayout(512)); }
Namespace NsD() {
  return MakeNamespace("acme", "deepseek-ai/DeepSeek-V3",
                       Layout(61, 1, 576, DType::kBFloat16, 64, KvFormat::kMlaLatent, 0, 1));
}
Namespace NsE() {
  return MakeNamespace("acme", kLlama,
                       Layout(32, 1, 128, DType::kFloat8E4M3, 16, KvFormat::kKeyValue, 3, 8));
}

std::string Hex(const PrefixHash& h) { return h.ToHex(); }

TEST(PrefixHashGoldenTest, NamespaceHashes) {
  EXPECT_EQ(Hex(NamespaceHash(NsA())), "36d45eba9ea9bcb1be2a80348c7b7842");
  EXPECT_EQ(Hex(NamespaceHash(NsB())), "68ddfebcc7d10f26157d04760eb4af57");
  EXPECT_EQ(Hex(NamespaceHash(NsC())), "6d9cfafc48e598c5daff88c5db32b8b1");
  EXPECT_EQ(Hex(NamespaceHash(NsD())), "1f07f6ebbca81f7465d77632a4703c7c");
  EXPECT_EQ(Hex(NamespaceHash(NsE())), "dfc0a5efed0ab01e68ce77a3da095a81");
}

TEST(PrefixHashGoldenTest, SinglePages) {
  const PrefixHash a = NamespaceHash(NsA());
  const PrefixHash b = NamespaceHash(NsB());
  std::vector<TokenId> iota(16);
  for (TokenId i = 0; i < 16; ++i) iota[i] = i;
  std::vector<TokenId> one_to_16(16);
  for (TokenId i = 0; i < 16; ++i) one_to_16[i] = i + 1;
  std::vector<TokenId> alternating(64);
  for (size_t i = 0; i < 64; ++i) alternating[i] = i % 2 == 0 ? 0u : 0xFFFFFFFFu;

  EXPECT_EQ(Hex(ChainPageHash(PrefixHash{}, {})), "90bc85d62a5f0d9a23c273ded9a1a552");
  EXPECT_EQ(Hex(ChainPageHash(a, std::vector<TokenId>(16, 0))), "def35b7b6a368aeeb5ae7184dbae1126");
  EXPECT_EQ(Hex(ChainPageHash(a, std::vector<TokenId>(16, 0xFFFFFFFFu))),
            "da5a527cb9ef50f49740749811bc9bc9");
  EXPECT_EQ(Hex(ChainPageHash(a, iota)), "debbe59bf36582bec7919a639c832c94");
  EXPECT_EQ(Hex(ChainPageHash(b, iota)), "e7e81993b3f9387b68d9d5df6833e205");
  EXPECT_EQ(Hex(ChainPageHash(NamespaceHash(NsD()), alternating)),
            "062878f4bb42e172701b0d740df8a64e");
  EXPECT_EQ(Hex(ChainPageHash(NamespaceHash(NsE()), one_to_16)),
            "3ae78b88a2e5b55c07166e899cd00b15");
}

// 4 pages of 16 plus a 5-token partial page that must be ignored.
std::vector<TokenId> ChainTokens() {
  std::vector<TokenId> t(64 + 5);
  for (size_t i = 0; i < t.size(); ++i) t[i] = static_cast<TokenId>((i * 7919 + 13) % 128256);
  return t;
}

// 2 pages of 512 plus a 100-token partial page; values span the whole u32 range.
std::vector<TokenId> LongTokens() {
  std::vector<TokenId> t(2 * 512 + 100);
  for (size_t i = 0; i < t.size(); ++i) t[i] = static_cast<TokenId>(i * 2654435761u);
  return t;
}

TEST(PrefixHashGoldenTest, ChainOfFourPages) {
  const std::vector<PrefixHash> h = PrefixHashes(NamespaceHash(NsA()), ChainTokens(), 16);
  ASSERT_EQ(h.size(), 4u);
  EXPECT_EQ(Hex(h[0]), "7494a123e2fad0a78f0a0fb2531de71d");
  EXPECT_EQ(Hex(h[1]), "60d381604d2f2f6a99d6908007607b05");
  EXPECT_EQ(Hex(h[2]), "4bbe2b599a313ff4b068889b28b777b3");
  EXPECT_EQ(Hex(h[3]), "5c6f42040d05bf474cfb7c05a5fb7d70");
}

TEST(PrefixHashGoldenTest, LongPages) {
  const std::vector<PrefixHash> h = PrefixHashes(NamespaceHash(NsC()), LongTokens(), 512);
  ASSERT_EQ(h.size(), 2u);
  EXPECT_EQ(Hex(h[0]), "584ee90da373c33af4270b2de80424e4");
  EXPECT_EQ(Hex(h[1]), "32fafdc2fdc165cb818a3bac1cb7f837");
}

// ---------------------------------------------------------------------------
// Properties.

TEST(PrefixHashTest, ChainEqualsIteratingChainPageHash) {
  const std::vector<TokenId> tokens = LongTokens();
  for (uint32_t page : {1u, 16u, 100u, 256u, 257u, 512u}) {
    SCOPED_TRACE(page);
    const PrefixHash root = NamespaceHash(NsA());
    const std::vector<PrefixHash> chain = PrefixHashes(root, tokens, page);
    ASSERT_EQ(chain.size(), tokens.size() / page);
    PrefixHash h = root;
    for (uint32_t i = 0; i < chain.size(); ++i) {
      h = ChainPageHash(h, PageTokens(tokens, i, page));
      ASSERT_EQ(chain[i], h) << "page " << i;
    }
    EXPECT_EQ(PrefixHashAt(root, tokens, page), h);
    std::vector<PrefixHash> appended = {root};
    AppendPrefixHashes(root, tokens, page, &appended);
    ASSERT_EQ(appended.size(), chain.size() + 1);
    EXPECT_EQ(appended[0], root);
    EXPECT_TRUE(std::equal(chain.begin(), chain.end(), appended.begin() + 1));
  }
}

TEST(PrefixHashTest, PrefixProperty) {
  // Hashes of a sequence's prefix are the leading hashes of the sequence, and
  // continuing from h_k over the rest gives the same tail.
  const std::vector<TokenId> tokens = ChainTokens();
  const PrefixHash root = NamespaceHash(NsA());
  const std::vector<PrefixHash> all = PrefixHashes(root, tokens, 16);
  ASSERT_EQ(all.size(), 4u);
  const absl::Span<const TokenId> span(tokens);
  const std::vector<PrefixHash> one = PrefixHashes(root, span.first(16), 16);
  const std::vector<PrefixHash> two = PrefixHashes(root, span.first(32), 16);
  ASSERT_EQ(one.size(), 1u);
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(one[0], all[0]);
  EXPECT_EQ(two[0], all[0]);
  EXPECT_EQ(two[1], all[1]);
  const std::vector<PrefixHash> tail = PrefixHashes(all[1], span.subspan(32), 16);
  ASSERT_EQ(tail.size(), 2u);
  EXPECT_EQ(tail[0], all[2]);
  EXPECT_EQ(tail[1], all[3]);
  EXPECT_EQ(PrefixHashAt(root, span.first(47), 16), all[1]);  // partial page ignored
}

TEST(PrefixHashTest, ShortAndDegenerateInputs) {
  const PrefixHash root = NamespaceHash(NsA());
  const std::vector<TokenId> fifteen(15, 7);
  EXPECT_TRUE(PrefixHashes(root, fifteen, 16).empty());
  EXPECT_TRUE(PrefixHashes(root, {}, 16).empty());
  EXPECT_TRUE(PrefixHashes(root, fifteen, 0).empty());
  EXPECT_EQ(PrefixHashAt(root, fifteen, 16), root);
  EXPECT_EQ(PrefixHashAt(root, fifteen, 0), root);
  std::vector<PrefixHash> out = {root};
  AppendPrefixHashes(root, fifteen, 16, &out);
  EXPECT_EQ(out.size(), 1u);
  // An empty page still chains: it differs from its parent.
  EXPECT_NE(ChainPageHash(root, {}), root);
}

TEST(PrefixHashTest, EveryTokenPositionMatters) {
  const PrefixHash root = NamespaceHash(NsA());
  for (uint32_t page : {16u, 512u}) {
    std::vector<TokenId> tokens(page);
    for (uint32_t i = 0; i < page; ++i) tokens[i] = i * 31 + 5;
    const PrefixHash base = ChainPageHash(root, tokens);
    std::set<std::string> seen = {base.ToHex()};
    for (uint32_t i = 0; i < page; ++i) {
      std::vector<TokenId> changed = tokens;
      changed[i] ^= 1;  // one bit of one token
      EXPECT_TRUE(seen.insert(ChainPageHash(root, changed).ToHex()).second) << "position " << i;
    }
    // Token order matters too.
    std::vector<TokenId> swapped = tokens;
    std::swap(swapped[0], swapped[1]);
    EXPECT_NE(ChainPageHash(root, swapped), base);
  }
}

TEST(PrefixHashTest, EveryParentBitMatters) {
  const std::vector<TokenId> page(16, 3);
  const PrefixHash parent{.hi = 0x0123456789ABCDEF, .lo = 0xFEDCBA9876543210};
  const PrefixHash base = ChainPageHash(parent, page);
  for (int bit = 0; bit < 64; ++bit) {
    PrefixHash p = parent;
    p.hi ^= uint64_t{1} << bit;
    EXPECT_NE(ChainPageHash(p, page), base) << "hi bit " << bit;
    p = parent;
    p.lo ^= uint64_t{1} << bit;
    EXPECT_NE(ChainPageHash(p, page), base) << "lo bit " << bit;
  }
  // hi and lo are not interchangeable.
  EXPECT_NE(ChainPageHash(PrefixHash{.hi = 1, .lo = 2}, page),
            ChainPageHash(PrefixHash{.hi = 2, .lo = 1}, page));
}

TEST(PrefixHashTest, EveryNamespacePartMatters) {
  const std::vector<TokenId> tokens = ChainTokens();
  struct Variant {
    std::string name;
    std::function<Namespace()> make;
  };
  const KvLayout base = LlamaLayout(16);
  auto with = [&](std::function<void(KvLayout&)> mutate) {
    KvLayout l = base;
    mutate(l);
    return l;
  };
  const std::vector<Variant> variants = {
      {"base", [&] { return MakeNamespace("acme", kLlama, base); }},
      {"tenant", [&] { return MakeNamespace("acme2", kLlama, base); }},
      {"tenant case", [&] { return MakeNamespace("Acme", kLlama, base); }},
      {"model", [&] { return MakeNamespace("acme", "meta-llama/Llama-3.1-8B", base); }},
      {"num_layers",
       [&] { return MakeNamespace("acme", kLlama, with([](KvLayout& l) { l.num_layers = 33; })); }},
      {"num_kv_heads",
       [&] {
         return MakeNamespace("acme", kLlama, with([](KvLayout& l) { l.num_kv_heads = 4; }));
       }},
      {"head_dim",
       [&] { return MakeNamespace("acme", kLlama, with([](KvLayout& l) { l.head_dim = 64; })); }},
      {"dtype",
       [&] {
         return MakeNamespace("acme", kLlama, with([](KvLayout& l) { l.dtype = DType::kFloat16; }));
       }},
      {"page_tokens",
       [&] {
         return MakeNamespace("acme", kLlama, with([](KvLayout& l) { l.page_tokens = 32; }));
       }},
      {"format",
       [&] {
         return MakeNamespace("acme", kLlama, with([](KvLayout& l) {
                                l.format = KvFormat::kMlaLatent;
                                l.num_kv_heads = 1;
                              }));
       }},
      {"heads 1 only",
       [&] {
         return MakeNamespace("acme", kLlama, with([](KvLayout& l) { l.num_kv_heads = 1; }));
       }},
      {"tp_world",
       [&] { return MakeNamespace("acme", kLlama, with([](KvLayout& l) { l.tp_world = 2; })); }},
      {"tp_rank",
       [&] {
         return MakeNamespace("acme", kLlama, with([](KvLayout& l) {
                                l.tp_rank = 1;
                                l.tp_world = 2;
                              }));
       }},
  };
  std::set<std::string> roots;
  std::set<std::string> firsts;
  for (const Variant& v : variants) {
    const PrefixHash root = NamespaceHash(v.make());
    EXPECT_TRUE(roots.insert(root.ToHex()).second) << v.name;
    // The same tokens under another namespace never give the same prefix.
    const PrefixHash first = PrefixHashAt(root, absl::Span<const TokenId>(tokens).first(16), 16);
    EXPECT_TRUE(firsts.insert(first.ToHex()).second) << v.name;
  }
  EXPECT_EQ(roots.size(), variants.size());
}

TEST(PrefixHashTest, NamespaceHashIsDeterministic) {
  EXPECT_EQ(NamespaceHash(NsA()), NamespaceHash(NsA()));
  EXPECT_EQ(NamespaceHash(NsD()),
            NamespaceHash(MakeNamespace(
                "acme", "deepseek-ai/DeepSeek-V3",
                Layout(61, 1, 576, DType::kBFloat16, 64, KvFormat::kMlaLatent, 0, 1))));
}

// Pages of up to 256 tokens are hashed in one shot from a stack buffer, longer
// ones are streamed (prefix_hash.cc). Both paths are pinned by Python-computed
// values on each side of the switch-over, and then exercised at random sizes
// around it.
TEST(PrefixHashGoldenTest, BothSidesOfTheOneShotLimit) {
  const PrefixHash a = NamespaceHash(NsA());
  const std::vector<TokenId> long_tokens = LongTokens();
  const absl::Span<const TokenId> tokens(long_tokens);
  EXPECT_EQ(Hex(ChainPageHash(a, tokens.first(128))), "fa730a3243908520dc5cee13fdaae41a");
  EXPECT_EQ(Hex(ChainPageHash(a, tokens.first(129))), "b7c050d4ac500a961b084a484bf0db7d");
  EXPECT_EQ(Hex(ChainPageHash(a, tokens.first(256))), "5ad9273a231cbe4f93767072722442f1");
  EXPECT_EQ(Hex(ChainPageHash(a, tokens.first(257))), "780f7a9eb3b098ed4cf308210d6f7cc6");
  EXPECT_EQ(Hex(ChainPageHash(a, tokens.first(1024))), "8d0737900f29982dc9e11b0f94d79627");
}

TEST(PrefixHashTest, RandomPageSizesAroundTheOneShotLimit) {
  std::mt19937 rng(20240611);
  std::vector<TokenId> tokens(8192);
  for (TokenId& t : tokens) t = rng();
  const PrefixHash root = NamespaceHash(NsB());
  for (uint32_t page = 248; page <= 264; ++page) {
    SCOPED_TRACE(page);
    const std::vector<PrefixHash> chain = PrefixHashes(root, tokens, page);
    ASSERT_EQ(chain.size(), 8192 / page);
    const std::vector<PrefixHash> again = PrefixHashes(root, tokens, page);
    EXPECT_EQ(chain, again);
    std::set<PrefixHash> distinct(chain.begin(), chain.end());
    EXPECT_EQ(distinct.size(), chain.size());
    // Continue from h_1 over the rest: same tail.
    const std::vector<PrefixHash> tail =
        PrefixHashes(chain[0], absl::Span<const TokenId>(tokens).subspan(page), page);
    ASSERT_EQ(tail.size(), chain.size() - 1);
    EXPECT_TRUE(std::equal(tail.begin(), tail.end(), chain.begin() + 1));
  }
}

// ---------------------------------------------------------------------------
// Hex.

TEST(PrefixHashHexTest, RoundTrip) {
  const PrefixHash h{.hi = 0x0123456789ABCDEF, .lo = 0x00000000000000FF};
  EXPECT_EQ(h.ToHex(), "0123456789abcdef00000000000000ff");
  PrefixHash parsed;
  ASSERT_TRUE(PrefixHash::FromHex(h.ToHex(), &parsed));
  EXPECT_EQ(parsed, h);
  ASSERT_TRUE(PrefixHash::FromHex("0123456789ABCDEF00000000000000FF", &parsed));
  EXPECT_EQ(parsed, h);
  EXPECT_EQ(PrefixHash{}.ToHex(), std::string(32, '0'));
  const PrefixHash ones{.hi = ~uint64_t{0}, .lo = ~uint64_t{0}};
  EXPECT_EQ(ones.ToHex(), std::string(32, 'f'));

  std::mt19937_64 rng(7);
  for (int i = 0; i < 1000; ++i) {
    const PrefixHash r{.hi = rng(), .lo = rng()};
    PrefixHash back;
    ASSERT_TRUE(PrefixHash::FromHex(r.ToHex(), &back));
    ASSERT_EQ(back, r);
  }
}

TEST(PrefixHashHexTest, RejectsBadInput) {
  const PrefixHash sentinel{.hi = 42, .lo = 43};
  const std::string good = "0123456789abcdef0123456789abcdef";
  const std::vector<std::string> bad = {
      "",
      good.substr(1),                      // 31 digits
      good + "0",                          // 33 digits
      "0x23456789abcdef0123456789abcdef",  // prefix
      "0123456789abcdeg0123456789abcdef",  // g
      " 123456789abcdef0123456789abcdef",  // space
      "0123456789abcdef0123456789abcde-",  // sign
      std::string("0123456789abcdef\0"
                  "123456789abcdef",
                  32),  // NUL
  };
  for (const std::string& s : bad) {
    PrefixHash out = sentinel;
    EXPECT_FALSE(PrefixHash::FromHex(s, &out)) << "\"" << s << "\"";
    EXPECT_EQ(out, sentinel) << "\"" << s << "\"";
  }
}

TEST(BlobKeyTest, HexIsTheHashHex) {
  const BlobKey key{.hash = PrefixHash{.hi = 1, .lo = 2}};
  EXPECT_EQ(key.ToHex(), "00000000000000010000000000000002");
}

}  // namespace
}  // namespace strata::radix
