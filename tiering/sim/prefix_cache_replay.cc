#include "strata/tiering/sim/prefix_cache_replay.h"

#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"

#include "strata/tiering/sim/belady_policy.h"

namespace strata::tiering::sim {
namespace {

constexpr uint64_t kSessionHintBit = uint64_t{1} << 63;

// One cached block of the modelled tier.
struct CachedBlock {
  BlobId parent = 0;
  uint32_t cached_children = 0;
  uint64_t pinned_by = 0;  // 1 + index of the request that last read or wrote it
};

class PrefixCacheModel {
 public:
  PrefixCacheModel(const ReplayTrace& trace, const ReplayOptions& options, EvictionPolicy* policy,
                   BeladyPolicy* belady, const NextUses* next_uses)
      : trace_(trace), options_(options), policy_(policy), belady_(belady), next_uses_(next_uses) {}

  absl::StatusOr<ReplayResult> Run() {
    for (size_t r = 0; r < trace_.requests.size(); ++r) {
      if (absl::Status served = Serve(r); !served.ok()) return served;
    }
    return result_;
  }

 private:
  absl::Status Serve(size_t r) {
    const ReplayRequest& request = trace_.requests[r];
    const std::vector<BlobId>& blocks = request.blocks;
    const uint64_t n = blocks.size();
    const uint64_t pin = r + 1;
    ++result_.requests;
    result_.block_reads += n;
    const uint64_t full_tokens = uint64_t{trace_.block_tokens};
    if (n > 0) result_.token_reads += (n - 1) * full_tokens + request.last_block_tokens;

    uint64_t hit = 0;
    while (hit < n && cached_.contains(blocks[hit])) ++hit;
    result_.block_hits += hit;
    result_.token_hits +=
        hit == n && n > 0 ? (n - 1) * full_tokens + request.last_block_tokens : hit * full_tokens;

    BlobTraits traits;
    traits.bytes = options_.block_bytes;
    traits.pages = 1;
    traits.page_tokens = trace_.block_tokens;
    switch (options_.session_hints) {
      case SessionHints::kNone:
        break;
      case SessionHints::kSession:
        // Kept apart from block ids: a policy may take a hint equal to a BlobId for a root.
        traits.session_hint = request.session == 0 ? 0 : kSessionHintBit | request.session;
        break;
      case SessionHints::kRoot:
        traits.session_hint = n > 0 ? blocks[0] : 0;
        break;
    }

    for (uint64_t i = 0; i < hit; ++i) {
      cached_.find(blocks[i])->second.pinned_by = pin;
      TellNextUse(r, i);
      policy_->OnAccess(blocks[i]);
    }
    for (uint64_t i = hit; i < n; ++i) {
      if (cached_.contains(blocks[i])) {
        return absl::InvalidArgumentError(
            absl::StrCat("request ", r, ": block ", blocks[i], " is cached after a missing block"));
      }
      bool room = true;
      while (room && used_bytes_ + options_.block_bytes > options_.capacity_bytes) {
        absl::StatusOr<bool> freed = MakeRoom(pin);
        if (!freed.ok()) return freed.status();
        room = *freed;
      }
      if (!room) {
        result_.not_cached_blocks += n - i;
        break;
      }
      const BlobId parent = i == 0 ? 0 : blocks[i - 1];
      cached_.emplace(blocks[i], CachedBlock{parent, 0, pin});
      if (parent != 0) ++cached_.find(parent)->second.cached_children;
      used_bytes_ += options_.block_bytes;
      traits.first_page = static_cast<uint32_t>(i);
      traits.parent = parent;
      TellNextUse(r, i);
      policy_->OnInsert(blocks[i], traits);
    }
    return absl::OkStatus();
  }

  // One round of CollectVictims and erases; false when the policy offered nothing.
  absl::StatusOr<bool> MakeRoom(uint64_t pin) {
    const auto evictable = [this, pin](BlobId id) {
      const auto it = cached_.find(id);
      return it != cached_.end() && it->second.cached_children == 0 && it->second.pinned_by != pin;
    };
    victims_.clear();
    policy_->CollectVictims(used_bytes_ + options_.block_bytes - options_.capacity_bytes, evictable,
                            &victims_);
    if (victims_.empty()) return false;
    for (const BlobId victim : victims_) {
      if (!evictable(victim)) {
        const std::string_view name = policy_->name();
        return absl::InternalError(
            absl::StrCat("policy ", absl::string_view(name.data(), name.size()), " offered block ",
                         victim, ", which is not evictable"));
      }
      const auto it = cached_.find(victim);
      if (const BlobId parent = it->second.parent; parent != 0) {
        --cached_.find(parent)->second.cached_children;
      }
      cached_.erase(it);
      used_bytes_ -= options_.block_bytes;
      ++result_.evictions;
      policy_->OnErase(victim);
    }
    return true;
  }

  void TellNextUse(size_t r, uint64_t i) {
    if (belady_ == nullptr) return;
    const uint32_t next = next_uses_->next[next_uses_->offsets[r] + i];
    belady_->SetNextUse(next == NextUses::kNoNextUse ? BeladyPolicy::kNever : next);
  }

  const ReplayTrace& trace_;
  const ReplayOptions options_;
  EvictionPolicy* const policy_;
  BeladyPolicy* const belady_;
  const NextUses* const next_uses_;
  absl::flat_hash_map<BlobId, CachedBlock> cached_;
  std::vector<BlobId> victims_;
  uint64_t used_bytes_ = 0;
  ReplayResult result_;
};

}  // namespace

absl::StatusOr<ReplayResult> ReplayPrefixCache(const ReplayTrace& trace,
                                               const ReplayOptions& options, EvictionPolicy* policy,
                                               const NextUses* next_uses) {
  if (options.block_bytes == 0) return absl::InvalidArgumentError("block_bytes is 0");
  auto* belady = dynamic_cast<BeladyPolicy*>(policy);
  if (belady != nullptr &&
      (next_uses == nullptr || next_uses->offsets.size() != trace.requests.size() + 1)) {
    return absl::FailedPreconditionError("the Belady policy needs the trace's next uses");
  }
  PrefixCacheModel model(trace, options, policy, belady, next_uses);
  return model.Run();
}

}  // namespace strata::tiering::sim
