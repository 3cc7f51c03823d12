#include "client/cli/capacity_format.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"

#include "client/cli/table.h"

namespace strata::cli {
namespace {

std::string Indent(const std::string& text, const std::string& prefix) {
  std::string out;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    absl::StrAppend(&out, prefix, line, "\n");
  }
  return out;
}

Json PointJson(const CurvePoint& point) {
  return Json{{"capacity_bytes", point.capacity_bytes}, {"hit_ratio", point.hit_ratio}};
}

Json PointsJson(const std::vector<CurvePoint>& points) {
  Json json = Json::array();
  for (const CurvePoint& point : points) json.push_back(PointJson(point));
  return json;
}

// A row of a curve table: its point and what it is.
struct CurveRow {
  CurvePoint point;
  bool current = false;
  bool recommended = false;
};

// The curve's points in ascending capacity, with the current capacity and the
// recommendation marked (added as rows when no point has their capacity).
std::vector<CurveRow> CurveRows(const TierCurve& curve) {
  std::vector<CurveRow> rows;
  rows.reserve(curve.points.size() + 2);
  for (const CurvePoint& point : curve.points) rows.push_back({point});
  auto mark = [&rows](const CurvePoint& point, bool CurveRow::*flag) {
    for (CurveRow& row : rows) {
      if (row.point.capacity_bytes == point.capacity_bytes) {
        row.*flag = true;
        return;
      }
    }
    CurveRow row{point};
    row.*flag = true;
    rows.push_back(row);
  };
  mark(CurvePoint{curve.capacity_bytes, curve.expected_hit_ratio}, &CurveRow::current);
  if (curve.recommended.has_value()) mark(*curve.recommended, &CurveRow::recommended);
  std::stable_sort(rows.begin(), rows.end(), [](const CurveRow& a, const CurveRow& b) {
    return a.point.capacity_bytes < b.point.capacity_bytes;
  });
  return rows;
}

}  // namespace

std::string FormatRatio(double ratio) {
  if (!std::isfinite(ratio)) return "-";
  return absl::StrFormat("%.1f%%", ratio * 100);
}

std::string RenderLookupsTable(const std::vector<LookupCounts>& lookups) {
  Table table({{"PHASE"},
               {"LOOKUPS", Align::kRight},
               {"PAGES", Align::kRight},
               {"DRAM", Align::kRight},
               {"SSD", Align::kRight},
               {"TEXT", Align::kRight},
               {"MISS", Align::kRight},
               {"HIT%", Align::kRight}});
  LookupCounts total;
  auto add = [&table](const std::string& name, const LookupCounts& l) {
    table.AddRow({name, FormatCount(l.lookups), FormatCount(l.queried_pages),
                  FormatCount(l.dram_hit_pages), FormatCount(l.ssd_hit_pages),
                  FormatCount(l.text_hit_pages), FormatCount(l.miss_pages),
                  FormatPercent(l.HitPages(), l.queried_pages)});
  };
  for (const LookupCounts& l : lookups) {
    add(std::string(LookupPhaseName(l.phase)), l);
    total.lookups += l.lookups;
    total.queried_pages += l.queried_pages;
    total.dram_hit_pages += l.dram_hit_pages;
    total.ssd_hit_pages += l.ssd_hit_pages;
    total.text_hit_pages += l.text_hit_pages;
    total.miss_pages += l.miss_pages;
  }
  add("total", total);
  return table.Render();
}

Json LookupsJson(const std::vector<LookupCounts>& lookups) {
  Json json = Json::array();
  for (const LookupCounts& l : lookups) {
    Json& phase = json.emplace_back(Json::object());
    phase["phase"] = std::string(LookupPhaseName(l.phase));
    phase["lookups"] = l.lookups;
    phase["queried_pages"] = l.queried_pages;
    phase["dram_hit_pages"] = l.dram_hit_pages;
    phase["ssd_hit_pages"] = l.ssd_hit_pages;
    phase["text_hit_pages"] = l.text_hit_pages;
    phase["miss_pages"] = l.miss_pages;
    phase["hit_ratio"] =
        l.queried_pages == 0
            ? Json(nullptr)
            : Json(static_cast<double>(l.HitPages()) / static_cast<double>(l.queried_pages));
  }
  return json;
}

std::string MissRatioCurveSummary(const MissRatioCurve& mrc) {
  return absl::StrCat(FormatCount(mrc.accesses), " page accesses, ",
                      FormatCount(mrc.sampled_accesses), " sampled (rate ",
                      absl::StrFormat("%.4g", mrc.sample_rate), "), working set ",
                      FormatBytes(mrc.working_set_bytes));
}

std::string RenderTierCurve(const TierCurve& curve, double token_bytes_per_kv_byte) {
  const std::string name(TierName(curve.tier));
  std::string out = absl::StrCat(name, ": ", FormatBytes(curve.capacity_bytes),
                                 " now, expected hit rate ", FormatRatio(curve.expected_hit_ratio));
  if (curve.recommended.has_value()) {
    absl::StrAppend(&out, "; recommended ", FormatBytes(curve.recommended->capacity_bytes), " (",
                    FormatRatio(curve.recommended->hit_ratio), ")");
  }
  absl::StrAppend(&out, "\n");
  const bool token_column = curve.tier == Tier::kText && token_bytes_per_kv_byte > 0;
  std::vector<Column> columns = {{"CAPACITY", Align::kRight}, {"EXPECTED HIT%", Align::kRight}};
  if (token_column) columns.push_back({"TOKEN BYTES", Align::kRight});
  columns.push_back({""});
  Table table(std::move(columns));
  for (const CurveRow& row : CurveRows(curve)) {
    std::string note;
    if (row.current && row.recommended) {
      note = "<- current, recommended";
    } else if (row.current) {
      note = "<- current";
    } else if (row.recommended) {
      note = "<- recommended";
    }
    std::vector<std::string> cells = {FormatBytes(row.point.capacity_bytes),
                                      FormatRatio(row.point.hit_ratio)};
    if (token_column) {
      cells.push_back(FormatBytes(static_cast<uint64_t>(
          std::llround(static_cast<double>(row.point.capacity_bytes) * token_bytes_per_kv_byte))));
    }
    cells.push_back(std::move(note));
    table.AddRow(std::move(cells));
  }
  absl::StrAppend(&out, Indent(table.Render(), "  "));
  if (curve.tier == Tier::kText) {
    absl::StrAppend(&out,
                    "  (capacities are the TEXT budget's KV-byte equivalents: the curve counts KV "
                    "bytes)\n");
  }
  if (!curve.advice.empty()) absl::StrAppend(&out, "advice: ", curve.advice, "\n");
  return out;
}

Json MissRatioCurveJson(const MissRatioCurve& mrc) {
  Json json;
  json["points"] = PointsJson(mrc.points);
  json["accesses"] = mrc.accesses;
  json["sampled_accesses"] = mrc.sampled_accesses;
  json["sample_rate"] = mrc.sample_rate;
  json["working_set_bytes"] = mrc.working_set_bytes;
  return json;
}

Json TierCurveJson(const TierCurve& curve) {
  Json json;
  json["tier"] = std::string(TierName(curve.tier));
  json["capacity_bytes"] = curve.capacity_bytes;
  json["expected_hit_ratio"] = curve.expected_hit_ratio;
  json["recommended"] =
      curve.recommended.has_value() ? PointJson(*curve.recommended) : Json(nullptr);
  json["advice"] = curve.advice;
  json["points"] = PointsJson(curve.points);
  return json;
}

plot::LineChart CapacityChart(const std::vector<const TierCurve*>& curves) {
  plot::LineChart chart;
  chart.title = "expected hit rate by tier capacity (live miss-ratio curve)";
  chart.x_label = "tier capacity";
  chart.y_label = "expected hit rate";
  chart.y_min = 0;
  chart.y_max = 1;
  chart.x_format = plot::FormatBytes;
  chart.x_log = true;  // a 50 MiB working set and an 8 GiB tier on one axis
  chart.y_format = plot::FormatPercent;
  for (const TierCurve* curve : curves) {
    plot::Series series;
    series.name = std::string(TierName(curve->tier));
    for (const CurveRow& row : CurveRows(*curve)) {
      series.points.emplace_back(static_cast<double>(row.point.capacity_bytes),
                                 row.point.hit_ratio);
    }
    chart.series.push_back(std::move(series));
    chart.x_markers.emplace_back(static_cast<double>(curve->capacity_bytes),
                                 absl::StrCat(std::string(TierName(curve->tier)), " now"));
  }
  return chart;
}

}  // namespace strata::cli
