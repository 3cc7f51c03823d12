#include "strata/radix/namespace.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

#include "strata/base/absl_view.h"
#include "strata/base/status_macros.h"

namespace strata::radix {
namespace {

bool IsTenantByte(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-';
}

bool IsModelByte(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u >= 0x21 && u <= 0x7E;
}

std::string DescribeByte(char c) {
  const auto u = static_cast<unsigned char>(c);
  if (u >= 0x21 && u <= 0x7E) return absl::StrFormat("0x%02X ('%c')", u, c);
  return absl::StrFormat("0x%02X", u);
}

absl::Status CheckString(std::string_view field, std::string_view value, size_t max_bytes,
                         bool (*allowed)(char), std::string_view allowed_text) {
  if (value.empty() || value.size() > max_bytes) {
    return absl::InvalidArgumentError(absl::StrCat("Namespace.", base::AbslView(field), " length ",
                                                   value.size(), " is out of range [1, ", max_bytes,
                                                   "]"));
  }
  for (size_t i = 0; i < value.size(); ++i) {
    if (!allowed(value[i])) {
      return absl::InvalidArgumentError(absl::StrCat("Namespace.", base::AbslView(field), " byte ",
                                                     i, " is ", DescribeByte(value[i]),
                                                     "; allowed: ", base::AbslView(allowed_text)));
    }
  }
  return absl::OkStatus();
}

void AppendU8(std::string* out, uint8_t v) { out->push_back(static_cast<char>(v)); }

void AppendU32(std::string* out, uint32_t v) {
  for (int shift = 0; shift < 32; shift += 8) {
    out->push_back(static_cast<char>((v >> shift) & 0xFF));
  }
}

void AppendString(std::string* out, std::string_view s) {
  AppendU32(out, static_cast<uint32_t>(s.size()));
  out->append(s);
}

}  // namespace

absl::StatusOr<Namespace> Namespace::Create(std::string tenant, std::string model,
                                            const KvLayout& layout) {
  STRATA_RETURN_IF_ERROR(Validate(tenant, model, layout));
  return Namespace(std::move(tenant), std::move(model), layout);
}

absl::Status Namespace::ValidateTenant(std::string_view tenant) {
  return CheckString("tenant", tenant, kMaxTenantBytes, IsTenantByte, "[A-Za-z0-9._-]");
}

absl::Status Namespace::ValidateModel(std::string_view model) {
  return CheckString("model", model, kMaxModelBytes, IsModelByte,
                     "printable non-space ASCII 0x21..0x7E");
}

absl::Status Namespace::Validate(std::string_view tenant, std::string_view model,
                                 const KvLayout& layout) {
  STRATA_RETURN_IF_ERROR(ValidateTenant(tenant));
  STRATA_RETURN_IF_ERROR(ValidateModel(model));
  return layout.Validate();
}

std::string Namespace::CanonicalEncoding() const {
  std::string out;
  out.reserve(46 + tenant_.size() + model_.size());
  out.append(kNamespaceEncodingTag.data(), kNamespaceEncodingTag.size());
  AppendString(&out, tenant_);
  AppendString(&out, model_);
  AppendU32(&out, layout_.num_layers);
  AppendU32(&out, layout_.num_kv_heads);
  AppendU32(&out, layout_.head_dim);
  AppendU8(&out, static_cast<uint8_t>(layout_.dtype));
  AppendU32(&out, layout_.page_tokens);
  AppendU8(&out, static_cast<uint8_t>(layout_.format));
  AppendU32(&out, layout_.tp_rank);
  AppendU32(&out, layout_.tp_world);
  return out;
}

absl::StatusOr<Namespace> Namespace::FromCanonicalEncoding(std::string_view bytes) {
  std::string_view in = bytes;
  auto fail = [&](std::string_view what) {
    return absl::InvalidArgumentError(
        absl::StrCat("namespace encoding of ", bytes.size(),
                     " bytes: ", absl::string_view(what.data(), what.size())));
  };
  auto take_u32 = [&](uint32_t* v) {
    if (in.size() < 4) return false;
    *v = 0;
    for (int i = 3; i >= 0; --i) *v = (*v << 8) | static_cast<uint8_t>(in[i]);
    in.remove_prefix(4);
    return true;
  };
  auto take_u8 = [&](uint8_t* v) {
    if (in.empty()) return false;
    *v = static_cast<uint8_t>(in[0]);
    in.remove_prefix(1);
    return true;
  };
  auto take_string = [&](size_t limit, std::string* out) {
    uint32_t n = 0;
    if (!take_u32(&n) || n > limit || in.size() < n) return false;
    out->assign(in.data(), n);
    in.remove_prefix(n);
    return true;
  };
  if (in.substr(0, kNamespaceEncodingTag.size()) != kNamespaceEncodingTag) {
    return fail("does not start with the tag \"strata.ns.v1\"");
  }
  in.remove_prefix(kNamespaceEncodingTag.size());
  std::string tenant, model;
  KvLayout layout;
  uint8_t dtype = 0, format = 0;
  if (!take_string(kMaxTenantBytes, &tenant) || !take_string(kMaxModelBytes, &model) ||
      !take_u32(&layout.num_layers) || !take_u32(&layout.num_kv_heads) ||
      !take_u32(&layout.head_dim) || !take_u8(&dtype) || !take_u32(&layout.page_tokens) ||
      !take_u8(&format) || !take_u32(&layout.tp_rank) || !take_u32(&layout.tp_world)) {
    return fail("truncated, or a string longer than its limit");
  }
  if (!in.empty()) return fail(absl::StrCat(in.size(), " trailing bytes"));
  layout.dtype = static_cast<DType>(dtype);
  layout.format = static_cast<KvFormat>(format);
  return Create(std::move(tenant), std::move(model), layout);
}

std::string Namespace::ToString() const {
  return absl::StrCat("Namespace{tenant=", tenant_, " model=", model_, " ", layout_.ToString(),
                      "}");
}

}  // namespace strata::radix
