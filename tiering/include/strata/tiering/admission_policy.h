// AdmissionPolicy: whether a blob moving between byte tiers is worth the move.
//
// Eviction policies pick which blobs leave a tier; an admission policy decides where they
// go and whether a hit copies them up:
//   * ShouldDemote: a blob is leaving DRAM under pressure. true = write it to SSD (an SSD
//     write, and SSD space); false = drop its bytes, keeping only its token text (TEXT),
//     so a later read rebuilds it.
//   * ShouldPromote: a read was served from SSD. true = also copy the blob into DRAM (DRAM
//     space, evicting something there); false = serve it from SSD only.
// The engine supplies what it knows about the blob (BlobTraits, the same as the eviction
// policy's) and its access statistics (BlobAccessStats, from the index's counters). The
// engine's clock is a logical tick counter (e.g. the radix tree's: one tick per insert or
// match), so windows are in ticks, not seconds.
//
// Policies (MakeAdmissionPolicy names):
//   "always"  AlwaysAdmission: demote every blob, promote on every SSD hit (the simplest
//             inclusive hierarchy; the baseline).
//   "reuse"   ReuseAdmission (reuse_admission.h): demote blobs read at least once or deep
//             enough to be costly to rebuild; promote on a second read within a window.
//
// Thread safety: both methods are const and policies hold no mutable state, so one policy
// may be called from any number of threads. Errors: none.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

#include "absl/status/statusor.h"

#include "strata/tiering/eviction_policy.h"

namespace strata::tiering {

// The engine's access counters for one blob, in its logical ticks.
struct BlobAccessStats {
  // Reads of the blob since it was stored (any tier). For ShouldPromote it includes the
  // read being served.
  uint64_t reads = 0;
  // Tick of the blob's first store.
  uint64_t insert_tick = 0;
  // Tick of the read before the current one (ShouldPromote) or of the last read
  // (ShouldDemote); insert_tick when there is none.
  uint64_t previous_read_tick = 0;
  // The engine's clock now. REQUIRES: >= previous_read_tick >= insert_tick.
  uint64_t now_tick = 0;
};

class AdmissionPolicy {
 public:
  virtual ~AdmissionPolicy() = default;

  // The policy's configuration name ("always", "reuse").
  virtual std::string_view name() const = 0;
  // A blob leaves DRAM: write it to SSD (true) or drop it to TEXT (false)?
  virtual bool ShouldDemote(const BlobTraits& traits, const BlobAccessStats& stats) const = 0;
  // A read was served from SSD: copy the blob into DRAM as well (true)?
  virtual bool ShouldPromote(const BlobTraits& traits, const BlobAccessStats& stats) const = 0;
};

// Demote everything, promote on every SSD hit.
class AlwaysAdmission final : public AdmissionPolicy {
 public:
  std::string_view name() const override { return "always"; }
  bool ShouldDemote(const BlobTraits&, const BlobAccessStats&) const override { return true; }
  bool ShouldPromote(const BlobTraits&, const BlobAccessStats&) const override { return true; }
};

// The policy configured by `name`: "always" or "reuse" (default options). INVALID_ARGUMENT
// for any other name.
absl::StatusOr<std::unique_ptr<AdmissionPolicy>> MakeAdmissionPolicy(std::string_view name);

}  // namespace strata::tiering
