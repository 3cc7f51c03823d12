// Namespace, KvLayout, DType and KvFormat <-> their strata.v1 messages.
//
// ToProto writes every field and never fails. The *FromProto functions are the
// node's and the client's only way in from the wire: they reject anything
// radix would reject, and more (an unset or unknown enum value is caught here,
// before it could be cast), with INVALID_ARGUMENT naming the wire field as a
// path below `field` (the caller's name for the message, e.g. "ns" or
// "ranges[3]"):
//
//   failure                                 message starts with
//   --------------------------------------  -------------------------------------
//   message unset or all fields default     "<field>: missing"
//   Namespace.layout unset                  "<field>.layout: missing"
//   tenant / model invalid                  "<field>.tenant: " / "<field>.model: "
//   dtype / format 0 (UNSPECIFIED)          "<field>.dtype: missing" / ".format: missing"
//   dtype / format not a known value        "<field>.dtype: unknown value N" / ...
//   any other layout field out of range     "<field>: KvLayout.<name> = N is out of range"
//                                           (radix's KvLayout::Validate message)
//
// Checks run in that order; the first failure is returned. Enum numbers are
// the same on both sides (static_asserts in the .cc), so the mapping is
// explicit but never renumbers.
//
// Pure functions; thread-safe.
#pragma once

#include <string_view>

#include "absl/status/statusor.h"

#include "strata/proto/protocol_internal.h"
#include "strata/radix/kv_layout.h"
#include "strata/radix/namespace.h"

namespace strata::proto {

// Same number. A value that is not a radix enumerator is passed through as
// its number (so an invalid layout round-trips to the same invalid layout).
v1::DType ToProto(radix::DType dtype);
v1::KvFormat ToProto(radix::KvFormat format);

// INVALID_ARGUMENT "<field>: missing" for 0, "<field>: unknown value N" for a
// number radix does not know.
absl::StatusOr<radix::DType> DTypeFromProto(int value, std::string_view field);
absl::StatusOr<radix::KvFormat> KvFormatFromProto(int value, std::string_view field);

// REQUIRES: out != nullptr. Overwrites every field of *out.
void ToProto(const radix::KvLayout& layout, v1::KvLayout* out);
void ToProto(const radix::Namespace& ns, v1::Namespace* out);

// A validated layout (KvLayout::Validate().ok()), or INVALID_ARGUMENT (table
// above).
absl::StatusOr<radix::KvLayout> KvLayoutFromProto(const v1::KvLayout& layout,
                                                  std::string_view field);

// A validated namespace, or INVALID_ARGUMENT (table above).
absl::StatusOr<radix::Namespace> NamespaceFromProto(const v1::Namespace& ns,
                                                    std::string_view field);

}  // namespace strata::proto
