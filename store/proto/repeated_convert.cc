#include "strata/proto/repeated_convert.h"

#include <bit>
#include <cstring>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

#include "strata/base/absl_view.h"
#include "strata/base/status_macros.h"
#include "strata/proto/limits.h"

namespace strata::proto {
namespace {}  // namespace

absl::Status CheckCount(std::string_view field, size_t count, size_t limit) {
  if (count <= limit) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(base::AbslView(field), ": ", count, " entries exceed the limit of ", limit));
}

// The wire's token layout is the host's TokenId array only on a little-endian
// host. Every platform strata targets (x86-64, aarch64 Linux) is; a big-endian
// port would byte-swap here, in both directions.
static_assert(std::endian::native == std::endian::little,
              "tokens travel as little-endian uint32: add byte swaps for a big-endian host");

TokenView::TokenView(TokenView&& other) noexcept
    : copy_(std::move(other.copy_)), span_(std::exchange(other.span_, {})) {}

TokenView& TokenView::operator=(TokenView&& other) noexcept {
  if (this != &other) {
    copy_ = std::move(other.copy_);
    other.copy_.clear();
    span_ = std::exchange(other.span_, {});
  }
  return *this;
}

absl::StatusOr<TokenView> TokensFromProto(std::string_view bytes, std::string_view field) {
  if (bytes.size() % kTokenIdBytes != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(base::AbslView(field), ": ", bytes.size(),
                     " bytes is not a whole number of 4-byte token ids"));
  }
  const size_t count = bytes.size() / kTokenIdBytes;
  STRATA_RETURN_IF_ERROR(CheckCount(field, count, kMaxTokensPerRequest));
  TokenView view;
  if (count == 0) return view;
  if (reinterpret_cast<uintptr_t>(bytes.data()) % alignof(radix::TokenId) == 0) {
    // In place: the bytes are the ids (little-endian host, aligned). This reads
    // char storage through uint32_t, as zero-copy wire readers (FlatBuffers,
    // Arrow) do; it is sound in practice because nothing writes the buffer
    // while it is viewed (the parser filled it, in another translation unit).
    view.span_ = absl::MakeConstSpan(reinterpret_cast<const radix::TokenId*>(bytes.data()), count);
  } else {
    view.copy_.resize(count);
    std::memcpy(view.copy_.data(), bytes.data(), bytes.size());
    view.span_ = absl::MakeConstSpan(view.copy_);
  }
  return view;
}

void TokensToProto(absl::Span<const radix::TokenId> tokens, std::string* out) {
  if (tokens.empty()) {
    out->clear();
    return;
  }
  out->assign(reinterpret_cast<const char*>(tokens.data()), tokens.size() * kTokenIdBytes);
}

absl::StatusOr<absl::Span<const uint64_t>> ChecksumsFromProto(
    const google::protobuf::RepeatedField<uint64_t>& checksums, std::string_view field,
    size_t limit) {
  STRATA_RETURN_IF_ERROR(CheckCount(field, static_cast<size_t>(checksums.size()), limit));
  return absl::MakeConstSpan(checksums.data(), static_cast<size_t>(checksums.size()));
}

void ChecksumsToProto(absl::Span<const uint64_t> checksums,
                      google::protobuf::RepeatedField<uint64_t>* out) {
  out->Clear();
  out->Add(checksums.begin(), checksums.end());
}

void ToProto(const radix::ByteRange& range, v1::ByteRange* out) {
  out->set_offset(range.offset);
  out->set_length(range.length);
}

absl::StatusOr<radix::ByteRange> ByteRangeFromProto(const v1::ByteRange& range,
                                                    std::string_view field) {
  if (range.length() == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(base::AbslView(field), ".length: must be > 0, got 0"));
  }
  if (range.offset() > std::numeric_limits<uint64_t>::max() - range.length()) {
    return absl::InvalidArgumentError(absl::StrCat(base::AbslView(field), ": offset ",
                                                   range.offset(), " + length ", range.length(),
                                                   " overflows 64 bits"));
  }
  return radix::ByteRange{.offset = range.offset(), .length = range.length()};
}

}  // namespace strata::proto
