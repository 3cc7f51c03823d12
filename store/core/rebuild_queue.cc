// RebuildQueue (rebuild_queue.h).
#include "strata/store/core/rebuild_queue.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "glog/logging.h"

#include "strata/base/status_macros.h"

namespace strata::store::core {

absl::Status RebuildQueue::Queue(BlobRecord* record, RebuildRequestReply* reply) {
  if (record->has_bytes() || record->moving) {
    ++reply->resident;
    return absl::OkStatus();
  }
  if (record->rebuild != RebuildStage::kNone) {
    ++reply->already_queued;
    return absl::OkStatus();
  }
  absl::MutexLock lock(&mu_);
  if (queue_.size() + in_flight_.size() >= options_.max_queue) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "the rebuild queue is full (", options_.max_queue, " tasks queued or in flight)"));
  }
  record->rebuild = RebuildStage::kQueued;
  record->rebuild_attempts = 0;
  queue_.push_back(record->id);
  ++stats_.requested;
  ++reply->queued;
  return absl::OkStatus();  // waiters see QueuedOrStopped when mu_ is released
}

void RebuildQueue::End(BlobRecord* record, bool filled) {
  if (record->rebuild == RebuildStage::kNone) return;
  absl::MutexLock lock(&mu_);
  EndLocked(record, filled);
}

void RebuildQueue::EndLocked(BlobRecord* record, bool filled) {
  if (record->rebuild == RebuildStage::kInFlight) {
    auto it = task_of_.find(record->id);
    if (it != task_of_.end()) {
      in_flight_.erase(it->second);
      task_of_.erase(it);
    }
  }
  // A queued entry stays in the deque; Take skips records no longer kQueued.
  record->rebuild = RebuildStage::kNone;
  if (filled) {
    ++stats_.completed;
  } else {
    ++stats_.dropped;
  }
}

void RebuildQueue::Expire(absl::Time now, BlobTable& table) {
  absl::MutexLock lock(&mu_);
  std::vector<uint64_t> expired;
  for (const auto& [task_id, task] : in_flight_) {
    if (now >= task.deadline) expired.push_back(task_id);
  }
  for (const uint64_t task_id : expired) {
    const tiering::BlobId record_id = in_flight_[task_id].record_id;
    in_flight_.erase(task_id);
    task_of_.erase(record_id);
    ++stats_.expired;
    BlobRecord* record = table.Find(record_id);
    if (record == nullptr) continue;
    record->rebuild = RebuildStage::kNone;
    if (record->state != BlobState::kLinked || record->has_bytes()) continue;
    if (record->rebuild_attempts >= options_.max_attempts) {
      LOG(WARNING) << "rebuild of " << record->key.ToHex() << " given up after "
                   << record->rebuild_attempts << " attempts";
      ++stats_.dropped;
      continue;
    }
    record->rebuild = RebuildStage::kQueued;
    queue_.push_front(record->id);
  }
}

std::vector<RebuildTask> RebuildQueue::Take(
    uint32_t max_tasks, absl::Time now, BlobTable& table,
    absl::FunctionRef<bool(const BlobRecord&)> eligible, absl::FunctionRef<uint64_t()> new_id,
    absl::FunctionRef<void(const BlobRecord&, RebuildTask*)> fill) {
  absl::MutexLock lock(&mu_);
  std::vector<RebuildTask> tasks;
  for (auto it = queue_.begin(); tasks.size() < max_tasks && it != queue_.end();) {
    BlobRecord* record = table.Find(*it);
    if (record != nullptr && record->rebuild == RebuildStage::kQueued &&
        record->state == BlobState::kLinked && !record->has_bytes() && !eligible(*record)) {
      ++it;  // another caller's: stays queued
      continue;
    }
    it = queue_.erase(it);
    if (record == nullptr || record->rebuild != RebuildStage::kQueued) continue;
    if (record->state != BlobState::kLinked || record->has_bytes()) {
      EndLocked(record, /*filled=*/false);
      continue;
    }
    RebuildTask task;
    task.task_id = new_id();
    fill(*record, &task);
    task.deadline = now + options_.task_ttl;
    record->rebuild = RebuildStage::kInFlight;
    ++record->rebuild_attempts;
    in_flight_[task.task_id] = InFlight{record->id, task.deadline};
    task_of_[record->id] = task.task_id;
    tasks.push_back(std::move(task));
  }
  return tasks;
}

bool RebuildQueue::WaitForQueued(absl::Time deadline) {
  absl::MutexLock lock(&mu_);
  mu_.AwaitWithDeadline(absl::Condition(this, &RebuildQueue::QueuedOrStopped), deadline);
  return !queue_.empty();
}

void RebuildQueue::Stop() {
  absl::MutexLock lock(&mu_);
  stopped_ = true;
}

bool RebuildQueue::stopped() const {
  absl::MutexLock lock(&mu_);
  return stopped_;
}

RebuildQueueStats RebuildQueue::Stats() const {
  absl::MutexLock lock(&mu_);
  RebuildQueueStats stats = stats_;
  stats.queued = queue_.size();
  stats.in_flight = in_flight_.size();
  return stats;
}

absl::Status RebuildQueue::QueuePath(BlobRecord* record, bool with_prefix, const BlobTable& table,
                                     RebuildRequestReply* reply) {
  std::vector<BlobRecord*> path{record};
  while (with_prefix && path.back()->parent_id != 0) {
    BlobRecord* parent = table.Find(path.back()->parent_id);
    CHECK(parent != nullptr) << "broken parent chain";
    path.push_back(parent);
  }
  for (auto it = path.rbegin(); it != path.rend(); ++it) {
    if ((*it)->state != BlobState::kLinked) continue;  // a token-only ancestor
    STRATA_RETURN_IF_ERROR(Queue(*it, reply));
  }
  return absl::OkStatus();
}

}  // namespace strata::store::core
