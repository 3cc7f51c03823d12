#include "strata/tiering/sim/replay_trace.h"

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"

namespace strata::tiering::sim {

namespace {

uint64_t RequestTokens(const ReplayTrace& trace, const ReplayRequest& request) {
  if (request.blocks.empty()) return 0;
  return (request.blocks.size() - 1) * uint64_t{trace.block_tokens} + request.last_block_tokens;
}

}  // namespace

TraceSummary Summarize(const ReplayTrace& trace) {
  TraceSummary summary;
  summary.requests = trace.requests.size();
  absl::flat_hash_set<BlobId> seen;
  absl::flat_hash_set<uint64_t> sessions;
  uint64_t hit_blocks = 0;
  uint64_t hit_tokens = 0;
  for (const ReplayRequest& request : trace.requests) {
    const uint64_t n = request.blocks.size();
    summary.block_reads += n;
    summary.token_reads += RequestTokens(trace, request);
    if (request.session != 0) sessions.insert(request.session);
    uint64_t k = 0;
    while (k < n && seen.contains(request.blocks[k])) ++k;
    hit_blocks += k;
    hit_tokens += k == n ? RequestTokens(trace, request) : k * uint64_t{trace.block_tokens};
    seen.insert(request.blocks.begin(), request.blocks.end());
  }
  summary.distinct_blocks = seen.size();
  summary.sessions = sessions.size();
  if (summary.block_reads > 0) {
    summary.unbounded_block_hit_rate = static_cast<double>(hit_blocks) / summary.block_reads;
  }
  if (summary.token_reads > 0) {
    summary.unbounded_token_hit_rate = static_cast<double>(hit_tokens) / summary.token_reads;
  }
  return summary;
}

absl::Status ValidateTrace(const ReplayTrace& trace) {
  if (trace.block_tokens == 0) return absl::InvalidArgumentError("block_tokens is 0");
  absl::flat_hash_map<BlobId, BlobId> parent_of;
  absl::flat_hash_set<BlobId> in_request;
  for (size_t r = 0; r < trace.requests.size(); ++r) {
    const ReplayRequest& request = trace.requests[r];
    if (!request.blocks.empty() &&
        (request.last_block_tokens == 0 || request.last_block_tokens > trace.block_tokens)) {
      return absl::InvalidArgumentError(absl::StrCat("request ", r, ": last_block_tokens ",
                                                     request.last_block_tokens, " is not in [1, ",
                                                     trace.block_tokens, "]"));
    }
    in_request.clear();
    BlobId parent = 0;
    for (const BlobId block : request.blocks) {
      if (block == 0) return absl::InvalidArgumentError(absl::StrCat("request ", r, ": block 0"));
      if (!in_request.insert(block).second) {
        return absl::InvalidArgumentError(
            absl::StrCat("request ", r, ": block ", block, " appears twice"));
      }
      const auto [it, inserted] = parent_of.emplace(block, parent);
      if (!inserted && it->second != parent) {
        return absl::InvalidArgumentError(absl::StrCat("request ", r, ": block ", block,
                                                       " follows ", parent, ", elsewhere ",
                                                       it->second, " (not a prefix trace)"));
      }
      parent = block;
    }
  }
  return absl::OkStatus();
}

NextUses ComputeNextUses(const ReplayTrace& trace) {
  NextUses uses;
  uses.offsets.reserve(trace.requests.size() + 1);
  uint64_t total = 0;
  for (const ReplayRequest& request : trace.requests) {
    uses.offsets.push_back(total);
    total += request.blocks.size();
  }
  uses.offsets.push_back(total);
  uses.next.assign(total, NextUses::kNoNextUse);
  absl::flat_hash_map<BlobId, uint32_t> next_request;
  for (size_t r = trace.requests.size(); r-- > 0;) {
    const std::vector<BlobId>& blocks = trace.requests[r].blocks;
    for (size_t i = 0; i < blocks.size(); ++i) {
      const auto [it, inserted] = next_request.emplace(blocks[i], static_cast<uint32_t>(r));
      if (!inserted) {
        uses.next[uses.offsets[r] + i] = it->second;
        it->second = static_cast<uint32_t>(r);
      }
    }
  }
  return uses;
}

}  // namespace strata::tiering::sim
