#include "strata/store/meta/token_codec.h"

#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"

#include "strata/base/status_test_macros.h"

namespace strata::store::meta {
namespace {

using radix::TokenId;

constexpr TokenCodec kCodecs[] = {TokenCodec::kVarint, TokenCodec::kDelta, TokenCodec::kBitPacked};

std::vector<std::vector<TokenId>> Streams() {
  std::mt19937_64 rng(42);
  std::vector<std::vector<TokenId>> streams = {
      {},
      {0},
      {7},
      {0, 0, 0, 0, 0},
      {std::numeric_limits<TokenId>::max()},
      {std::numeric_limits<TokenId>::max(), 0, std::numeric_limits<TokenId>::max(), 1},
      {127, 128, 16383, 16384, 2097151, 2097152, 268435455, 268435456},
  };
  std::vector<TokenId> random(512), run(300), mixed(77);
  for (auto& t : random) t = static_cast<TokenId>(rng() % 152064);
  for (size_t i = 0; i < run.size(); ++i) run[i] = static_cast<TokenId>(1000 + i);
  for (auto& t : mixed) t = static_cast<TokenId>(rng());
  streams.push_back(random);
  streams.push_back(run);
  streams.push_back(mixed);
  return streams;
}

TEST(TokenCodecTest, EveryCodecRoundTripsEveryStreamAndSizeIsExact) {
  for (const auto& tokens : Streams()) {
    for (TokenCodec codec : kCodecs) {
      std::string payload;
      AppendTokenPayload(codec, tokens, &payload);
      EXPECT_EQ(payload.size(), TokenPayloadSize(codec, tokens)) << TokenCodecName(codec);
      std::vector<TokenId> decoded = {99};
      ASSERT_OK(DecodeTokenPayload(codec, static_cast<uint32_t>(tokens.size()), payload, &decoded));
      EXPECT_EQ(decoded, tokens) << TokenCodecName(codec);
    }
  }
}

TEST(TokenCodecTest, SmallestCodecIsNoLargerThanAnyOther) {
  for (const auto& tokens : Streams()) {
    const size_t chosen = TokenPayloadSize(SmallestTokenCodec(tokens), tokens);
    for (TokenCodec codec : kCodecs) EXPECT_LE(chosen, TokenPayloadSize(codec, tokens));
  }
  // A run of consecutive ids is 1 byte a token as deltas, more as plain varints.
  std::vector<TokenId> run(100);
  for (size_t i = 0; i < run.size(); ++i) run[i] = static_cast<TokenId>(100000 + i);
  EXPECT_EQ(SmallestTokenCodec(run), TokenCodec::kDelta);
  // Uniform ids below 152064 take 18 bits packed, ~3 bytes as varints.
  std::mt19937 rng(1);
  std::vector<TokenId> uniform(256);
  for (auto& t : uniform) t = static_cast<TokenId>(131072 + rng() % 20000);
  EXPECT_EQ(SmallestTokenCodec(uniform), TokenCodec::kBitPacked);
  EXPECT_EQ(TokenPayloadSize(TokenCodec::kBitPacked, uniform), 1 + 256 * 18 / 8);
  // Mostly small ids with a rare large one (text): 1 byte each as varints, and the large
  // one does not widen every token as it would packed.
  std::vector<TokenId> text(64, 5);
  text[30] = 100000;
  EXPECT_EQ(SmallestTokenCodec(text), TokenCodec::kVarint);
  EXPECT_EQ(TokenPayloadSize(TokenCodec::kVarint, text), 63u + 3u);
}

TEST(TokenCodecTest, VarintLayoutIsLeb128) {
  std::string payload;
  AppendTokenPayload(TokenCodec::kVarint, std::vector<TokenId>{300, 1}, &payload);
  EXPECT_EQ(payload, std::string("\xAC\x02\x01", 3));
  payload.clear();
  // Deltas: 300, then zigzag(-299) = 597 = 0xD5 0x04.
  AppendTokenPayload(TokenCodec::kDelta, std::vector<TokenId>{300, 1}, &payload);
  EXPECT_EQ(payload, std::string("\xAC\x02\xD5\x04", 4));
  payload.clear();
  // Width 2: 1, 2, 3 -> bits 01 10 11 -> 0b00111001.
  AppendTokenPayload(TokenCodec::kBitPacked, std::vector<TokenId>{1, 2, 3}, &payload);
  EXPECT_EQ(payload, std::string("\x02\x39", 2));
}

void ExpectLoss(TokenCodec codec, uint32_t count, std::string payload) {
  std::vector<TokenId> out;
  EXPECT_CODE(DecodeTokenPayload(codec, count, payload, &out), absl::StatusCode::kDataLoss)
      << TokenCodecName(codec) << " count " << count;
}

TEST(TokenCodecTest, MalformedPayloadsAreDataLoss) {
  for (TokenCodec c : {TokenCodec::kVarint, TokenCodec::kDelta}) {
    ExpectLoss(c, 1, "");                                          // truncated
    ExpectLoss(c, 1, std::string("\x80", 1));                      // continuation with no end
    ExpectLoss(c, 1, std::string("\x81\x00", 2));                  // not minimal
    ExpectLoss(c, 1, std::string("\xFF\xFF\xFF\xFF\x10", 5));      // 33 bits
    ExpectLoss(c, 1, std::string("\xFF\xFF\xFF\xFF\x8F\x01", 6));  // 6 bytes
    ExpectLoss(c, 1, std::string("\x01\x01", 2));                  // trailing byte
    ExpectLoss(c, 1000, std::string(10, '\x01'));                  // count past the payload
  }
  ExpectLoss(TokenCodec::kBitPacked, 0, "");                              // no width byte
  ExpectLoss(TokenCodec::kBitPacked, 1, std::string("\x21\0\0\0\0", 5));  // width 33
  ExpectLoss(TokenCodec::kBitPacked, 1u << 30, std::string("\x00", 1));   // width 0
  ExpectLoss(TokenCodec::kBitPacked, 3, std::string("\x02\x39\x00", 3));  // extra byte
  ExpectLoss(TokenCodec::kBitPacked, 3, std::string("\x02", 1));          // short
  ExpectLoss(TokenCodec::kBitPacked, 3, std::string("\x02\x79", 2));      // padding bit set
  ExpectLoss(TokenCodec{9}, 0, "");
  std::vector<TokenId> out;
  ASSERT_OK(DecodeTokenPayload(TokenCodec::kBitPacked, 0, std::string("\x01", 1), &out));
  EXPECT_TRUE(out.empty());
  std::string zeros;
  AppendTokenPayload(TokenCodec::kBitPacked, std::vector<TokenId>(16, 0), &zeros);
  EXPECT_EQ(zeros, std::string("\x01\x00\x00", 3)) << "all-zero tokens pack at width 1";
}

TEST(TokenCodecTest, Names) {
  EXPECT_EQ(TokenCodecName(TokenCodec::kVarint), "varint");
  EXPECT_EQ(TokenCodecName(TokenCodec::kDelta), "delta");
  EXPECT_EQ(TokenCodecName(TokenCodec::kBitPacked), "bitpacked");
  EXPECT_EQ(TokenCodecName(TokenCodec{0}), "unknown(0)");
  EXPECT_FALSE(IsKnownTokenCodec(0));
  EXPECT_TRUE(IsKnownTokenCodec(3));
  EXPECT_FALSE(IsKnownTokenCodec(4));
}

}  // namespace
}  // namespace strata::store::meta
