// ReuseAdmission ("reuse"): move blobs between tiers only when reuse or cost justifies it.
//
//   ShouldDemote  true when the blob was read at least `demote_min_reads` times, or when
//                 its depth (first_page + pages) × page_tokens is at least
//                 `demote_min_depth_tokens` (a deep blob is expensive to rebuild from text:
//                 attention over its whole prefix). A blob with page_tokens == 0 is judged
//                 on reads alone. Most blobs of a chat trace are written once and never
//                 read (Mooncake: 76% of 512-token blocks), so they skip the SSD write.
//   ShouldPromote true on a second read within `promote_window_ticks`: reads >= 2 and
//                 now_tick - previous_read_tick <= promote_window_ticks. A single SSD hit
//                 is served from SSD without disturbing DRAM.
//
// Stateless; see AdmissionPolicy for thread safety. Errors: none.
#pragma once

#include <cstdint>
#include <string_view>

#include "strata/tiering/admission_policy.h"

namespace strata::tiering {

struct ReuseAdmissionOptions {
  uint64_t demote_min_reads = 1;
  // 0 = depth never qualifies a blob on its own.
  uint64_t demote_min_depth_tokens = 16384;
  uint64_t promote_window_ticks = uint64_t{1} << 16;
};

class ReuseAdmission final : public AdmissionPolicy {
 public:
  explicit ReuseAdmission(ReuseAdmissionOptions options = {}) : options_(options) {}

  std::string_view name() const override { return "reuse"; }
  bool ShouldDemote(const BlobTraits& traits, const BlobAccessStats& stats) const override;
  bool ShouldPromote(const BlobTraits& traits, const BlobAccessStats& stats) const override;

  const ReuseAdmissionOptions& options() const { return options_; }

 private:
  ReuseAdmissionOptions options_;
};

}  // namespace strata::tiering
