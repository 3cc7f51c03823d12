#include "store/dataplane/wire_convert.h"

#include <string_view>

#include "absl/strings/str_cat.h"

namespace strata::store::dataplane::internal {

namespace wire = transport::wire;

radix::BlobKey KeyOf(const wire::BlobKeyBits& bits) {
  return radix::BlobKey{radix::PrefixHash{.hi = bits.hi, .lo = bits.lo}};
}

wire::BlobKeyBits BitsOf(const radix::BlobKey& key) {
  return wire::BlobKeyBits{key.hash.hi, key.hash.lo};
}

absl::StatusOr<radix::Namespace> NamespaceOf(absl::Span<const uint8_t> encoding, const char* what) {
  absl::StatusOr<radix::Namespace> ns = radix::Namespace::FromCanonicalEncoding(
      std::string_view(reinterpret_cast<const char*>(encoding.data()), encoding.size()));
  if (!ns.ok()) return absl::InvalidArgumentError(absl::StrCat(what, ": ", ns.status().message()));
  return ns;
}

absl::StatusOr<std::vector<core::ReadRange>> ReadRangesOf(
    absl::Span<const wire::ReadRangeBits> ranges) {
  uint64_t chunks = 0;
  for (const wire::ReadRangeBits& r : ranges) {
    const uint64_t layers = r.layer_end > r.layer_begin ? r.layer_end - r.layer_begin : 0;
    chunks += layers * r.num_pages;  // each term < 2^64; the sum is checked after each
    if (chunks > wire::kMaxReadChunks) {
      return absl::InvalidArgumentError(
          absl::StrCat("READ: the ranges cover more than ", wire::kMaxReadChunks, " chunks"));
    }
  }
  std::vector<core::ReadRange> out;
  out.reserve(ranges.size());
  for (const wire::ReadRangeBits& r : ranges) {
    out.push_back(core::ReadRange{.blob = KeyOf(r.key),
                                  .first_page = r.first_page,
                                  .num_pages = r.num_pages,
                                  .layer_begin = r.layer_begin,
                                  .layer_end = r.layer_end});
  }
  return out;
}

core::PutRequest PutRequestOf(const wire::PutHeader& header, const wire::PutPayload& payload) {
  core::PutRequest request;
  if (header.has_parent) {
    request.parent = core::BlobParent{KeyOf(payload.parent_key), header.parent_pages};
  }
  if (header.has_segment_start) {
    request.segment_start =
        core::SegmentStart{.hash = KeyOf(payload.segment_hash).hash, .pages = header.segment_pages};
  }
  request.tokens = payload.tokens;
  request.bytes = header.bytes;
  request.checksums = payload.checksums;
  if (header.has_key) request.key = KeyOf(payload.key);
  return request;
}

}  // namespace strata::store::dataplane::internal
