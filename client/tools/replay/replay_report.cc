#include "client/tools/replay/replay_report.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <sys/stat.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

#include "nlohmann/json.hpp"
#include "strata/base/byte_size.h"
#include "strata/plot/line_chart.h"

namespace strata::replay {
namespace {

double Ratio(uint64_t a, uint64_t b) { return b == 0 ? 0.0 : static_cast<double>(a) / b; }

std::string Gib(uint64_t bytes) { return base::FormatBytes(static_cast<double>(bytes)); }

LookupTally Total(const ReplayResult& r, bool with_decode) {
  LookupTally t;
  t.Add(r.phases[kPrefillPhase]);
  t.Add(r.phases[kMidfillPhase]);
  if (with_decode) t.Add(r.phases[kDecodePhase]);
  return t;
}

struct LatencyRow {
  const char* name;
  const std::vector<double>* values;
};

}  // namespace

absl::StatusOr<LiveCurve> FetchLiveCurve(Client& client, absl::Duration timeout) {
  absl::StatusOr<NodeTiers> tiers = client.Tiers(CallOptions::WithTimeout(timeout));
  if (!tiers.ok()) return tiers.status();
  LiveCurve live;
  for (const CurvePoint& p : tiers->mrc.points) {
    live.curve.points.push_back({p.capacity_bytes, p.hit_ratio});
  }
  live.curve.accesses = tiers->mrc.accesses;
  live.curve.sampled_accesses = tiers->mrc.sampled_accesses;
  live.curve.sample_rate = tiers->mrc.sample_rate;
  live.curve.working_set_bytes = tiers->mrc.working_set_bytes;
  for (const TierStats& t : tiers->tiers) {
    if (t.tier == Tier::kDram) live.dram_capacity_bytes = t.capacity_bytes;
  }
  for (const LookupCounts& l : tiers->lookups) {
    const int i = static_cast<int>(l.phase) - 1;
    if (i >= 0 && i < 3) live.node_lookups[i] = l;
  }
  return live;
}

CurveComparison Compare(const ReplayResult& result, const LiveCurve* live, uint32_t points) {
  CurveComparison cmp;
  const uint64_t top = std::max<uint64_t>(result.exact.working_set_bytes(), 1);
  cmp.grid = tiering::mrc::CapacityGrid(top, points);
  cmp.exact = result.exact.Curve(cmp.grid);
  if (live != nullptr && !live->curve.points.empty()) {
    cmp.have_live = true;
    cmp.mae = tiering::mrc::MeanAbsoluteError(live->curve, cmp.exact, cmp.grid);
    cmp.max_error = tiering::mrc::MaxAbsoluteError(live->curve, cmp.exact, cmp.grid);
  }
  return cmp;
}

double Percentile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t rank = static_cast<size_t>(std::ceil(q * values.size()));
  return values[std::clamp<size_t>(rank, 1, values.size()) - 1];
}

namespace {

// Pages asked, found (KV or TEXT) and readable (KV) by the wall time the requests ended, in
// `windows` windows from the replay's start to its end: what a node lost mid-replay costs.
struct WallWindow {
  double end_s = 0;
  uint64_t requests = 0, queried = 0, found = 0, readable = 0;
};

// A chart of page hit rates (0 to 100 %) against `x_label`.
plot::LineChart HitRateChart(std::string title, std::string x_label) {
  plot::LineChart chart;
  chart.title = std::move(title);
  chart.x_label = std::move(x_label);
  chart.y_label = "page hit rate";
  chart.y_min = 0;
  chart.y_max = 1;
  chart.y_format = plot::FormatPercent;
  return chart;
}

std::vector<WallWindow> WallWindows(const ReplayResult& result, uint32_t windows) {
  std::vector<WallWindow> w(windows);
  const double width = std::max(result.wall_s, 1e-9) / windows;
  for (uint32_t i = 0; i < windows; ++i) w[i].end_s = (i + 1) * width;
  for (const RequestRecord& r : result.records) {
    if (!r.ok) continue;
    WallWindow& x = w[std::min<uint32_t>(windows - 1, static_cast<uint32_t>(r.done_s / width))];
    ++x.requests;
    x.queried += r.queried_pages;
    x.found += r.hit_pages;
    x.readable += r.readable_pages;
  }
  return w;
}

}  // namespace

absl::StatusOr<PlotFiles> WritePlots(const ReplayConfig& config, const ReplayResult& result,
                                     const LiveCurve* live, const CurveComparison& cmp) {
  PlotFiles files;
  if (mkdir(config.plot_dir.c_str(), 0755) != 0 && errno != EEXIST) {
    return absl::UnavailableError(
        absl::StrCat("cannot create ", config.plot_dir, ": ", std::strerror(errno)));
  }
  // Hit rate over trace time, windowed: overall and per phase of the first Match.
  double begin_ms = result.records.empty() ? 0 : result.records.front().timestamp_ms;
  double end_ms = begin_ms;
  for (const RequestRecord& r : result.records) {
    begin_ms = std::min(begin_ms, r.timestamp_ms);
    end_ms = std::max(end_ms, r.timestamp_ms);
  }
  const uint32_t windows = config.windows;
  const double width_ms = std::max(end_ms - begin_ms, 1.0) / windows;
  std::vector<std::array<uint64_t, 6>> w(windows, std::array<uint64_t, 6>{});
  for (const RequestRecord& r : result.records) {
    const uint32_t i = std::min<uint32_t>(
        windows - 1, static_cast<uint32_t>((r.timestamp_ms - begin_ms) / width_ms));
    w[i][0] += r.queried_pages;
    w[i][1] += r.hit_pages;
    w[i][2 + 2 * r.phase] += r.queried_pages;
    w[i][3 + 2 * r.phase] += r.hit_pages;
  }
  plot::LineChart hit = HitRateChart("strata-replay: page hit rate over time", "trace time (s)");
  // A window without requests of a kind has no point (the line joins its neighbours).
  plot::Series all{"all requests", {}}, pre{"prefill", {}}, mid{"midfill", {}};
  for (uint32_t i = 0; i < windows; ++i) {
    const double x = (i + 0.5) * width_ms / 1000;
    if (w[i][0] > 0) all.points.push_back({x, Ratio(w[i][1], w[i][0])});
    if (w[i][2] > 0) pre.points.push_back({x, Ratio(w[i][3], w[i][2])});
    if (w[i][4] > 0) mid.points.push_back({x, Ratio(w[i][5], w[i][4])});
  }
  hit.series = {pre, mid, all};
  const std::string hit_path = config.plot_dir + "/hit_rate.png";
  if (absl::Status s = plot::WritePng(hit, hit_path); !s.ok()) return s;
  files.paths.push_back(hit_path);

  plot::LineChart mrc;
  mrc.title = "miss-ratio curve: live (node) vs exact (offline)";
  mrc.x_label = "cache capacity";
  mrc.y_label = "hit ratio";
  mrc.x_format = plot::FormatBytes;
  mrc.x_log = true;  // capacities over several powers of two (the points at 0 are not drawn)
  mrc.y_format = plot::FormatPercent;
  mrc.y_min = 0;
  plot::Series exact{"exact LRU (offline replay)", {{0, 0}}};
  for (const auto& p : cmp.exact.points) {
    exact.points.push_back({static_cast<double>(p.capacity_bytes), p.hit_ratio});
  }
  plot::Series live_series{"live (node, SHARDS)", {{0, 0}}};
  if (cmp.have_live) {
    for (const auto& p : live->curve.points) {
      if (p.capacity_bytes > cmp.grid.back()) break;
      live_series.points.push_back({static_cast<double>(p.capacity_bytes), p.hit_ratio});
    }
    mrc.series.push_back(live_series);
  }
  mrc.series.push_back(exact);
  if (live != nullptr && live->dram_capacity_bytes > 0 &&
      live->dram_capacity_bytes <= 2 * cmp.grid.back()) {
    mrc.x_markers.push_back(
        {static_cast<double>(live->dram_capacity_bytes), "DRAM " + Gib(live->dram_capacity_bytes)});
  }
  plot::LineChart wall = HitRateChart("strata-replay: page hit rate over wall time",
                                      "wall time since the replay's start (s)");
  plot::Series found{"found (KV or TEXT)", {}}, readable{"readable (KV)", {}};
  for (const WallWindow& x : WallWindows(result, config.windows)) {
    if (x.queried == 0) continue;
    found.points.push_back({x.end_s, Ratio(x.found, x.queried)});
    readable.points.push_back({x.end_s, Ratio(x.readable, x.queried)});
  }
  wall.series = {found, readable};
  const std::string wall_path = config.plot_dir + "/hit_rate_wall.png";
  if (absl::Status s = plot::WritePng(wall, wall_path); !s.ok()) return s;
  files.paths.push_back(wall_path);

  const std::string mrc_path = config.plot_dir + "/mrc.png";
  if (absl::Status s = plot::WritePng(mrc, mrc_path); !s.ok()) return s;
  files.paths.push_back(mrc_path);
  return files;
}

std::string FormatTable(const ReplayConfig& config, const ReplayResult& result,
                        const LiveCurve* live, const std::string& live_error,
                        const CurveComparison& cmp, const PlotFiles& plots) {
  std::string out = absl::StrCat("$ ", config.command_line, "\n");
  const radix::KvLayout layout = config.Layout();
  absl::StrAppendFormat(&out,
                        "trace %s: %d requests replayed in %.1f s (%.0f req/s), concurrency %d, "
                        "speedup %g; layout %s (%s a page)\n\n",
                        config.trace_path, result.requests, result.wall_s,
                        result.requests / std::max(result.wall_s, 1e-9), config.concurrency,
                        config.speedup, layout.ToString(), Gib(layout.BytesPerPage()));
  absl::StrAppendFormat(&out, "%-8s %9s %12s %9s %9s %9s %9s %9s %9s\n", "phase", "lookups",
                        "pages", "page hit", "token hit", "dram", "ssd", "text", "node hit");
  for (int p = 0; p <= kPhases; ++p) {
    const LookupTally t = p < kPhases ? result.phases[p] : Total(result, false);
    if (p < kPhases && t.lookups == 0) continue;
    std::string node = "-";
    if (live != nullptr && p < kPhases && live->node_lookups[p].queried_pages > 0) {
      const LookupCounts& l = live->node_lookups[p];
      node = absl::StrFormat("%.2f%%", 100 * Ratio(l.HitPages(), l.queried_pages));
    }
    absl::StrAppendFormat(
        &out, "%-8s %9d %12d %8.2f%% %8.2f%% %8.2f%% %8.2f%% %8.2f%% %9s\n",
        p < kPhases ? PhaseIndexName(p) : "all", t.lookups, t.queried_pages,
        100 * Ratio(t.HitPages(), t.queried_pages), 100 * Ratio(t.hit_tokens, t.queried_tokens),
        100 * Ratio(t.dram_pages, t.queried_pages), 100 * Ratio(t.ssd_pages, t.queried_pages),
        100 * Ratio(t.text_pages, t.queried_pages), p < kPhases ? node : "");
  }
  out +=
      "(\"all\" = prefill + midfill, the requests' first Match; dram/ssd/text = hit pages by the "
      "tier Match named; node hit = the node's own count for the phase)\n\n";
  absl::StrAppendFormat(&out,
                        "bytes read %s (%d pages), written %s (%d pages, %d puts, %d already "
                        "existed)\n\n",
                        Gib(result.bytes_read), result.pages_read, Gib(result.bytes_written),
                        result.pages_written, result.puts, result.puts_existed);
  absl::StrAppendFormat(&out, "%-8s %8s %9s %9s %9s %9s\n", "latency", "calls", "p50 ms", "p90 ms",
                        "p99 ms", "max ms");
  for (const LatencyRow& row :
       {LatencyRow{"match", &result.match_ms}, LatencyRow{"read", &result.read_ms},
        LatencyRow{"put", &result.put_ms}, LatencyRow{"request", &result.request_ms}}) {
    absl::StrAppendFormat(&out, "%-8s %8d %9.2f %9.2f %9.2f %9.2f\n", row.name, row.values->size(),
                          Percentile(*row.values, 0.5), Percentile(*row.values, 0.9),
                          Percentile(*row.values, 0.99), Percentile(*row.values, 1.0));
  }
  absl::StrAppendFormat(&out, "\nfailed requests %d", result.failed_requests);
  for (const auto& [code, n] : result.errors) absl::StrAppendFormat(&out, "; %s %d", code, n);
  if (config.speedup > 0) {
    absl::StrAppendFormat(&out, "\nworst lateness against the trace clock: %.1f ms",
                          result.max_dispatch_lag_ms);
  }
  absl::StrAppendFormat(&out,
                        "\n\nexact LRU curve (offline): %d page accesses, working set %s; hit "
                        "ratio at the working set %.2f%%\n",
                        result.exact.accesses(), Gib(result.exact.working_set_bytes()),
                        100 * cmp.exact.HitRatioAt(cmp.grid.back()));
  if (cmp.have_live) {
    absl::StrAppendFormat(&out,
                          "live curve (node): %d accesses, %d sampled (rate %.4f), working set "
                          "%s\n",
                          live->curve.accesses, live->curve.sampled_accesses,
                          live->curve.sample_rate, Gib(live->curve.working_set_bytes));
    if (live->dram_capacity_bytes > 0) {
      absl::StrAppendFormat(&out, "at the DRAM capacity %s: live %.2f%%, exact %.2f%%\n",
                            Gib(live->dram_capacity_bytes),
                            100 * live->curve.HitRatioAt(live->dram_capacity_bytes),
                            100 * cmp.exact.HitRatioAt(live->dram_capacity_bytes));
    }
    absl::StrAppendFormat(&out,
                          "live vs exact over %d capacities up to the working set: MAE %.4f, "
                          "max error %.4f\n",
                          cmp.grid.size(), cmp.mae, cmp.max_error);
  } else {
    absl::StrAppendFormat(&out, "live curve: none (%s)\n",
                          live_error.empty() ? "the node has sampled nothing yet" : live_error);
  }
  for (const std::string& p : plots.paths) absl::StrAppendFormat(&out, "plot: %s\n", p);
  return out;
}

std::string FormatJson(const ReplayConfig& config, const ReplayResult& result,
                       const LiveCurve* live, const std::string& live_error,
                       const CurveComparison& cmp, const PlotFiles& plots) {
  nlohmann::ordered_json out;
  // A figure that could not be computed (no samples) reads as 0, as in the table.
  auto num = [&out](const std::string& key, double v) { out[key] = std::isfinite(v) ? v : 0.0; };
  auto integer = [&out](const std::string& key, uint64_t v) { out[key] = v; };
  out["command"] = config.command_line;
  out["trace"] = config.trace_path;
  integer("requests", result.requests);
  integer("failed_requests", result.failed_requests);
  num("wall_s", result.wall_s);
  integer("bytes_per_page", config.Layout().BytesPerPage());
  const LookupTally all = Total(result, false);
  integer("lookups", all.lookups);
  integer("queried_pages", all.queried_pages);
  integer("hit_pages", all.HitPages());
  num("page_hit_rate", Ratio(all.HitPages(), all.queried_pages));
  num("token_hit_rate", Ratio(all.hit_tokens, all.queried_tokens));
  num("dram_hit_rate", Ratio(all.dram_pages, all.queried_pages));
  num("ssd_hit_rate", Ratio(all.ssd_pages, all.queried_pages));
  num("text_hit_rate", Ratio(all.text_pages, all.queried_pages));
  for (int p = 0; p < kPhases; ++p) {
    const LookupTally& t = result.phases[p];
    const std::string n = PhaseIndexName(p);
    integer(n + "_lookups", t.lookups);
    integer(n + "_queried_pages", t.queried_pages);
    num(n + "_page_hit_rate", Ratio(t.HitPages(), t.queried_pages));
    num(n + "_token_hit_rate", Ratio(t.hit_tokens, t.queried_tokens));
    num(n + "_dram_hit_rate", Ratio(t.dram_pages, t.queried_pages));
    num(n + "_ssd_hit_rate", Ratio(t.ssd_pages, t.queried_pages));
    num(n + "_text_hit_rate", Ratio(t.text_pages, t.queried_pages));
  }
  integer("bytes_read", result.bytes_read);
  integer("pages_read", result.pages_read);
  integer("bytes_written", result.bytes_written);
  integer("pages_written", result.pages_written);
  integer("puts", result.puts);
  integer("puts_existed", result.puts_existed);
  for (const LatencyRow& row :
       {LatencyRow{"match", &result.match_ms}, LatencyRow{"read", &result.read_ms},
        LatencyRow{"put", &result.put_ms}, LatencyRow{"request", &result.request_ms}}) {
    const std::string n = row.name;
    integer(n + "_calls", row.values->size());
    num(n + "_p50_ms", Percentile(*row.values, 0.5));
    num(n + "_p90_ms", Percentile(*row.values, 0.9));
    num(n + "_p99_ms", Percentile(*row.values, 0.99));
    num(n + "_max_ms", Percentile(*row.values, 1.0));
  }
  uint64_t errors = 0;
  nlohmann::ordered_json& by_code = out["errors_by_code"] = nlohmann::ordered_json::object();
  for (const auto& [code, n] : result.errors) {
    by_code[code] = n;
    errors += n;
  }
  nlohmann::ordered_json& samples = out["error_samples"] = nlohmann::ordered_json::object();
  for (const auto& [code, message] : result.error_samples) samples[code] = message;
  integer("errors", errors);
  num("max_dispatch_lag_ms", result.max_dispatch_lag_ms);
  integer("exact_accesses", result.exact.accesses());
  integer("exact_working_set_bytes", result.exact.working_set_bytes());
  out["live_curve"] = cmp.have_live;
  if (!live_error.empty()) out["live_error"] = live_error;
  if (cmp.have_live) {
    integer("live_accesses", live->curve.accesses);
    integer("live_sampled_accesses", live->curve.sampled_accesses);
    num("live_sample_rate", live->curve.sample_rate);
    integer("dram_capacity_bytes", live->dram_capacity_bytes);
    num("live_hit_ratio_at_dram", live->curve.HitRatioAt(live->dram_capacity_bytes));
    num("exact_hit_ratio_at_dram", cmp.exact.HitRatioAt(live->dram_capacity_bytes));
    integer("mae_points", cmp.grid.size());
    num("mae", cmp.mae);
    num("max_error", cmp.max_error);
  }
  nlohmann::ordered_json windows = nlohmann::ordered_json::array();
  for (const WallWindow& x : WallWindows(result, config.windows)) {
    windows.push_back({{"end_s", x.end_s},
                       {"requests", x.requests},
                       {"queried_pages", x.queried},
                       {"found_pages", x.found},
                       {"readable_pages", x.readable}});
  }
  out["wall_windows"] = windows;
  out["plots"] = plots.paths;
  // Bytes that are not UTF-8 (in a path, say) become U+FFFD.
  return out.dump(-1, ' ', /*ensure_ascii=*/false,
                  nlohmann::ordered_json::error_handler_t::replace) +
         "\n";
}

}  // namespace strata::replay
