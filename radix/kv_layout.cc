#include "strata/radix/kv_layout.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "glog/logging.h"

#include "strata/base/absl_view.h"
#include "strata/base/status_macros.h"

namespace strata::radix {
namespace {

struct DTypeInfo {
  DType dtype;
  uint32_t size;
  std::string_view name;
};

constexpr DTypeInfo kDTypes[] = {
    {DType::kFloat16, 2, "float16"},
    {DType::kBFloat16, 2, "bfloat16"},
    {DType::kFloat32, 4, "float32"},
    {DType::kFloat8E4M3, 1, "float8_e4m3"},
    {DType::kFloat8E5M2, 1, "float8_e5m2"},
    {DType::kInt8, 1, "int8"},
    {DType::kUInt8, 1, "uint8"},
};

struct DTypeAlias {
  std::string_view alias;
  DType dtype;
};

constexpr DTypeAlias kDTypeAliases[] = {
    {"fp16", DType::kFloat16},
    {"half", DType::kFloat16},
    {"bf16", DType::kBFloat16},
    {"fp32", DType::kFloat32},
    {"float", DType::kFloat32},
    {"fp8_e4m3", DType::kFloat8E4M3},
    {"float8_e4m3fn", DType::kFloat8E4M3},
    {"fp8_e5m2", DType::kFloat8E5M2},
};

const DTypeInfo* FindDType(DType dtype) {
  for (const DTypeInfo& info : kDTypes) {
    if (info.dtype == dtype) return &info;
  }
  return nullptr;
}

std::string DTypeAllowed() {
  std::string out;
  for (const DTypeInfo& info : kDTypes) {
    absl::StrAppend(&out, out.empty() ? "" : ", ", static_cast<int>(info.dtype), "=",
                    base::AbslView(info.name));
  }
  return out;
}

bool IsKnownFormat(KvFormat format) {
  return format == KvFormat::kKeyValue || format == KvFormat::kMlaLatent;
}

absl::Status CheckRange(std::string_view field, uint64_t value, uint64_t lo, uint64_t hi) {
  if (value >= lo && value <= hi) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("KvLayout.", base::AbslView(field), " = ", value,
                                                 " is out of range [", lo, ", ", hi, "]"));
}

}  // namespace

uint32_t DTypeSize(DType dtype) {
  const DTypeInfo* info = FindDType(dtype);
  return info == nullptr ? 0 : info->size;
}

std::string DTypeName(DType dtype) {
  const DTypeInfo* info = FindDType(dtype);
  if (info == nullptr) return absl::StrCat("unknown(", static_cast<int>(dtype), ")");
  return std::string(info->name);
}

absl::StatusOr<DType> ParseDType(std::string_view name) {
  for (const DTypeInfo& info : kDTypes) {
    if (info.name == name) return info.dtype;
  }
  for (const DTypeAlias& alias : kDTypeAliases) {
    if (alias.alias == name) return alias.dtype;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown dtype \"", base::AbslView(name), "\" (allowed: ", DTypeAllowed(), ")"));
}

std::string KvFormatName(KvFormat format) {
  switch (format) {
    case KvFormat::kKeyValue:
      return "key_value";
    case KvFormat::kMlaLatent:
      return "mla_latent";
  }
  return absl::StrCat("unknown(", static_cast<int>(format), ")");
}

absl::StatusOr<KvFormat> ParseKvFormat(std::string_view name) {
  if (name == "key_value") return KvFormat::kKeyValue;
  if (name == "mla_latent") return KvFormat::kMlaLatent;
  return absl::InvalidArgumentError(absl::StrCat("unknown KV format \"", base::AbslView(name),
                                                 "\" (allowed: key_value, mla_latent)"));
}

absl::Status KvLayout::Validate() const {
  STRATA_RETURN_IF_ERROR(CheckRange("num_layers", num_layers, 1, kMaxLayers));
  if (!IsKnownFormat(format)) {
    return absl::InvalidArgumentError(
        absl::StrCat("KvLayout.format = ", static_cast<int>(format),
                     " is not a known KvFormat (allowed: 1=key_value, 2=mla_latent)"));
  }
  if (format == KvFormat::kMlaLatent && num_kv_heads != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("KvLayout.num_kv_heads = ", num_kv_heads,
                     " is out of range [1, 1] for format mla_latent (one latent vector per "
                     "token per layer)"));
  }
  STRATA_RETURN_IF_ERROR(CheckRange("num_kv_heads", num_kv_heads, 1, kMaxKvHeads));
  STRATA_RETURN_IF_ERROR(CheckRange("head_dim", head_dim, 1, kMaxHeadDim));
  if (FindDType(dtype) == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("KvLayout.dtype = ", static_cast<int>(dtype),
                     " is not a known DType (allowed: ", DTypeAllowed(), ")"));
  }
  STRATA_RETURN_IF_ERROR(CheckRange("page_tokens", page_tokens, 1, kMaxPageTokens));
  STRATA_RETURN_IF_ERROR(CheckRange("tp_world", tp_world, 1, kMaxTpWorld));
  if (tp_rank >= tp_world) {
    return absl::InvalidArgumentError(absl::StrCat("KvLayout.tp_rank = ", tp_rank,
                                                   " is out of range [0, ", tp_world - 1,
                                                   "] (tp_world = ", tp_world, ")"));
  }
  // Every factor is bounded above, so this product is < 2^54: no overflow.
  const uint64_t page_bytes = BytesPerPage();
  if (page_bytes > kMaxPageBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("KvLayout bytes per page (all layers) = ", page_bytes, " is out of range [1, ",
                     kMaxPageBytes, "] (", ToString(), ")"));
  }
  return absl::OkStatus();
}

uint64_t KvLayout::BytesPerKvBlock() const {
  return uint64_t{page_tokens} * num_kv_heads * head_dim * DTypeSize(dtype);
}

uint64_t KvLayout::BytesPerLayerPage() const {
  return BytesPerKvBlock() * (format == KvFormat::kKeyValue ? 2 : 1);
}

uint64_t KvLayout::BytesPerPage() const { return BytesPerLayerPage() * num_layers; }

std::string KvLayout::ToString() const {
  return absl::StrCat("KvLayout{layers=", num_layers, " kv_heads=", num_kv_heads,
                      " head_dim=", head_dim, " dtype=", DTypeName(dtype),
                      " page_tokens=", page_tokens, " format=", KvFormatName(format),
                      " tp=", tp_rank, "/", tp_world, "}");
}

absl::Status CheckCompatible(const KvLayout& expected, const KvLayout& got) {
  auto mismatch = [](std::string_view field, const auto& want, const auto& have) {
    return absl::FailedPreconditionError(absl::StrCat("KV layout mismatch: ", base::AbslView(field),
                                                      " expected ", want, ", got ", have));
  };
  if (expected.num_layers != got.num_layers) {
    return mismatch("num_layers", expected.num_layers, got.num_layers);
  }
  if (expected.num_kv_heads != got.num_kv_heads) {
    return mismatch("num_kv_heads", expected.num_kv_heads, got.num_kv_heads);
  }
  if (expected.head_dim != got.head_dim) {
    return mismatch("head_dim", expected.head_dim, got.head_dim);
  }
  if (expected.dtype != got.dtype) {
    return mismatch("dtype", DTypeName(expected.dtype), DTypeName(got.dtype));
  }
  if (expected.page_tokens != got.page_tokens) {
    return mismatch("page_tokens", expected.page_tokens, got.page_tokens);
  }
  if (expected.format != got.format) {
    return mismatch("format", KvFormatName(expected.format), KvFormatName(got.format));
  }
  if (expected.tp_rank != got.tp_rank) {
    return mismatch("tp_rank", expected.tp_rank, got.tp_rank);
  }
  if (expected.tp_world != got.tp_world) {
    return mismatch("tp_world", expected.tp_world, got.tp_world);
  }
  DCHECK(expected == got) << "CheckCompatible misses a KvLayout field";
  return absl::OkStatus();
}

absl::StatusOr<BlobLayout> BlobLayout::Create(const KvLayout& layout, uint32_t blob_pages) {
  STRATA_RETURN_IF_ERROR(layout.Validate());
  if (blob_pages == 0) {
    return absl::InvalidArgumentError("BlobLayout: blob_pages = 0 is out of range [1, 4294967295]");
  }
  return BlobLayout(layout, blob_pages);
}

uint64_t BlobLayout::TotalBytes() const { return layout_.BytesPerPage() * blob_pages_; }

absl::StatusOr<ByteRange> BlobLayout::LayerPageRange(uint32_t layer, uint32_t first_page,
                                                     uint32_t num_pages) const {
  if (num_pages == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("BlobLayout: empty page range at page ", first_page, " of layer ", layer));
  }
  if (layer >= layout_.num_layers) {
    return absl::OutOfRangeError(absl::StrCat("BlobLayout: layer ", layer, " is out of range [0, ",
                                              layout_.num_layers - 1, "]"));
  }
  const uint64_t end_page = uint64_t{first_page} + num_pages;
  if (end_page > blob_pages_) {
    return absl::OutOfRangeError(absl::StrCat("BlobLayout: pages [", first_page, ", ", end_page,
                                              ") are not inside the blob's pages [0, ", blob_pages_,
                                              ")"));
  }
  const uint64_t layer_page_bytes = layout_.BytesPerLayerPage();
  return ByteRange{
      .offset = (uint64_t{layer} * blob_pages_ + first_page) * layer_page_bytes,
      .length = uint64_t{num_pages} * layer_page_bytes,
  };
}

absl::StatusOr<std::vector<ByteRange>> BlobLayout::PageRangeOfAllLayers(uint32_t first_page,
                                                                        uint32_t num_pages) const {
  std::vector<ByteRange> ranges;
  ranges.reserve(layout_.num_layers);
  for (uint32_t layer = 0; layer < layout_.num_layers; ++layer) {
    STRATA_ASSIGN_OR_RETURN(ByteRange range, LayerPageRange(layer, first_page, num_pages));
    ranges.push_back(range);
  }
  return ranges;
}

}  // namespace strata::radix
