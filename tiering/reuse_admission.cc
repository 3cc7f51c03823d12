#include "strata/tiering/reuse_admission.h"

namespace strata::tiering {

bool ReuseAdmission::ShouldDemote(const BlobTraits& traits, const BlobAccessStats& stats) const {
  if (stats.reads >= options_.demote_min_reads) return true;
  if (options_.demote_min_depth_tokens == 0 || traits.page_tokens == 0) return false;
  return traits.depth_pages() * traits.page_tokens >= options_.demote_min_depth_tokens;
}

bool ReuseAdmission::ShouldPromote(const BlobTraits& traits, const BlobAccessStats& stats) const {
  if (stats.reads < 2 || stats.now_tick < stats.previous_read_tick) return false;
  return stats.now_tick - stats.previous_read_tick <= options_.promote_window_ticks;
}

}  // namespace strata::tiering
