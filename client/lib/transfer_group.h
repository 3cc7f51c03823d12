// TransferGroup: the data-plane transfers of one client call (the FETCHes of one lease, the
// PUT_DATA messages of one write), as one thing the calling thread can wait on.
//
// Items are numbered by the caller (a fetched layer range, a sent piece). The data plane
// (data_plane.h) reports on the messenger's progress thread:
//   requests   RequestStarted / RequestEnded: a FETCH or PUT_DATA until its FETCH_DONE or
//              PUT_DONE (or its failure) — the node's word that it is done with it;
//   transfers  TryBeginTransfer / EndTransfer: an Accept into, or a Send from, the caller's
//              memory, until the transport's completion — while one is in flight the
//              transport borrows that memory;
//   landed     an item whose bytes arrived (fetch) or were taken by the node (put).
// The group is finished when no request is pending and no transfer is in flight.
//
// The caller waits with WaitForProgress, handles what landed (checksums), and on any error
// or deadline cancels the group (Cancel: later data is refused) and then waits until the
// transport lets go of its memory (WaitIdle) before returning to its own caller.
//
// Thread-safe: every method may be called from any thread.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace strata::client_internal {

class TransferGroup {
 public:
  TransferGroup() = default;
  TransferGroup(const TransferGroup&) = delete;
  TransferGroup& operator=(const TransferGroup&) = delete;

  // ---- the data plane's side
  void RequestStarted() ABSL_LOCKS_EXCLUDED(mu_);
  // Ends a request; a non-OK status fails the group (the first failure is kept).
  void RequestEnded(const absl::Status& status) ABSL_LOCKS_EXCLUDED(mu_);
  // Counts a transfer in flight, unless the group is cancelled or failed (then false and the
  // caller must not start it).
  bool TryBeginTransfer() ABSL_LOCKS_EXCLUDED(mu_);
  // Ends a transfer; a non-OK status fails the group.
  void EndTransfer(const absl::Status& status) ABSL_LOCKS_EXCLUDED(mu_);
  void ItemLanded(uint32_t item, uint64_t bytes) ABSL_LOCKS_EXCLUDED(mu_);
  // Fails the group with `status` (kept if it is the first failure).
  void Fail(const absl::Status& status) ABSL_LOCKS_EXCLUDED(mu_);
  // False once cancelled or failed: the data plane drops further data.
  bool accepting() const ABSL_LOCKS_EXCLUDED(mu_);
  // Requests started and not yet ended.
  int pending_requests() const ABSL_LOCKS_EXCLUDED(mu_);

  // ---- the caller's side
  // Waits until an item landed, a request ended, the group failed, it finished, or
  // `deadline`. Appends the landed items to *landed and sets *finished. Returns the group's
  // failure, DEADLINE_EXCEEDED when the deadline passed first (nothing landed, not finished), else
  // OK.
  absl::Status WaitForProgress(absl::Time deadline, std::vector<uint32_t>* landed, bool* finished)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Refuses further data; transfers in flight run to their end.
  void Cancel() ABSL_LOCKS_EXCLUDED(mu_);
  // True when no transfer is in flight by `until`.
  bool WaitIdle(absl::Time until) ABSL_LOCKS_EXCLUDED(mu_);

  uint64_t landed_bytes() const ABSL_LOCKS_EXCLUDED(mu_);

  // The data-plane peers (transport::PeerId values) the group's requests went to.
  void NotePeer(uint64_t peer) ABSL_LOCKS_EXCLUDED(mu_);
  std::vector<uint64_t> peers() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  bool FinishedLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return pending_requests_ == 0 && in_flight_ == 0;
  }

  mutable absl::Mutex mu_;
  int pending_requests_ ABSL_GUARDED_BY(mu_) = 0;
  int in_flight_ ABSL_GUARDED_BY(mu_) = 0;
  bool request_ended_ ABSL_GUARDED_BY(mu_) = false;  // since the last WaitForProgress
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status failure_ ABSL_GUARDED_BY(mu_);
  std::vector<uint32_t> landed_ ABSL_GUARDED_BY(mu_);
  uint64_t landed_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<uint64_t> peers_ ABSL_GUARDED_BY(mu_);
};

}  // namespace strata::client_internal
