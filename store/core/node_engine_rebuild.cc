// NodeEngine: rebuild from text (RequestRebuild, PullRebuildTasks) and Prefetch.
//
// The queue itself is a RebuildQueue (rebuild_queue.h); RefillLocked ends a task when a
// put refills its blob, RecordKeeper::Release when its blob goes away.
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
// How often a scoped PullRebuildTasks looks at the queue again while it waits.
constexpr absl::Duration kScopedPullPoll = absl::Milliseconds(20);

}  // namespace

absl::StatusOr<RebuildRequestReply> NodeEngine::RequestRebuild(const radix::BlobKey& key,
                                                               bool with_prefix,
                                                               const AccessScope& scope) {
  const MetaJournal::FlushOnExit flush(&journal_);  // after the lock below
  TimedMutexLock lock(&mu_, lock_hold_);
  BlobRecord* record = table_.FindLinked(key);
  if (record == nullptr || !scope.Allows(record->ns->tenant())) {
    return absl::NotFoundError(absl::StrCat("blob ", key.ToHex(), " is not in this node's index"));
  }
  RebuildRequestReply reply;
  STRATA_RETURN_IF_ERROR(rebuild_.QueuePath(record, with_prefix, table_, &reply));
  return reply;
}

absl::StatusOr<std::vector<RebuildTask>> NodeEngine::PullRebuildTasks(uint32_t max_tasks,
                                                                      absl::Duration wait,
                                                                      const AccessScope& scope) {
  if (max_tasks == 0) return absl::InvalidArgumentError("max_tasks must be > 0");
  wait = std::clamp(wait, absl::ZeroDuration(), kMaxPullWait);
  const absl::Time deadline = absl::Now() + wait;  // real time, as Await's
  while (true) {
    {
      const MetaJournal::FlushOnExit flush(&journal_);  // after the lock below
      TimedMutexLock lock(&mu_, lock_hold_);
      const absl::Time now = clock_->Now();
      rebuild_.Expire(now, table_);
      std::vector<RebuildTask> tasks = rebuild_.Take(
          max_tasks, now, table_,
          [&scope](const BlobRecord& r) { return scope.Allows(r.ns->tenant()); },
          [this] { return ids_.Next(); },
          [this](const BlobRecord& record, RebuildTask* task) {
            mu_.AssertHeld();
            task->ns = *record.ns;
            task->key = record.key;
            task->parent = record.parent;
            if (record.root_page > 0) {
              task->segment_start = SegmentStart{record.root_hash, record.root_page};
            }
            task->first_page = record.first_page;
            task->pages = record.pages;
            task->sequence_tokens = keeper_.SequenceTokens(mu_, record, record.end_page());
            task->checksums = record.checksums;
          });
      if (!tasks.empty() || wait <= absl::ZeroDuration()) return tasks;
    }
    // Long-poll without the engine lock; another worker may take what came first. A
    // scoped caller polls instead: tasks it may not take would wake it at once.
    if (!scope.all()) {
      const absl::Duration left = deadline - absl::Now();
      if (left <= absl::ZeroDuration()) return std::vector<RebuildTask>();
      absl::SleepFor(std::min(left, kScopedPullPoll));
      continue;
    }
    if (!rebuild_.WaitForQueued(deadline)) return std::vector<RebuildTask>();
  }
}

absl::StatusOr<PrefetchReply> NodeEngine::Prefetch(const radix::Namespace& ns,
                                                   absl::Span<const radix::TokenId> tokens,
                                                   const AccessScope& scope) {
  STRATA_ASSIGN_OR_RETURN(const MatchResult match,
                          Match(ns, tokens, LookupPhase::kUnspecified, scope));
  PrefetchReply reply;
  reply.matched_pages = match.matched_pages;
  const MetaJournal::FlushOnExit flush(&journal_);  // after the lock below
  TimedMutexLock lock(&mu_, lock_hold_);
  mover_.Prefetch(mu_, match.segments, rebuild_, &reply);
  return reply;
}

}  // namespace strata::store::core
