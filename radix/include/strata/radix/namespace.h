// Namespace: (tenant, model, KV layout), the root of every prefix.
//
// Blobs of different namespaces never match: the namespace's canonical
// encoding is hashed into h_0 (prefix_hash.h: NamespaceHash), and every prefix
// hash chains from it. In particular two tenants never share a prefix, so one
// tenant cannot probe another's cache (prefix-cache timing is a real side
// channel). A namespace is shared only explicitly: by clients agreeing on one
// tenant name, which the store's access control must allow.
//
// A Namespace is an immutable value, valid by construction (Create validates),
// copyable, and safe to read from any thread.
//
// Validity:
//   tenant  1..128 bytes, each in [A-Za-z0-9._-]
//   model   1..256 bytes of printable non-space ASCII (0x21..0x7E)
//   layout  KvLayout::Validate() (kv_layout.h)
// Errors: Create and Validate return INVALID_ARGUMENT naming the field, the
// rule and the offending value or byte.
//
// Canonical encoding, version 1 (all integers little-endian, no padding):
//
//   offset     size  field
//   ---------  ----  ------------------------------------------------------
//   0          12    tag: the ASCII bytes "strata.ns.v1" (no terminator)
//   12         4     u32 T = tenant length in bytes
//   16         T     tenant bytes
//   16+T       4     u32 M = model length in bytes
//   20+T       M     model bytes
//   20+T+M     4     u32 layout.num_layers
//   24+T+M     4     u32 layout.num_kv_heads
//   28+T+M     4     u32 layout.head_dim
//   32+T+M     1     u8  layout.dtype       (DType value)
//   33+T+M     4     u32 layout.page_tokens
//   37+T+M     1     u8  layout.format      (KvFormat value)
//   38+T+M     4     u32 layout.tp_rank
//   42+T+M     4     u32 layout.tp_world
//   total: 46 + T + M bytes
//
// The encoding is injective (lengths prefix the strings) and frozen: any
// change is a new tag ("strata.ns.v2") and changes every prefix hash.
#pragma once

#include <cstddef>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include "strata/radix/kv_layout.h"

namespace strata::radix {

inline constexpr size_t kMaxTenantBytes = 128;
inline constexpr size_t kMaxModelBytes = 256;
inline constexpr std::string_view kNamespaceEncodingTag = "strata.ns.v1";

class Namespace {
 public:
  // A validated namespace, or INVALID_ARGUMENT (see Validate).
  static absl::StatusOr<Namespace> Create(std::string tenant, std::string model,
                                          const KvLayout& layout);

  // OK, or INVALID_ARGUMENT for the first bad part: tenant, then model, then
  // layout.
  static absl::Status Validate(std::string_view tenant, std::string_view model,
                               const KvLayout& layout);
  static absl::Status ValidateTenant(std::string_view tenant);
  static absl::Status ValidateModel(std::string_view model);

  const std::string& tenant() const { return tenant_; }
  const std::string& model() const { return model_; }
  const KvLayout& layout() const { return layout_; }

  // The canonical encoding (table above).
  std::string CanonicalEncoding() const;

  // The namespace whose CanonicalEncoding() is `bytes` (how the data plane names a
  // namespace). INVALID_ARGUMENT: not the v1 tag, truncated, trailing bytes, a string length
  // past its limit, or a decoded namespace that fails Validate.
  static absl::StatusOr<Namespace> FromCanonicalEncoding(std::string_view bytes);

  // "Namespace{tenant=acme model=org/name KvLayout{...}}".
  std::string ToString() const;

  friend bool operator==(const Namespace&, const Namespace&) = default;
  friend std::ostream& operator<<(std::ostream& os, const Namespace& ns) {
    return os << ns.ToString();
  }

 private:
  Namespace(std::string tenant, std::string model, const KvLayout& layout)
      : tenant_(std::move(tenant)), model_(std::move(model)), layout_(layout) {}

  std::string tenant_;
  std::string model_;
  KvLayout layout_;
};

}  // namespace strata::radix
