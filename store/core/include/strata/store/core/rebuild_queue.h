// RebuildQueue: the node's queue of TEXT blobs to rebuild (design note, "Rebuild from
// text"). It holds record ids of linked TEXT blobs, oldest first; a task handed to a worker
// (Take) is in flight until a put refills its blob (End, filled), its deadline passes
// (Expire queues it again, up to max_attempts hand-outs) or its blob goes away (End).
//
// Ownership: a NodeEngine owns one. It owns the queue, the in-flight tasks and their
// statistics; the records it names are the BlobTable's, and each record's own rebuild
// stage (BlobRecord::rebuild, rebuild_attempts) stays in the record.
//
// Thread safety: the queue's state has its own lock (mu_), taken inside each call, so
// Stats and WaitForQueued never need the index lock. The calls that read or change a
// record (Queue, End, Expire, Take) REQUIRE the caller to hold the lock that guards the
// BlobTable (the engine's index lock) exclusively; lock order: index lock, then mu_.
// WaitForQueued REQUIRES the index lock NOT held (a worker long-polls without blocking
// the engine).
//
// Errors: Queue answers RESOURCE_EXHAUSTED when max_queue tasks are queued or in flight.
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

#include "strata/store/core/blob_record.h"
#include "strata/store/core/blob_table.h"
#include "strata/store/core/node_engine_types.h"

namespace strata::store::core {

struct RebuildQueueOptions {
  uint64_t max_queue = uint64_t{1} << 20;  // tasks queued or in flight. REQUIRES: > 0
  absl::Duration task_ttl = absl::Seconds(30);
  uint32_t max_attempts = 3;  // hand-outs before a task is dropped. REQUIRES: > 0
};

class RebuildQueue {
 public:
  explicit RebuildQueue(const RebuildQueueOptions& options) : options_(options) {}
  RebuildQueue(const RebuildQueue&) = delete;
  RebuildQueue& operator=(const RebuildQueue&) = delete;

  // Queues `record` (linked) unless it has bytes or is moving (counted resident) or is
  // queued or in flight already (counted already_queued); wakes a waiting worker.
  // REQUIRES: the index lock held exclusively.
  absl::Status Queue(BlobRecord* record, RebuildRequestReply* reply) ABSL_LOCKS_EXCLUDED(mu_);
  // Queue of `record` and, with_prefix, of every linked blob up its parent chain in
  // `table`, parents first (a worker filling tasks in order rebuilds the prefix before
  // its continuations; token-only ancestors are skipped). Stops at the first error
  // (RESOURCE_EXHAUSTED: queue full). REQUIRES: the index lock held exclusively.
  absl::Status QueuePath(BlobRecord* record, bool with_prefix, const BlobTable& table,
                         RebuildRequestReply* reply) ABSL_LOCKS_EXCLUDED(mu_);

  // The record's rebuild, if any, is over: filled by a put (counted completed), or the
  // blob went away (dropped). REQUIRES: the index lock held exclusively.
  void End(BlobRecord* record, bool filled) ABSL_LOCKS_EXCLUDED(mu_);

  // Queues in-flight tasks past their deadline again (at the front, counted expired), or
  // drops them after max_attempts hand-outs or when their blob has bytes again or left
  // the index. REQUIRES: the index lock held exclusively (records are looked up in table).
  void Expire(absl::Time now, BlobTable& table) ABSL_LOCKS_EXCLUDED(mu_);

  // Hands out up to max_tasks queued tasks whose record `eligible` accepts, oldest first,
  // each in flight until now + task_ttl; skips entries whose blob is gone or was ended
  // meanwhile; ineligible ones stay queued in their order. new_id names each task; fill
  // sets the task's blob fields (namespace, key, tokens, checksums...).
  // REQUIRES: the index lock held exclusively; max_tasks > 0.
  std::vector<RebuildTask> Take(uint32_t max_tasks, absl::Time now, BlobTable& table,
                                absl::FunctionRef<bool(const BlobRecord&)> eligible,
                                absl::FunctionRef<uint64_t()> new_id,
                                absl::FunctionRef<void(const BlobRecord&, RebuildTask*)> fill)
      ABSL_LOCKS_EXCLUDED(mu_);

  // Waits until `deadline` (real time) for a queued task, or until Stop. True if one is
  // queued (another worker may still take it first). REQUIRES: the index lock NOT held.
  bool WaitForQueued(absl::Time deadline) ABSL_LOCKS_EXCLUDED(mu_);
  // From now on WaitForQueued returns at once (the node is draining).
  void Stop() ABSL_LOCKS_EXCLUDED(mu_);
  bool stopped() const ABSL_LOCKS_EXCLUDED(mu_);

  // requested, completed, expired, dropped, and the queued and in-flight counts now. A
  // queued count may include entries that Take will skip (ended since they were queued).
  RebuildQueueStats Stats() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct InFlight {
    tiering::BlobId record_id = 0;
    absl::Time deadline;
  };
  bool QueuedOrStopped() const ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    return !queue_.empty() || stopped_;
  }
  void EndLocked(BlobRecord* record, bool filled) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const RebuildQueueOptions options_;
  mutable absl::Mutex mu_;
  std::deque<tiering::BlobId> queue_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<uint64_t, InFlight> in_flight_ ABSL_GUARDED_BY(mu_);  // by task id
  absl::flat_hash_map<tiering::BlobId, uint64_t> task_of_ ABSL_GUARDED_BY(mu_);
  RebuildQueueStats stats_ ABSL_GUARDED_BY(mu_);
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace strata::store::core
