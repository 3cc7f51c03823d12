#include "strata/tiering/sim/agentic_trace.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "absl/strings/str_cat.h"

namespace strata::tiering::sim {
namespace {

absl::Status CheckOptions(const AgenticTraceOptions& o) {
  const auto bad = [](std::string_view what) {
    return absl::InvalidArgumentError(
        absl::StrCat("agentic trace: ", absl::string_view(what.data(), what.size())));
  };
  if (o.sessions == 0) return bad("sessions must be > 0");
  if (o.system_prompts == 0) return bad("system_prompts must be > 0");
  if (o.block_tokens == 0) return bad("block_tokens must be > 0");
  if (o.system_prompt_blocks_min == 0) return bad("system_prompt_blocks_min must be > 0");
  if (o.system_prompt_blocks_min > o.system_prompt_blocks_max) {
    return bad("system_prompt_blocks_min > system_prompt_blocks_max");
  }
  if (!(o.session_interarrival_s > 0) || !(o.turns_median > 0) || !(o.turns_sigma >= 0) ||
      !(o.append_blocks_mean > 0) || !(o.think_s > 0) || !(o.idle_s > 0) ||
      !(o.system_prompt_zipf >= 0)) {
    return bad("means and the median must be > 0, sigma and zipf >= 0");
  }
  if (o.turns_max == 0) return bad("turns_max must be > 0");
  for (double p : {o.idle_probability, o.branch_probability}) {
    if (!(p >= 0 && p <= 1)) return bad("probabilities must be in [0, 1]");
  }
  if (o.compact_blocks <= uint64_t{o.system_prompt_blocks_max} + o.summary_blocks) {
    return bad("compact_blocks must exceed system_prompt_blocks_max + summary_blocks");
  }
  return absl::OkStatus();
}

struct TimedRequest {
  double time_s;
  uint64_t order;  // generation order: breaks time ties deterministically
  ReplayRequest request;
};

}  // namespace

absl::StatusOr<ReplayTrace> GenerateAgenticTrace(const AgenticTraceOptions& o) {
  if (absl::Status valid = CheckOptions(o); !valid.ok()) return valid;
  std::mt19937_64 rng(o.seed);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  BlobId next_block = 0;

  std::vector<std::vector<BlobId>> prompts(o.system_prompts);
  std::uniform_int_distribution<uint32_t> prompt_blocks(o.system_prompt_blocks_min,
                                                        o.system_prompt_blocks_max);
  std::vector<double> weights;
  for (uint32_t k = 0; k < o.system_prompts; ++k) {
    const uint32_t n = prompt_blocks(rng);
    for (uint32_t i = 0; i < n; ++i) prompts[k].push_back(++next_block);
    weights.push_back(1.0 / std::pow(k + 1.0, o.system_prompt_zipf));
  }
  std::discrete_distribution<uint32_t> pick_prompt(weights.begin(), weights.end());
  std::lognormal_distribution<double> turns_dist(std::log(o.turns_median), o.turns_sigma);
  std::exponential_distribution<double> arrival(1.0 / o.session_interarrival_s);
  std::exponential_distribution<double> think(1.0 / o.think_s);
  std::exponential_distribution<double> idle(1.0 / o.idle_s);
  std::exponential_distribution<double> append(1.0 / o.append_blocks_mean);

  std::vector<TimedRequest> timed;
  double session_start = 0;
  for (uint32_t s = 0; s < o.sessions; ++s) {
    session_start += arrival(rng);
    const std::vector<BlobId>& prompt = prompts[pick_prompt(rng)];
    std::vector<BlobId> context = prompt;
    std::vector<size_t> turn_ends = {context.size()};  // where each turn's context ended
    const double drawn = std::ceil(turns_dist(rng));
    const uint32_t turns =
        static_cast<uint32_t>(std::clamp(drawn, 1.0, static_cast<double>(o.turns_max)));
    double now = session_start;
    for (uint32_t turn = 0; turn < turns; ++turn) {
      if (turn > 0) {
        now += uniform(rng) < o.idle_probability ? idle(rng) : think(rng);
        if (uniform(rng) < o.branch_probability && turn_ends.size() > 1) {
          std::uniform_int_distribution<size_t> pick(0, turn_ends.size() - 2);
          const size_t cut = turn_ends[pick(rng)];
          context.resize(cut);
          while (turn_ends.back() > cut) turn_ends.pop_back();
        } else if (context.size() > o.compact_blocks) {
          context = prompt;
          for (uint32_t i = 0; i < o.summary_blocks; ++i) context.push_back(++next_block);
          turn_ends = {prompt.size(), context.size()};
        }
      }
      const uint64_t appended = 1 + static_cast<uint64_t>(append(rng));
      for (uint64_t i = 0; i < appended; ++i) context.push_back(++next_block);
      turn_ends.push_back(context.size());
      ReplayRequest request;
      request.blocks = context;
      request.last_block_tokens = o.block_tokens;
      request.session = s + 1;
      request.timestamp_ms = now * 1000;
      timed.push_back(TimedRequest{now, timed.size(), std::move(request)});
    }
  }
  std::sort(timed.begin(), timed.end(), [](const TimedRequest& a, const TimedRequest& b) {
    return a.time_s != b.time_s ? a.time_s < b.time_s : a.order < b.order;
  });
  ReplayTrace trace;
  trace.name = "agentic";
  trace.block_tokens = o.block_tokens;
  trace.requests.reserve(timed.size());
  for (TimedRequest& t : timed) trace.requests.push_back(std::move(t.request));
  return trace;
}

}  // namespace strata::tiering::sim
