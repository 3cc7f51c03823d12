// Fuzz-style tests of DecodeBlobMeta: truncated, bit-flipped and garbage encodings must be
// DATA_LOSS (or, for a mutation that happens to be a valid encoding, decode cleanly) and never
// crash, read out of bounds (ASan builds check) or allocate without bound.
#include <cstdint>
#include <random>
#include <string>

#include "absl/base/internal/endian.h"
#include "gtest/gtest.h"

#include "store/meta/test_records.h"
#include "strata/base/status_test_macros.h"
#include "strata/store/meta/blob_meta_codec.h"
#include "xxhash.h"

namespace strata::store::meta {
namespace {

constexpr radix::PrefixHash kFuzzNs{0xABC, 0xDEF};

// Rewrites the trailing XXH3 so that the checksum holds over whatever the body is now: this
// reaches the parser's own checks, which a plain corruption never gets past.
void Reseal(std::string* bytes) {
  if (bytes->size() < 8) return;
  const size_t body = bytes->size() - 8;
  absl::little_endian::Store64(bytes->data() + body,
                               XXH3_64bits_withSeed(bytes->data(), body, kBlobMetaSeed));
}

// OK or DATA_LOSS; if OK, the value re-encodes and decodes to itself.
void ExpectDecodesOrDataLoss(const std::string& bytes) {
  absl::StatusOr<BlobMeta> decoded = DecodeBlobMeta(bytes);
  if (!decoded.ok()) {
    ASSERT_EQ(decoded.status().code(), absl::StatusCode::kDataLoss) << decoded.status();
    return;
  }
  ASSERT_OK_AND_ASSIGN(BlobMeta again, DecodeBlobMeta(EncodeBlobMeta(*decoded)));
  ASSERT_EQ(again, *decoded);
}

TEST(BlobMetaFuzzTest, EveryTruncationIsDataLoss) {
  for (uint64_t seed : {0, 1, 2, 4}) {
    const std::string b = EncodeBlobMeta(TestBlob(seed, kFuzzNs));
    for (size_t n = 0; n < b.size(); ++n) {
      EXPECT_CODE(DecodeBlobMeta(b.substr(0, n)), absl::StatusCode::kDataLoss) << n;
    }
  }
}

TEST(BlobMetaFuzzTest, EverySingleBitFlipIsDataLoss) {
  const std::string b = EncodeBlobMeta(TestBlob(4, kFuzzNs));
  for (size_t bit = 0; bit < b.size() * 8; ++bit) {
    std::string flipped = b;
    flipped[bit / 8] = static_cast<char>(flipped[bit / 8] ^ (1 << (bit % 8)));
    absl::StatusOr<BlobMeta> decoded = DecodeBlobMeta(flipped);
    ASSERT_EQ(decoded.status().code(), absl::StatusCode::kDataLoss) << "bit " << bit;
  }
}

TEST(BlobMetaFuzzTest, ResealedTruncationsAreDataLoss) {
  // A record cut short and resealed (a writer bug, not a torn write): the parser must find
  // the missing bytes itself.
  const std::string b = EncodeBlobMeta(TestBlob(4, kFuzzNs));
  for (size_t n = kBlobMetaMinSize; n < b.size(); ++n) {
    std::string cut = b.substr(0, n);
    Reseal(&cut);
    EXPECT_CODE(DecodeBlobMeta(cut), absl::StatusCode::kDataLoss) << n;
  }
}

TEST(BlobMetaFuzzTest, ResealedMutationsNeverCrash) {
  std::mt19937_64 rng(20260101);
  int decoded_ok = 0;
  for (int round = 0; round < 20000; ++round) {
    std::string b = EncodeBlobMeta(TestBlob(rng() % 64, kFuzzNs));
    const int mutations = 1 + static_cast<int>(rng() % 4);
    for (int i = 0; i < mutations; ++i) {
      const size_t at = rng() % (b.size() - 8);
      switch (rng() % 3) {
        case 0:  // flip a bit
          b[at] = static_cast<char>(b[at] ^ (1 << (rng() % 8)));
          break;
        case 1:  // random byte
          b[at] = static_cast<char>(rng());
          break;
        case 2:  // a large count where a length lives
          b[at] = static_cast<char>(0xFF);
          break;
      }
    }
    Reseal(&b);
    absl::StatusOr<BlobMeta> decoded = DecodeBlobMeta(b);
    if (decoded.ok()) ++decoded_ok;
    ExpectDecodesOrDataLoss(b);
  }
  // Mutations of hashes, times and counters leave a valid record; lengths and flags do not.
  EXPECT_GT(decoded_ok, 0);
  EXPECT_LT(decoded_ok, 20000);
}

TEST(BlobMetaFuzzTest, ResealedGarbageNeverCrashes) {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 20000; ++round) {
    std::string b(8 + rng() % 300, '\0');
    for (char& c : b) c = static_cast<char>(rng());
    b[0] = 1;  // the version, so that parsing goes further
    Reseal(&b);
    ExpectDecodesOrDataLoss(b);
  }
}

}  // namespace
}  // namespace strata::store::meta
