// NodeEngine: rebuild from text (RequestRebuild, PullRebuildTasks) and Prefetch.
//
// The queue holds record ids of linked TEXT blobs. A pulled task is "in flight" until a
// put refills its blob (RefillLocked ends it), its deadline passes (it is queued again,
// up to max_rebuild_attempts hand-outs), or its blob goes away (MaybeRelease ends it).
#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "glog/logging.h"

#include "strata/base/status_macros.h"
#include "strata/radix/prefix_hash.h"
#include "strata/store/core/node_engine.h"

namespace strata::store::core {
namespace {

constexpr absl::Duration kMaxPullWait = absl::Seconds(60);

}  // namespace

absl::Status NodeEngine::QueueRebuildLocked(BlobRecord* record, RebuildRequestReply* reply) {
  if (record->has_bytes() || record->moving) {
    ++reply->resident;
    return absl::OkStatus();
  }
  if (record->rebuild != RebuildStage::kNone) {
    ++reply->already_queued;
    return absl::OkStatus();
  }
  if (rebuild_queue_.size() + rebuild_in_flight_.size() >= options_.max_rebuild_queue) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "the rebuild queue is full (", options_.max_rebuild_queue, " tasks queued or in flight)"));
  }
  record->rebuild = RebuildStage::kQueued;
  record->rebuild_attempts = 0;
  rebuild_queue_.push_back(record->id);
  ++rebuild_.requested;
  ++reply->queued;
  return absl::OkStatus();
}

void NodeEngine::EndRebuildLocked(BlobRecord* record, bool filled) {
  if (record->rebuild == RebuildStage::kNone) return;
  if (record->rebuild == RebuildStage::kInFlight) {
    auto it = rebuild_task_of_.find(record->id);
    if (it != rebuild_task_of_.end()) {
      rebuild_in_flight_.erase(it->second);
      rebuild_task_of_.erase(it);
    }
  }
  // A queued entry stays in the deque; the puller skips records no longer kQueued.
  record->rebuild = RebuildStage::kNone;
  if (filled) {
    ++rebuild_.completed;
  } else {
    ++rebuild_.dropped;
  }
}

void NodeEngine::ExpireRebuildsLocked(absl::Time now) {
  std::vector<uint64_t> expired;
  for (const auto& [task_id, task] : rebuild_in_flight_) {
    if (now >= task.deadline) expired.push_back(task_id);
  }
  for (const uint64_t task_id : expired) {
    const tiering::BlobId record_id = rebuild_in_flight_[task_id].record_id;
    rebuild_in_flight_.erase(task_id);
    rebuild_task_of_.erase(record_id);
    ++rebuild_.expired;
    BlobRecord* record = table_.Find(record_id);
    if (record == nullptr) continue;
    record->rebuild = RebuildStage::kNone;
    if (record->state != BlobState::kLinked || record->has_bytes()) continue;
    if (record->rebuild_attempts >= options_.max_rebuild_attempts) {
      LOG(WARNING) << "rebuild of " << record->key.ToHex() << " given up after "
                   << record->rebuild_attempts << " attempts";
      ++rebuild_.dropped;
      continue;
    }
    record->rebuild = RebuildStage::kQueued;
    rebuild_queue_.push_front(record->id);
  }
}

absl::StatusOr<RebuildRequestReply> NodeEngine::RequestRebuild(const radix::BlobKey& key,
                                                               bool with_prefix) {
  TimedMutexLock lock(&mu_, lock_hold_);
  BlobRecord* record = table_.FindLinked(key);
  if (record == nullptr) {
    return absl::NotFoundError(absl::StrCat("blob ", key.ToHex(), " is not in this node's index"));
  }
  // Parents first: a worker filling tasks in order rebuilds the prefix before its
  // continuations (a put's parent must be in the index, which TEXT parents are).
  std::vector<BlobRecord*> path{record};
  while (with_prefix && path.back()->parent_id != 0) {
    BlobRecord* parent = table_.Find(path.back()->parent_id);
    CHECK(parent != nullptr) << "broken parent chain";
    path.push_back(parent);
  }
  RebuildRequestReply reply;
  for (auto it = path.rbegin(); it != path.rend(); ++it) {
    if ((*it)->state != BlobState::kLinked) continue;  // a token-only ancestor
    STRATA_RETURN_IF_ERROR(QueueRebuildLocked(*it, &reply));
  }
  return reply;
}

absl::StatusOr<std::vector<RebuildTask>> NodeEngine::PullRebuildTasks(uint32_t max_tasks,
                                                                      absl::Duration wait) {
  if (max_tasks == 0) return absl::InvalidArgumentError("max_tasks must be > 0");
  wait = std::clamp(wait, absl::ZeroDuration(), kMaxPullWait);
  TimedMutexLock lock(&mu_, lock_hold_);
  ExpireRebuildsLocked(clock_->Now());
  if (rebuild_queue_.empty() && wait > absl::ZeroDuration()) {
    LockHoldPause pause;
    mu_.AwaitWithTimeout(absl::Condition(this, &NodeEngine::RebuildQueuedLocked), wait);
  }
  const absl::Time now = clock_->Now();
  std::vector<RebuildTask> tasks;
  while (tasks.size() < max_tasks && !rebuild_queue_.empty()) {
    BlobRecord* record = table_.Find(rebuild_queue_.front());
    rebuild_queue_.pop_front();
    if (record == nullptr || record->rebuild != RebuildStage::kQueued) continue;
    if (record->state != BlobState::kLinked || record->has_bytes()) {
      EndRebuildLocked(record, /*filled=*/false);
      continue;
    }
    RebuildTask task;
    task.task_id = NewId();
    task.ns = *record->ns;
    task.key = record->key;
    task.parent = record->parent;
    task.first_page = record->first_page;
    task.pages = record->pages;
    task.sequence_tokens = SequenceTokens(*record, record->end_page());
    task.checksums = record->checksums;
    task.deadline = now + options_.rebuild_task_ttl;
    record->rebuild = RebuildStage::kInFlight;
    ++record->rebuild_attempts;
    rebuild_in_flight_[task.task_id] = InFlightRebuild{record->id, task.deadline};
    rebuild_task_of_[record->id] = task.task_id;
    tasks.push_back(std::move(task));
  }
  return tasks;
}

absl::StatusOr<PrefetchReply> NodeEngine::Prefetch(const radix::Namespace& ns,
                                                   absl::Span<const radix::TokenId> tokens) {
  STRATA_ASSIGN_OR_RETURN(const MatchReply match, Match(ns, tokens));
  PrefetchReply reply;
  reply.matched_pages = match.matched_pages;
  std::vector<BlobRecord*> promote;
  TimedMutexLock lock(&mu_, lock_hold_);
  RebuildRequestReply queued;
  for (const MatchedSegment& segment : match.segments) {
    BlobRecord* record = table_.FindLinked(segment.blob);
    if (record == nullptr) continue;  // removed since the match
    if (record->has_bytes()) reply.resident_pages += segment.page_count;
    if (record->in_dram() || record->moving) continue;
    if (record->on_ssd()) {
      if (std::find(promote.begin(), promote.end(), record) == promote.end()) {
        promote.push_back(record);
      }
      continue;
    }
    const absl::Status status = QueueRebuildLocked(record, &queued);
    if (!status.ok()) break;  // queue full: the rest stays TEXT for now
  }
  reply.rebuilds_queued = queued.queued;
  if (!promote.empty()) {
    reply.promotions = promote.size();
    // Prefetch promises no bytes: a failed promotion shows in the next Match.
    const absl::Status status = PromoteLocked(promote);
    if (!status.ok()) VLOG(1) << "prefetch promotion: " << status;
  }
  return reply;
}

}  // namespace strata::store::core
