#include "strata/store/meta/token_codec.h"

#include <algorithm>
#include <bit>

#include "absl/strings/str_cat.h"

namespace strata::store::meta {
namespace {

using radix::TokenId;

size_t VarintSize(uint32_t v) {
  // 1 + floor(bit_width(v) - 1) / 7, with 0 taking one byte.
  const int bits = std::bit_width(v | 1u);
  return static_cast<size_t>((bits + 6) / 7);
}

void AppendVarint(uint32_t v, std::string* out) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

uint32_t ZigZag(uint32_t delta) {
  const int32_t d = static_cast<int32_t>(delta);
  return (static_cast<uint32_t>(d) << 1) ^ static_cast<uint32_t>(d >> 31);
}

uint32_t UnZigZag(uint32_t z) { return (z >> 1) ^ (0u - (z & 1u)); }

// At least 1, so that a payload byte holds at most 8 tokens: a decoder never allocates
// more than 8 tokens per byte it was given.
uint32_t PackedWidth(absl::Span<const TokenId> tokens) {
  uint32_t max = 1;
  for (TokenId t : tokens) max = std::max(max, t);
  return static_cast<uint32_t>(std::bit_width(max));
}

uint64_t PackedBytes(uint64_t count, uint32_t width) { return (count * width + 7) / 8; }

absl::Status Loss(TokenCodec codec, std::string_view what) {
  return absl::DataLossError(
      absl::StrCat("token payload (", TokenCodecName(codec), "): ", std::string(what)));
}

// Reads one minimal LEB128 u32 from [*pos, end). False if malformed or truncated.
bool ReadVarint(const unsigned char** pos, const unsigned char* end, uint32_t* value) {
  uint32_t v = 0;
  const unsigned char* p = *pos;
  for (int i = 0; i < 5; ++i) {
    if (p == end) return false;
    const uint32_t byte = *p++;
    if (i == 4 && byte > 0x0F) return false;  // more than 32 bits
    if (i > 0 && byte == 0) return false;     // not minimal
    v |= (byte & 0x7F) << (7 * i);
    if ((byte & 0x80) == 0) {
      *pos = p;
      *value = v;
      return true;
    }
  }
  return false;
}

absl::Status DecodeVarints(TokenCodec codec, uint32_t count, std::string_view payload,
                           std::vector<TokenId>* out) {
  // Every token takes at least one byte: check before allocating.
  if (payload.size() < count) return Loss(codec, "shorter than one byte per token");
  out->resize(count);
  const auto* p = reinterpret_cast<const unsigned char*>(payload.data());
  const auto* end = p + payload.size();
  uint32_t prev = 0;
  for (uint32_t i = 0; i < count; ++i) {
    uint32_t v = 0;
    if (!ReadVarint(&p, end, &v)) {
      return Loss(codec, absl::StrCat("malformed or truncated varint at token ", i));
    }
    if (codec == TokenCodec::kDelta && i > 0) v = prev + UnZigZag(v);
    (*out)[i] = v;
    prev = v;
  }
  if (p != end) {
    return Loss(codec, absl::StrCat(end - p, " bytes past the last token"));
  }
  return absl::OkStatus();
}

absl::Status DecodeBitPacked(uint32_t count, std::string_view payload, std::vector<TokenId>* out) {
  constexpr TokenCodec kCodec = TokenCodec::kBitPacked;
  if (payload.empty()) return Loss(kCodec, "no width byte");
  const uint32_t width = static_cast<unsigned char>(payload[0]);
  if (width < 1 || width > 32) {
    return Loss(kCodec, absl::StrCat("width ", width, " outside 1..32"));
  }
  const std::string_view bits = payload.substr(1);
  if (bits.size() != PackedBytes(count, width)) {
    return Loss(kCodec, absl::StrCat(bits.size(), " packed bytes, ", count, " tokens of ", width,
                                     " bits need ", PackedBytes(count, width)));
  }
  out->resize(count);
  const auto* p = reinterpret_cast<const unsigned char*>(bits.data());
  const uint64_t mask = (uint64_t{1} << width) - 1;
  uint64_t acc = 0;  // bits not yet consumed, lowest first
  uint32_t held = 0;
  size_t next = 0;
  for (uint32_t i = 0; i < count; ++i) {
    while (held < width) {
      acc |= uint64_t{p[next++]} << held;
      held += 8;
    }
    (*out)[i] = static_cast<TokenId>(acc & mask);
    acc >>= width;
    held -= width;
  }
  if (acc != 0) return Loss(kCodec, "padding bits are not zero");
  return absl::OkStatus();
}

}  // namespace

std::string TokenCodecName(TokenCodec codec) {
  switch (codec) {
    case TokenCodec::kVarint:
      return "varint";
    case TokenCodec::kDelta:
      return "delta";
    case TokenCodec::kBitPacked:
      return "bitpacked";
  }
  return absl::StrCat("unknown(", static_cast<int>(codec), ")");
}

bool IsKnownTokenCodec(uint8_t value) {
  return value >= static_cast<uint8_t>(TokenCodec::kVarint) &&
         value <= static_cast<uint8_t>(TokenCodec::kBitPacked);
}

size_t TokenPayloadSize(TokenCodec codec, absl::Span<const TokenId> tokens) {
  size_t size = 0;
  switch (codec) {
    case TokenCodec::kVarint:
      for (TokenId t : tokens) size += VarintSize(t);
      return size;
    case TokenCodec::kDelta: {
      TokenId prev = 0;
      for (size_t i = 0; i < tokens.size(); ++i) {
        size += VarintSize(i == 0 ? tokens[0] : ZigZag(tokens[i] - prev));
        prev = tokens[i];
      }
      return size;
    }
    case TokenCodec::kBitPacked:
      return 1 + PackedBytes(tokens.size(), PackedWidth(tokens));
  }
  return 0;
}

TokenCodec SmallestTokenCodec(absl::Span<const TokenId> tokens) {
  TokenCodec best = TokenCodec::kVarint;
  size_t best_size = TokenPayloadSize(best, tokens);
  for (TokenCodec codec : {TokenCodec::kDelta, TokenCodec::kBitPacked}) {
    const size_t size = TokenPayloadSize(codec, tokens);
    if (size < best_size) {
      best = codec;
      best_size = size;
    }
  }
  return best;
}

void AppendTokenPayload(TokenCodec codec, absl::Span<const TokenId> tokens, std::string* out) {
  switch (codec) {
    case TokenCodec::kVarint:
      for (TokenId t : tokens) AppendVarint(t, out);
      return;
    case TokenCodec::kDelta: {
      TokenId prev = 0;
      for (size_t i = 0; i < tokens.size(); ++i) {
        AppendVarint(i == 0 ? tokens[0] : ZigZag(tokens[i] - prev), out);
        prev = tokens[i];
      }
      return;
    }
    case TokenCodec::kBitPacked: {
      const uint32_t width = PackedWidth(tokens);
      out->push_back(static_cast<char>(width));
      uint64_t acc = 0;
      uint32_t held = 0;
      for (TokenId t : tokens) {
        acc |= uint64_t{t} << held;
        held += width;
        while (held >= 8) {
          out->push_back(static_cast<char>(acc & 0xFF));
          acc >>= 8;
          held -= 8;
        }
      }
      if (held > 0) out->push_back(static_cast<char>(acc & 0xFF));
      return;
    }
  }
}

absl::Status DecodeTokenPayload(TokenCodec codec, uint32_t count, std::string_view payload,
                                std::vector<TokenId>* out) {
  switch (codec) {
    case TokenCodec::kVarint:
    case TokenCodec::kDelta:
      return DecodeVarints(codec, count, payload, out);
    case TokenCodec::kBitPacked:
      return DecodeBitPacked(count, payload, out);
  }
  return Loss(codec, "unknown codec");
}

}  // namespace strata::store::meta
