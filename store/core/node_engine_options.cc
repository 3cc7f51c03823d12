#include "strata/store/core/node_engine_options.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace strata::store::core {

absl::Status NodeEngineOptions::Validate() const {
  if (hbm_admit_reads == 0) return absl::InvalidArgumentError("hbm_admit_reads must be > 0");
  const NodeEngineOptions& o = *this;
  if (o.dram_bytes == 0) return absl::InvalidArgumentError("dram_bytes must be > 0");
  if (o.max_blob_bytes == 0 || o.max_blob_bytes > (uint64_t{1} << 30)) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_blob_bytes must be in [1, 1 GiB], got ", o.max_blob_bytes));
  }
  if (o.default_lease_ttl <= absl::ZeroDuration() || o.max_lease_ttl < o.default_lease_ttl) {
    return absl::InvalidArgumentError(
        absl::StrCat("lease TTLs must satisfy 0 < default_lease_ttl (",
                     absl::FormatDuration(o.default_lease_ttl), ") <= max_lease_ttl (",
                     absl::FormatDuration(o.max_lease_ttl), ")"));
  }
  if (o.put_ttl <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("put_ttl must be > 0");
  }
  if (o.max_leases == 0 || o.max_tenant_leases == 0) {
    return absl::InvalidArgumentError("max_leases and max_tenant_leases must be > 0");
  }
  if (o.max_pending_puts == 0 || o.max_pending_metadata_bytes == 0) {
    return absl::InvalidArgumentError(
        "max_pending_puts and max_pending_metadata_bytes must be > 0");
  }
  if (!(o.max_pending_share > 0 && o.max_pending_share <= 1) ||
      !(o.max_pending_tenant_share > 0 && o.max_pending_tenant_share <= 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_pending_share ", o.max_pending_share, " and max_pending_tenant_share ",
                     o.max_pending_tenant_share, " must be in (0, 1]"));
  }
  if (o.reap_interval < absl::ZeroDuration()) {
    return absl::InvalidArgumentError("reap_interval must be >= 0");
  }
  if (!(o.dram_low_watermark > 0 && o.dram_low_watermark <= o.dram_high_watermark &&
        o.dram_high_watermark <= 1)) {
    return absl::InvalidArgumentError(absl::StrCat("DRAM watermarks must satisfy 0 < low (",
                                                   o.dram_low_watermark, ") <= high (",
                                                   o.dram_high_watermark, ") <= 1"));
  }
  if (o.rebuild_task_ttl <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("rebuild_task_ttl must be > 0");
  }
  if (o.max_rebuild_attempts == 0 || o.max_rebuild_queue == 0) {
    return absl::InvalidArgumentError("max_rebuild_attempts and max_rebuild_queue must be > 0");
  }
  if (o.mrc_curve_points == 0) return absl::InvalidArgumentError("mrc_curve_points must be > 0");
  return absl::OkStatus();
}

absl::Duration NodeEngineOptions::LeaseTtl(absl::Duration ttl) const {
  if (ttl == absl::ZeroDuration()) return default_lease_ttl;
  return std::min(ttl, max_lease_ttl);
}

}  // namespace strata::store::core
