// LookupPhase and LookupCounts: Match's page hits and misses by the phase of a request.
//
// A caller of Match says what the lookup is for (the wire's strata.v1.Phase, same numbers);
// kUnspecified lets the node infer it from the answer: nothing readable matched ->
// prefill; every whole page of the query matched and readable but at most the last ->
// decode (a decode step re-reads the whole context and appends a few tokens); otherwise ->
// midfill (new input onto a cached prefix). Only statistics depend on it: every phase gets
// the same answer.
//
// Each whole page of a query counts once: a hit in the fastest tier holding it (TEXT: its
// tokens are known, its bytes are not) or a miss, so queried_pages = HitPages() +
// miss_pages. A page after a TEXT page still counts in its own tier (its bytes exist,
// though a prefix read stops at the TEXT page).
//
// Value types and pure functions; thread-safe. Errors: none.
#pragma once

#include <cstdint>
#include <string_view>

namespace strata::report {

enum class LookupPhase : int {
  kUnspecified = 0,  // not said: the node infers it
  kPrefill = 1,      // the first lookup of a request: its prompt
  kMidfill = 2,      // new input onto a cached prefix (a later chunk, an agent's turn)
  kDecode = 3,       // a lookup while the request decodes (the whole context again)
};

// Phases that statistics are kept for: prefill, midfill, decode.
inline constexpr int kLookupPhases = 3;
inline constexpr LookupPhase kCountedPhases[kLookupPhases] = {
    LookupPhase::kPrefill, LookupPhase::kMidfill, LookupPhase::kDecode};

// "unspecified", "prefill", "midfill", "decode"; "unknown" for a value outside the enum.
std::string_view LookupPhaseName(LookupPhase phase);
// The index of a counted phase in kCountedPhases (and NodeTiers::lookups as the node
// reports them). REQUIRES: phase is kPrefill, kMidfill or kDecode.
constexpr int LookupPhaseIndex(LookupPhase phase) { return static_cast<int>(phase) - 1; }

// The page lookups (Match calls) of one phase.
struct LookupCounts {
  LookupPhase phase = LookupPhase::kPrefill;  // never kUnspecified (the node infers those)
  uint64_t lookups = 0;                       // Match calls
  uint64_t queried_pages = 0;                 // whole pages they asked for
  uint64_t dram_hit_pages = 0;                // found with their bytes in DRAM
  uint64_t ssd_hit_pages = 0;                 // found with their bytes only on SSD
  uint64_t text_hit_pages = 0;                // found as TEXT (tokens only)
  uint64_t miss_pages = 0;                    // not found

  // dram + ssd + text hit pages.
  uint64_t HitPages() const { return dram_hit_pages + ssd_hit_pages + text_hit_pages; }
  friend bool operator==(const LookupCounts&, const LookupCounts&) = default;
};

}  // namespace strata::report
