#include "strata/proto/namespace_convert.h"

#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

#include "strata/base/absl_view.h"
#include "strata/base/status_macros.h"

namespace strata::proto {
namespace {

static_assert(static_cast<int>(radix::DType::kFloat16) == v1::DTYPE_FLOAT16);
static_assert(static_cast<int>(radix::DType::kBFloat16) == v1::DTYPE_BFLOAT16);
static_assert(static_cast<int>(radix::DType::kFloat32) == v1::DTYPE_FLOAT32);
static_assert(static_cast<int>(radix::DType::kFloat8E4M3) == v1::DTYPE_FLOAT8_E4M3);
static_assert(static_cast<int>(radix::DType::kFloat8E5M2) == v1::DTYPE_FLOAT8_E5M2);
static_assert(static_cast<int>(radix::DType::kInt8) == v1::DTYPE_INT8);
static_assert(static_cast<int>(radix::DType::kUInt8) == v1::DTYPE_UINT8);
static_assert(static_cast<int>(radix::KvFormat::kKeyValue) == v1::KV_FORMAT_KEY_VALUE);
static_assert(static_cast<int>(radix::KvFormat::kMlaLatent) == v1::KV_FORMAT_MLA_LATENT);

absl::Status Missing(std::string_view field) {
  return absl::InvalidArgumentError(absl::StrCat(base::AbslView(field), ": missing"));
}

// Prefixes a radix error with the wire field it came from.
absl::Status AtField(std::string_view field, const absl::Status& status) {
  if (status.ok()) return status;
  return absl::Status(status.code(), absl::StrCat(base::AbslView(field), ": ", status.message()));
}

}  // namespace

v1::DType ToProto(radix::DType dtype) { return static_cast<v1::DType>(dtype); }

v1::KvFormat ToProto(radix::KvFormat format) { return static_cast<v1::KvFormat>(format); }

absl::StatusOr<radix::DType> DTypeFromProto(int value, std::string_view field) {
  switch (value) {
    case v1::DTYPE_UNSPECIFIED:
      return Missing(field);
    case v1::DTYPE_FLOAT16:
      return radix::DType::kFloat16;
    case v1::DTYPE_BFLOAT16:
      return radix::DType::kBFloat16;
    case v1::DTYPE_FLOAT32:
      return radix::DType::kFloat32;
    case v1::DTYPE_FLOAT8_E4M3:
      return radix::DType::kFloat8E4M3;
    case v1::DTYPE_FLOAT8_E5M2:
      return radix::DType::kFloat8E5M2;
    case v1::DTYPE_INT8:
      return radix::DType::kInt8;
    case v1::DTYPE_UINT8:
      return radix::DType::kUInt8;
  }
  return absl::InvalidArgumentError(absl::StrCat(base::AbslView(field), ": unknown value ", value));
}

absl::StatusOr<radix::KvFormat> KvFormatFromProto(int value, std::string_view field) {
  switch (value) {
    case v1::KV_FORMAT_UNSPECIFIED:
      return Missing(field);
    case v1::KV_FORMAT_KEY_VALUE:
      return radix::KvFormat::kKeyValue;
    case v1::KV_FORMAT_MLA_LATENT:
      return radix::KvFormat::kMlaLatent;
  }
  return absl::InvalidArgumentError(absl::StrCat(base::AbslView(field), ": unknown value ", value));
}

void ToProto(const radix::KvLayout& layout, v1::KvLayout* out) {
  out->set_num_layers(layout.num_layers);
  out->set_num_kv_heads(layout.num_kv_heads);
  out->set_head_dim(layout.head_dim);
  out->set_dtype(ToProto(layout.dtype));
  out->set_page_tokens(layout.page_tokens);
  out->set_format(ToProto(layout.format));
  out->set_tp_rank(layout.tp_rank);
  out->set_tp_world(layout.tp_world);
}

void ToProto(const radix::Namespace& ns, v1::Namespace* out) {
  out->set_tenant(ns.tenant());
  out->set_model(ns.model());
  ToProto(ns.layout(), out->mutable_layout());
}

absl::StatusOr<radix::KvLayout> KvLayoutFromProto(const v1::KvLayout& layout,
                                                  std::string_view field) {
  // All fields at their defaults (the message unset): one clear message
  // instead of "num_layers = 0 is out of range".
  if (layout.ByteSizeLong() == 0) return Missing(field);
  const std::string name(field);
  STRATA_ASSIGN_OR_RETURN(radix::DType dtype, DTypeFromProto(layout.dtype(), name + ".dtype"));
  STRATA_ASSIGN_OR_RETURN(radix::KvFormat format,
                          KvFormatFromProto(layout.format(), name + ".format"));
  const radix::KvLayout out{
      .num_layers = layout.num_layers(),
      .num_kv_heads = layout.num_kv_heads(),
      .head_dim = layout.head_dim(),
      .dtype = dtype,
      .page_tokens = layout.page_tokens(),
      .format = format,
      .tp_rank = layout.tp_rank(),
      .tp_world = layout.tp_world(),
  };
  STRATA_RETURN_IF_ERROR(AtField(field, out.Validate()));
  return out;
}

absl::StatusOr<radix::Namespace> NamespaceFromProto(const v1::Namespace& ns,
                                                    std::string_view field) {
  if (ns.ByteSizeLong() == 0) return Missing(field);
  const std::string name(field);
  STRATA_RETURN_IF_ERROR(AtField(name + ".tenant", radix::Namespace::ValidateTenant(ns.tenant())));
  STRATA_RETURN_IF_ERROR(AtField(name + ".model", radix::Namespace::ValidateModel(ns.model())));
  if (!ns.has_layout()) return Missing(name + ".layout");
  STRATA_ASSIGN_OR_RETURN(radix::KvLayout layout, KvLayoutFromProto(ns.layout(), name + ".layout"));
  return radix::Namespace::Create(ns.tenant(), ns.model(), layout);
}

}  // namespace strata::proto
