// HeldSpan: a view of DRAM-arena bytes that stay allocated while the HeldSpan lives.
//
// NodeEngine::PutTarget and NodeEngine::ReadSource return one. The data plane receives
// into (PutTarget) or sends from (ReadSource) span(), and keeps the HeldSpan alive until
// the transfer has finished (e.g. in the UCX request's context), then destroys it. While
// it lives, the engine does not free or reuse the bytes even if the put is aborted or
// expires, or the lease is released or expires, or the blob is evicted or deleted: a late
// write can never land in another blob's extent, and a late send never reads reused
// bytes. It holds only the bytes: whether the put or the lease is still valid is checked
// by the engine calls (PutReceived, CommitPut, ...), not by the HeldSpan.
//
// Ownership: move-only; the bytes belong to the engine. REQUIRES: every HeldSpan is
// destroyed or Reset() before its NodeEngine is destroyed.
// Thread safety: one HeldSpan must not be used from two threads at once; destroying it
// takes the engine's lock briefly, from any thread. The bytes of a ReadSource span are a
// committed, immutable blob: never write them. The bytes of a PutTarget span must be
// written by one receiver per byte range at a time.
// Errors: none.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>

#include "absl/types/span.h"

namespace strata::store::core {

class NodeEngine;

class HeldSpan {
 public:
  HeldSpan() = default;
  HeldSpan(HeldSpan&& other) noexcept
      : engine_(std::exchange(other.engine_, nullptr)),
        record_id_(std::exchange(other.record_id_, 0)),
        span_(std::exchange(other.span_, {})) {}
  HeldSpan& operator=(HeldSpan&& other) noexcept;
  HeldSpan(const HeldSpan&) = delete;
  HeldSpan& operator=(const HeldSpan&) = delete;
  ~HeldSpan() { Reset(); }

  absl::Span<std::byte> span() const { return span_; }
  std::byte* data() const { return span_.data(); }
  size_t size() const { return span_.size(); }
  // True until Reset() or a move from it.
  bool held() const { return engine_ != nullptr; }

  // Lets the engine free the bytes (if nothing else holds them). Idempotent.
  void Reset();

 private:
  friend class NodeEngine;
  HeldSpan(NodeEngine* engine, uint64_t record_id, absl::Span<std::byte> span)
      : engine_(engine), record_id_(record_id), span_(span) {}

  NodeEngine* engine_ = nullptr;
  uint64_t record_id_ = 0;
  absl::Span<std::byte> span_;
};

}  // namespace strata::store::core
