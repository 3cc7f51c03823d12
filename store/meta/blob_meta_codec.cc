#include "strata/store/meta/blob_meta_codec.h"

#include <bit>
#include <cstring>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "glog/logging.h"

#include "store/meta/byte_io.h"
#include "strata/base/status_macros.h"
#include "strata/store/meta/token_codec.h"
#include "xxhash.h"

namespace strata::store::meta {
namespace {

constexpr uint8_t kFlagParent = 1 << 0;
constexpr uint8_t kFlagInDram = 1 << 1;
constexpr uint8_t kFlagSsd = 1 << 2;
constexpr uint8_t kFlagPinned = 1 << 3;
constexpr uint8_t kFlagSegmentStart = 1 << 4;
constexpr uint8_t kKnownFlags =
    kFlagParent | kFlagInDram | kFlagSsd | kFlagPinned | kFlagSegmentStart;

constexpr int64_t kPastSentinel = std::numeric_limits<int64_t>::min();
constexpr int64_t kFutureSentinel = std::numeric_limits<int64_t>::max();

uint64_t EncodeTime(absl::Time t) {
  int64_t ns;
  if (t == absl::InfinitePast()) {
    ns = kPastSentinel;
  } else if (t == absl::InfiniteFuture()) {
    ns = kFutureSentinel;
  } else {
    ns = absl::ToUnixNanos(t);  // saturates outside the range
  }
  return static_cast<uint64_t>(ns);
}

absl::Time DecodeTime(uint64_t bits) {
  const auto ns = static_cast<int64_t>(bits);
  if (ns == kPastSentinel) return absl::InfinitePast();
  if (ns == kFutureSentinel) return absl::InfiniteFuture();
  return absl::FromUnixNanos(ns);
}

uint32_t CheckedU32(size_t n, const char* what) {
  CHECK_LE(n, std::numeric_limits<uint32_t>::max()) << "BlobMeta has too many " << what;
  return static_cast<uint32_t>(n);
}

uint64_t Seal(std::string_view body) {
  return XXH3_64bits_withSeed(body.data(), body.size(), kBlobMetaSeed);
}

// Parses the body (everything before the trailer) whose checksum already holds.
class BodyParser {
 public:
  BodyParser(std::string_view body, std::string key_name)
      : in_(body), key_name_(std::move(key_name)) {}

  absl::StatusOr<BlobMeta> Parse() {
    BlobMeta m;
    uint8_t version = 0, flags = 0;
    if (!in_.ReadU8(&version)) return Loss("truncated header");
    if (version != kBlobMetaFormatVersion) {
      return Loss(absl::StrCat("unsupported format version ", version, " (this build reads ",
                               kBlobMetaFormatVersion, ")"));
    }
    if (!in_.ReadU8(&flags)) return Loss("truncated header");
    if ((flags & ~kKnownFlags) != 0) {
      return Loss(absl::StrCat("unknown flag bits 0x", absl::Hex(flags & ~kKnownFlags)));
    }
    uint64_t created = 0, last_access = 0;
    if (!in_.ReadHash(&m.key.hash) || !in_.ReadHash(&m.namespace_hash) ||
        !in_.ReadHash(&m.start_hash) || !in_.ReadU32(&m.first_page) || !in_.ReadU32(&m.pages) ||
        !in_.ReadU64(&m.bytes) || !in_.ReadU64(&m.generation) || !in_.ReadU64(&created) ||
        !in_.ReadU64(&last_access) || !in_.ReadU64(&m.hits)) {
      return Loss("truncated header");
    }
    m.created = DecodeTime(created);
    m.last_access = DecodeTime(last_access);
    m.in_dram = (flags & kFlagInDram) != 0;
    m.pinned = (flags & kFlagPinned) != 0;
    m.segment_start = (flags & kFlagSegmentStart) != 0;
    if (flags & kFlagParent) {
      BlobMetaParent parent;
      if (!in_.ReadHash(&parent.key.hash) || !in_.ReadU32(&parent.pages)) {
        return Loss("truncated parent");
      }
      m.parent = parent;
    }
    if (flags & kFlagSsd) {
      SsdLocation ssd;
      if (!in_.ReadU64(&ssd.offset) || !in_.ReadU64(&ssd.length)) return Loss("truncated ssd");
      m.ssd = ssd;
    }
    STRATA_RETURN_IF_ERROR(ParseTokens(&m));
    uint32_t num_checksums = 0;
    if (!in_.ReadU32(&num_checksums)) return Loss("truncated checksum count");
    if (in_.remaining() / 8 < num_checksums) {
      return Loss(absl::StrCat(num_checksums, " checksums but ", in_.remaining(), " bytes remain"));
    }
    m.checksums.resize(num_checksums);
    std::string_view raw;
    in_.ReadBytes(size_t{8} * num_checksums, &raw);
    if constexpr (std::endian::native == std::endian::little) {
      if (num_checksums > 0) std::memcpy(m.checksums.data(), raw.data(), raw.size());
    } else {
      for (uint32_t i = 0; i < num_checksums; ++i) {
        m.checksums[i] = absl::little_endian::Load64(raw.data() + 8 * i);
      }
    }
    if (in_.remaining() != 0) {
      return Loss(absl::StrCat(in_.remaining(), " unexpected bytes after the checksums"));
    }
    return m;
  }

 private:
  absl::Status ParseTokens(BlobMeta* m) {
    uint32_t count = 0, payload_size = 0;
    uint8_t codec = 0;
    if (!in_.ReadU32(&count) || !in_.ReadU8(&codec) || !in_.ReadU32(&payload_size)) {
      return Loss("truncated token header");
    }
    if (!IsKnownTokenCodec(codec)) {
      return Loss(absl::StrCat("unknown token codec ", codec));
    }
    std::string_view payload;
    if (!in_.ReadBytes(payload_size, &payload)) {
      return Loss(absl::StrCat("token payload of ", payload_size, " bytes but ", in_.remaining(),
                               " remain"));
    }
    absl::Status s = DecodeTokenPayload(static_cast<TokenCodec>(codec), count, payload, &m->tokens);
    if (!s.ok()) return Loss(std::string(s.message()));
    return absl::OkStatus();
  }

  absl::Status Loss(std::string_view what) const {
    return absl::DataLossError(absl::StrCat("blob meta ", key_name_, ": ", std::string(what)));
  }

  ByteReader in_;
  std::string key_name_;
};

}  // namespace

void AppendBlobMeta(const BlobMeta& meta, std::string* out) {
  const size_t start = out->size();
  const TokenCodec codec = SmallestTokenCodec(meta.tokens);
  const size_t payload_size = TokenPayloadSize(codec, meta.tokens);
  out->reserve(start + kBlobMetaMinSize + 36 + payload_size + 8 * meta.checksums.size());

  uint8_t flags = 0;
  if (meta.parent) flags |= kFlagParent;
  if (meta.in_dram) flags |= kFlagInDram;
  if (meta.ssd) flags |= kFlagSsd;
  if (meta.pinned) flags |= kFlagPinned;
  if (meta.segment_start) flags |= kFlagSegmentStart;
  PutU8(kBlobMetaFormatVersion, out);
  PutU8(flags, out);
  PutHash(meta.key.hash, out);
  PutHash(meta.namespace_hash, out);
  PutHash(meta.start_hash, out);
  PutU32(meta.first_page, out);
  PutU32(meta.pages, out);
  PutU64(meta.bytes, out);
  PutU64(meta.generation, out);
  PutU64(EncodeTime(meta.created), out);
  PutU64(EncodeTime(meta.last_access), out);
  PutU64(meta.hits, out);
  if (meta.parent) {
    PutHash(meta.parent->key.hash, out);
    PutU32(meta.parent->pages, out);
  }
  if (meta.ssd) {
    PutU64(meta.ssd->offset, out);
    PutU64(meta.ssd->length, out);
  }
  PutU32(CheckedU32(meta.tokens.size(), "tokens"), out);
  PutU8(static_cast<uint8_t>(codec), out);
  PutU32(CheckedU32(payload_size, "token payload bytes"), out);
  const size_t payload_start = out->size();
  AppendTokenPayload(codec, meta.tokens, out);
  DCHECK_EQ(out->size() - payload_start, payload_size);
  PutU32(CheckedU32(meta.checksums.size(), "checksums"), out);
  if constexpr (std::endian::native == std::endian::little) {
    out->append(reinterpret_cast<const char*>(meta.checksums.data()), 8 * meta.checksums.size());
  } else {
    for (uint64_t c : meta.checksums) PutU64(c, out);
  }
  PutU64(Seal(std::string_view(*out).substr(start)), out);
}

std::string EncodeBlobMeta(const BlobMeta& meta) {
  std::string out;
  AppendBlobMeta(meta, &out);
  return out;
}

absl::StatusOr<BlobMeta> DecodeBlobMeta(std::string_view bytes,
                                        const std::optional<radix::BlobKey>& expected_key) {
  std::string key_name = expected_key ? expected_key->ToHex() : "?";
  if (bytes.size() < kBlobMetaMinSize) {
    return absl::DataLossError(absl::StrCat("blob meta ", key_name, ": ", bytes.size(),
                                            " bytes, shorter than the smallest record (",
                                            kBlobMetaMinSize, ")"));
  }
  const std::string_view body = bytes.substr(0, bytes.size() - 8);
  ByteReader trailer(bytes.substr(bytes.size() - 8));
  uint64_t stored = 0;
  trailer.ReadU64(&stored);
  if (Seal(body) != stored) {
    return absl::DataLossError(absl::StrCat("blob meta ", key_name,
                                            ": checksum mismatch (torn or corrupt record of ",
                                            bytes.size(), " bytes)"));
  }
  if (!expected_key) {
    ByteReader header(body.substr(2));
    radix::PrefixHash key;
    if (header.ReadHash(&key)) key_name = key.ToHex();
  }
  BodyParser parser(body, key_name);
  absl::StatusOr<BlobMeta> meta = parser.Parse();
  if (meta.ok() && expected_key && meta->key != *expected_key) {
    return absl::DataLossError(
        absl::StrCat("blob meta ", key_name, ": record holds key ", meta->key.ToHex()));
  }
  return meta;
}

}  // namespace strata::store::meta
