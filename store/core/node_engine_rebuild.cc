// NodeEngine: rebuild from text (RequestRebuild, PullRebuildTasks) and Prefetch.
#include "absl/strings/str_cat.h"

#include "strata/store/core/node_engine.h"

namespace strata::store::core {

absl::StatusOr<RebuildRequestReply> NodeEngine::RequestRebuild(const radix::BlobKey& key,
                                                               bool with_prefix) {
  (void)key;
  (void)with_prefix;
  return absl::UnimplementedError("RequestRebuild: not yet");
}

absl::StatusOr<std::vector<RebuildTask>> NodeEngine::PullRebuildTasks(uint32_t max_tasks,
                                                                      absl::Duration wait) {
  (void)max_tasks;
  (void)wait;
  return absl::UnimplementedError("PullRebuildTasks: not yet");
}

absl::StatusOr<PrefetchReply> NodeEngine::Prefetch(const radix::Namespace& ns,
                                                   absl::Span<const radix::TokenId> tokens) {
  (void)ns;
  (void)tokens;
  return absl::UnimplementedError("Prefetch: not yet");
}

}  // namespace strata::store::core
