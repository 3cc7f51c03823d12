// strata-replay's report: the node's live miss-ratio curve next to the offline exact one,
// the table (or JSON object) of hit rates, bytes and latencies, and the PNG plots.
//
// FetchLiveCurve asks the node (Client::Tiers) for its SHARDS curve and DRAM capacity;
// Compare evaluates both curves on one capacity grid (tiering::mrc::CapacityGrid up to the
// exact working set) and gives the mean and max absolute error of the hit ratio.
//
// Thread safety: none needed (called from main after the replay). Errors: FetchLiveCurve
// returns the Tiers call's error; WritePlots INVALID_ARGUMENT / UNAVAILABLE / INTERNAL as
// plot::WritePng, or UNAVAILABLE when the directory cannot be created.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

#include "client/tools/replay/replay_config.h"
#include "client/tools/replay/replay_runner.h"
#include "strata/client.h"
#include "strata/tiering/mrc/miss_ratio_curve.h"

namespace strata::replay {

struct LiveCurve {
  report::MissRatioCurve curve;  // empty points: the node has none yet
  uint64_t dram_capacity_bytes = 0;
  std::array<LookupCounts, 3> node_lookups{};  // the node's own counts: prefill, midfill, decode
};

absl::StatusOr<LiveCurve> FetchLiveCurve(Client& client, absl::Duration timeout);

struct CurveComparison {
  report::MissRatioCurve exact;  // on `grid`
  std::vector<uint64_t> grid;
  bool have_live = false;
  double mae = 0, max_error = 0;
};

CurveComparison Compare(const ReplayResult& result, const LiveCurve* live, uint32_t points);

// Nearest-rank percentile (0 < q <= 1) of `values`; 0 when empty.
double Percentile(std::vector<double> values, double q);

struct PlotFiles {
  std::vector<std::string> paths;
};
absl::StatusOr<PlotFiles> WritePlots(const ReplayConfig& config, const ReplayResult& result,
                                     const LiveCurve* live, const CurveComparison& cmp);

// The human report: the command line, then tables. `live_error` explains a missing live
// curve ("" when present).
std::string FormatTable(const ReplayConfig& config, const ReplayResult& result,
                        const LiveCurve* live, const std::string& live_error,
                        const CurveComparison& cmp, const PlotFiles& plots);
// The same as one JSON object (flat keys; see replay_report.cc).
std::string FormatJson(const ReplayConfig& config, const ReplayResult& result,
                       const LiveCurve* live, const std::string& live_error,
                       const CurveComparison& cmp, const PlotFiles& plots);

}  // namespace strata::replay
