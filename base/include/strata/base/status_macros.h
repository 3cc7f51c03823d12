// Status propagation macros, written once for the whole project.
//
// Debian's Abseil (20220623) has no RETURN_IF_ERROR / ASSIGN_OR_RETURN, so strata
// defines its own. They work with absl::Status and absl::StatusOr<T> only.
//
//   STRATA_RETURN_IF_ERROR(expr);          // expr yields absl::Status
//   STRATA_ASSIGN_OR_RETURN(auto x, expr); // expr yields absl::StatusOr<T>
//
// Error codes have one meaning across strata (docs/architecture.md, "Errors"):
//   INVALID_ARGUMENT     malformed input (bad layout, unaligned span, size out of range)
//   NOT_FOUND            unknown key / prefix
//   ALREADY_EXISTS       key already present
//   FAILED_PRECONDITION  layout mismatch, missing parent, object pinned or in use
//   OUT_OF_RANGE         an index or byte range past the end of an object (extent, blob)
//   RESOURCE_EXHAUSTED   tier full
//   UNAVAILABLE          transient; a retry may help (no device, peer down)
//   DATA_LOSS            checksum mismatch / corrupt bytes
//   INTERNAL             an invariant of ours broke
//
// Note: Debian's Abseil has its own absl::string_view (not std::string_view), so
// absl::StrCat does not take a std::string_view; public APIs take std::string_view
// and convert inside .cc files.
#pragma once

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define STRATA_STATUS_CONCAT_INNER_(a, b) a##b
#define STRATA_STATUS_CONCAT_(a, b) STRATA_STATUS_CONCAT_INNER_(a, b)

// Evaluates `expr` (an absl::Status) and returns it from the enclosing function
// if it is not OK.
#define STRATA_RETURN_IF_ERROR(expr)                 \
  do {                                               \
    ::absl::Status strata_status_ = (expr);          \
    if (!strata_status_.ok()) return strata_status_; \
  } while (false)

// Evaluates `rexpr` (an absl::StatusOr<T>); on error returns its status from the
// enclosing function, else move-assigns the value to `lhs` (which may declare a
// variable: `STRATA_ASSIGN_OR_RETURN(auto v, F());`).
#define STRATA_ASSIGN_OR_RETURN(lhs, rexpr) \
  STRATA_ASSIGN_OR_RETURN_IMPL_(STRATA_STATUS_CONCAT_(strata_statusor_, __LINE__), lhs, rexpr)

#define STRATA_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, rexpr) \
  auto statusor = (rexpr);                                  \
  if (!statusor.ok()) return std::move(statusor).status();  \
  lhs = std::move(statusor).value()
