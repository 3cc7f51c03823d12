// RunRebuildWorker: the reference rebuild worker. It pulls rebuild tasks from a strata node
// (Client::PullRebuildTasks), recomputes each blob's KV with worker::ReferenceModel from the
// task's tokens, checks the bytes against the original's chunk checksums the task carries,
// and fills the blob with an ordinary put (Client::Write of the task's parent and own
// tokens). The `strata-worker` tool runs it against a node; strata-demo runs it in-process.
//
// Per task (tasks of one pull in order: RequestRebuild with_prefix queues parents first, so
// a parent is filled before the blob continuing it):
//
//   outcome          when                                                   task then
//   ---------------  -----------------------------------------------------  ---------------
//   kRebuilt         the bytes matched and the node committed them          completed
//   kExisted         the node answered `exists`, or committed nothing       completed
//                    (indexed_pages 0): another worker filled it first
//   kSkipped         no model for the task's layout (SingleModel of another  expires, requeued
//                    layout), or a task that does not add up
//   kChecksumMismatch  the computed bytes differ from the original's        expires, requeued
//                    checksums: the wrong model or seed (never written)
//   kWriteFailed     the node refused the put (its status in `status`)      expires, requeued
//
// A skipped or failed task is left to expire on the node (it is queued again, and dropped
// after the node's attempts). A pull that fails ends the run, its status in the summary
// (UNAVAILABLE: the node is gone; UNIMPLEMENTED: the node has no rebuild queue).
//
// When the run ends (options):
//   max_tasks   after this many tasks were handled (0: no limit);
//   idle_exit   after no task came for this long (InfiniteDuration: never; 0: as soon as a
//               pull finds the queue empty);
//   stop        when it returns true (checked between pulls; e.g. a signal flag).
//
// Thread safety: one run per call; the client and the model are shared, thread-safe
// objects. Several workers (threads or processes) may pull from one node at once.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

#include "strata/client.h"
#include "strata/types.h"
#include "strata/worker/reference_model.h"

namespace strata::tools {

enum class RebuildOutcome { kRebuilt, kExisted, kSkipped, kChecksumMismatch, kWriteFailed };

// "rebuilt", "existed", "skipped", "checksum-mismatch", "write-failed".
const char* RebuildOutcomeName(RebuildOutcome outcome);

struct RebuildTaskReport {
  RebuildTask task;
  RebuildOutcome outcome = RebuildOutcome::kSkipped;
  absl::Status status;  // why, for every outcome but kRebuilt and kExisted
  uint64_t bytes = 0;   // the blob's KV bytes (computed; 0 when skipped)
  absl::Duration compute_time;
  absl::Duration write_time;
};

struct RebuildWorkerSummary {
  uint64_t pulls = 0;  // PullRebuildTasks calls
  uint64_t tasks = 0;  // tasks handled
  uint64_t rebuilt = 0;
  uint64_t existed = 0;
  uint64_t skipped = 0;
  uint64_t checksum_mismatches = 0;
  uint64_t write_failures = 0;
  uint64_t bytes_written = 0;  // KV bytes of the rebuilt blobs
  absl::Duration elapsed;
  // OK when the run ended by its options; else why it stopped early: INVALID_ARGUMENT bad
  // options (nothing was pulled), or the status of the pull that failed.
  absl::Status status;
};

// The tokens of sequence pages [0, start.pages) before a cluster segment start (a task's
// segment_start): ClusterClient::PrefixTokens.
using PrefixTokensFor = std::function<absl::StatusOr<std::vector<TokenId>>(
    const Namespace& ns, const SegmentStart& start)>;

struct RebuildWorkerOptions {
  uint64_t max_tasks = 0;                                 // 0: no limit
  absl::Duration idle_exit = absl::Seconds(5);            // see the header comment
  uint32_t batch = 16;                                    // tasks per pull, 1..1024
  absl::Duration poll_wait = absl::Seconds(1);            // one pull's long-poll wait, 0..60 s
  std::function<bool()> stop;                             // null: never
  std::function<void(const RebuildTaskReport&)> on_task;  // null: none; called per task
  // Where a task's tokens before its segment start come from (a cluster node's blobs that
  // start a segment); null: such tasks are skipped (FAILED_PRECONDITION).
  PrefixTokensFor prefix_tokens;
};

// The model for a layout, or a status to skip the task with (FAILED_PRECONDITION: no model
// for it). The returned model must outlive the run.
using ModelForLayout =
    absl::FunctionRef<absl::StatusOr<const worker::ReferenceModel*>(const KvLayout&)>;

// Reference models of one seed, made on first use per layout and kept (the strata-worker's
// choice: every namespace's blobs were written by the model of the same seed).
// Thread-compatible (one worker thread).
class SeededModels {
 public:
  explicit SeededModels(uint64_t seed) : seed_(seed) {}
  // Errors of worker::ReferenceModel::Create (INVALID_ARGUMENT for a layout it cannot hold).
  absl::StatusOr<const worker::ReferenceModel*> For(const KvLayout& layout);

 private:
  uint64_t seed_;
  absl::flat_hash_map<std::string, std::unique_ptr<worker::ReferenceModel>> models_;
};

// Computes the task's blob with `model` and checks it: the bytes to write, or
// FAILED_PRECONDITION the model's layout is not the task's, INVALID_ARGUMENT a task that
// does not add up (no namespace, tokens or checksums of the wrong count), DATA_LOSS the
// bytes differ from the task's chunk checksums (naming the first chunk that differs).
absl::StatusOr<std::vector<std::byte>> ComputeRebuild(const RebuildTask& task,
                                                      const worker::ReferenceModel& model);

// Handles one task: its tokens before a segment start from `prefix_tokens` (skipped
// without), ComputeRebuild, then Client::Write (from the task's parent, else its segment
// start). Never fails; the report says how it went.
RebuildTaskReport RebuildOne(Client& client, const RebuildTask& task, ModelForLayout models,
                             const CallOptions& call = {},
                             const PrefixTokensFor& prefix_tokens = nullptr);

// The loop; what it did, and why it stopped (summary.status).
RebuildWorkerSummary RunRebuildWorker(Client& client, ModelForLayout models,
                                      const RebuildWorkerOptions& options);
// With one model: tasks of another layout are skipped.
RebuildWorkerSummary RunRebuildWorker(Client& client, const worker::ReferenceModel& model,
                                      const RebuildWorkerOptions& options);

}  // namespace strata::tools
