// ClientCore: Prefetch and the rebuild-from-text calls (RequestRebuild, PullRebuildTasks).
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

#include "client/lib/client_core.h"
#include "client/lib/wire_types.h"
#include "strata/base/status_macros.h"
#include "strata/proto/key_convert.h"
#include "strata/proto/limits.h"
#include "strata/proto/namespace_convert.h"
#include "strata/proto/repeated_convert.h"

namespace strata::client_internal {

absl::StatusOr<PrefetchResult> ClientCore::Prefetch(const Namespace& ns,
                                                    absl::Span<const TokenId> tokens,
                                                    absl::Time deadline) {
  STRATA_RETURN_IF_ERROR(proto::CheckCount("tokens", tokens.size(), proto::kMaxTokensPerRequest));
  v1::PrefetchRequest request;
  proto::ToProto(ns, request.mutable_ns());
  proto::TokensToProto(tokens, request.mutable_tokens());
  v1::PrefetchResponse response;
  STRATA_RETURN_IF_ERROR(control_.Call(control_.store(), &v1::Store::Stub::Prefetch, request,
                                       &response, deadline, Retry::kUnavailable));
  return PrefetchResultFromProto(response);
}

absl::StatusOr<RebuildRequestResult> ClientCore::RequestRebuild(const BlobKey& key,
                                                                bool with_prefix,
                                                                absl::Time deadline) {
  if (key == BlobKey{}) return absl::InvalidArgumentError("key: missing (all zero)");
  v1::RequestRebuildRequest request;
  proto::ToProto(key, request.mutable_key());
  request.set_with_prefix(with_prefix);
  v1::RequestRebuildResponse response;
  // Safe to repeat: a blob queued by a lost attempt answers already_queued.
  STRATA_RETURN_IF_ERROR(control_.Call(control_.store(), &v1::Store::Stub::RequestRebuild, request,
                                       &response, deadline, Retry::kUnavailable));
  return RebuildRequestResultFromProto(response);
}

absl::StatusOr<std::vector<RebuildTask>> ClientCore::PullRebuildTasks(uint32_t max_tasks,
                                                                      absl::Duration wait,
                                                                      absl::Time deadline) {
  if (max_tasks == 0) return absl::InvalidArgumentError("max_tasks: must be >= 1");
  if (max_tasks > proto::kMaxRebuildTasksPerPull) {
    return absl::InvalidArgumentError(absl::StrCat(
        "max_tasks: ", max_tasks, " exceeds the limit of ", proto::kMaxRebuildTasksPerPull));
  }
  if (wait < absl::ZeroDuration() || wait > absl::Milliseconds(proto::kMaxRebuildWaitMs)) {
    return absl::InvalidArgumentError(absl::StrCat("wait: ", absl::FormatDuration(wait),
                                                   " is outside [0, ", proto::kMaxRebuildWaitMs,
                                                   " ms]"));
  }
  v1::PullRebuildTasksRequest request;
  request.set_max_tasks(max_tasks);
  request.set_wait_ms(static_cast<uint32_t>(absl::ToInt64Milliseconds(wait)));
  v1::PullRebuildTasksResponse response;
  // Safe to repeat: the tasks of an answer that was lost return to the queue at their
  // deadline.
  STRATA_RETURN_IF_ERROR(control_.Call(control_.store(), &v1::Store::Stub::PullRebuildTasks,
                                       request, &response, deadline, Retry::kUnavailable));
  const absl::Time now = absl::Now();
  std::vector<RebuildTask> tasks;
  tasks.reserve(response.tasks_size());
  for (int i = 0; i < response.tasks_size(); ++i) {
    STRATA_ASSIGN_OR_RETURN(RebuildTask task, RebuildTaskFromProto(response.tasks(i), now,
                                                                   absl::StrCat("tasks[", i, "]")));
    tasks.push_back(std::move(task));
  }
  return tasks;
}

}  // namespace strata::client_internal
