// ReplayRunner: drives one trace against a live node or cluster through libstrata (a
// tools::KvStore), as an inference worker would, and records what happened.
//
// Per request (blocks b_0..b_{n-1}, whole pages only; trace_pages.h makes their tokens):
//   1. Match the whole context, phase kPrefill when no block of the request appeared in an
//      earlier request of the replay (a fresh prompt), else kMidfill (it continues a
//      prefix the node should hold);
//   2. Read the readable matched pages (MatchResult::ReadablePages) into host memory;
//   3. Write the pages after them as one blob continuing the blob of the last readable page
//      (or from page 0), KV bytes from FillBlobBytes;
//   4. --decode-lookups times, Match the whole context with phase kDecode.
// A failed call is counted by its status code and ends that request; it never stops the
// replay. NOT_FOUND from a Match (the node does not know the namespace yet) is a miss of
// every page, not an error.
//
// Scheduling: a dispatcher hands requests, in trace order, to `concurrency` worker threads,
// each no earlier than start + timestamp / speedup (speedup 0: at once). A request whose
// blocks were first introduced by earlier requests waits until those have finished, so the
// prefix it should find was put (independent requests overlap freely).
//
// The offline exact curve: every Match that the node answered OK adds its whole pages, in
// the order the answers came back, to a tiering::mrc::ExactMrc keyed exactly as the node's
// SHARDS sampler keys them (tiering::mrc::AppendPrefixPageKeys from the namespace hash's
// lo ^ hi; bytes = layout.BytesPerPage()), so the two curves describe the same access
// stream.
//
// Thread safety: Run is called once from one thread; it owns its workers. Errors: Run
// returns INVALID_ARGUMENT for a bad namespace/layout; everything else is counted.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

#include "client/tools/kv_store.h"
#include "client/tools/replay/replay_config.h"
#include "strata/client.h"
#include "strata/tiering/mrc/exact_mrc.h"
#include "strata/tiering/sim/replay_trace.h"

namespace strata::replay {

enum PhaseIndex { kPrefillPhase = 0, kMidfillPhase = 1, kDecodePhase = 2, kPhases = 3 };
const char* PhaseIndexName(int phase);

// Page and token counts of Matches, by the tier Match reported for each hit page.
struct LookupTally {
  uint64_t lookups = 0;
  uint64_t queried_pages = 0;
  uint64_t dram_pages = 0, ssd_pages = 0, text_pages = 0;
  uint64_t readable_pages = 0;  // ReadablePages(): hits before the first TEXT segment
  uint64_t queried_tokens = 0;  // the context's tokens (a dropped partial block included)
  uint64_t hit_tokens = 0;      // matched pages * block tokens
  uint64_t HitPages() const { return dram_pages + ssd_pages + text_pages; }
  void Add(const LookupTally& o);
};

// One replayed request, for the hit-rate-over-time windows.
struct RequestRecord {
  double timestamp_ms = 0;  // trace time
  int phase = kPrefillPhase;
  uint32_t queried_pages = 0, hit_pages = 0;
  bool ok = false;
  uint32_t readable_pages = 0;  // hits before the first TEXT segment (bytes read)
  double done_s = 0;            // wall seconds from the replay's start to the request's end
};

struct ReplayResult {
  uint64_t requests = 0;         // replayed
  uint64_t failed_requests = 0;  // with at least one failed call
  std::array<LookupTally, kPhases> phases;
  uint64_t bytes_read = 0, pages_read = 0;
  uint64_t bytes_written = 0, pages_written = 0;
  uint64_t puts = 0, puts_existed = 0;
  // Milliseconds of each successful call / whole request (failed requests excluded).
  std::vector<double> match_ms, read_ms, put_ms, request_ms;
  std::map<std::string, uint64_t> errors;            // "CODE (call)" -> failed calls
  std::map<std::string, std::string> error_samples;  // "CODE (call)" -> the first one's message
  std::vector<RequestRecord> records;                // trace order
  double wall_s = 0;
  double max_dispatch_lag_ms = 0;  // worst lateness against the (scaled) trace clock
  tiering::mrc::ExactMrc exact;    // the offline exact curve's stream
};

// Replays `trace` (whole-page requests; `input_tokens[i]` = request i's prompt length,
// partial block included). REQUIRES: input_tokens.size() == trace.requests.size().
absl::StatusOr<ReplayResult> RunReplay(const ReplayConfig& config,
                                       const tiering::sim::ReplayTrace& trace,
                                       const std::vector<uint64_t>& input_tokens,
                                       tools::KvStore& store);

}  // namespace strata::replay
