#include "strata/proto/repeated_convert.h"

#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

#include "strata/base/status_macros.h"
#include "strata/proto/limits.h"

namespace strata::proto {
namespace {

absl::string_view Sv(std::string_view s) { return absl::string_view(s.data(), s.size()); }

}  // namespace

absl::Status CheckCount(std::string_view field, size_t count, size_t limit) {
  if (count <= limit) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(Sv(field), ": ", count, " entries exceed the limit of ", limit));
}

absl::StatusOr<absl::Span<const radix::TokenId>> TokensFromProto(
    const google::protobuf::RepeatedField<uint32_t>& tokens, std::string_view field) {
  STRATA_RETURN_IF_ERROR(
      CheckCount(field, static_cast<size_t>(tokens.size()), kMaxTokensPerRequest));
  return absl::MakeConstSpan(tokens.data(), static_cast<size_t>(tokens.size()));
}

void TokensToProto(absl::Span<const radix::TokenId> tokens,
                   google::protobuf::RepeatedField<uint32_t>* out) {
  out->Clear();
  out->Add(tokens.begin(), tokens.end());
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
    return absl::InvalidArgumentError(absl::StrCat(Sv(field), ".length: must be > 0, got 0"));
  }
  if (range.offset() > std::numeric_limits<uint64_t>::max() - range.length()) {
    return absl::InvalidArgumentError(absl::StrCat(Sv(field), ": offset ", range.offset(),
                                                   " + length ", range.length(),
                                                   " overflows 64 bits"));
  }
  return radix::ByteRange{.offset = range.offset(), .length = range.length()};
}

}  // namespace strata::proto
