// A NodeSnapshot with known, distinct figures for the formatting tests.
#pragma once

#include <initializer_list>
#include <string>
#include <utility>

#include "strata/base/latency_histogram.h"
#include "strata/store/core/rpc_stats.h"
#include "strata/store/http/node_snapshot.h"

namespace strata::store::http::testing {

inline NodeSnapshot KnownSnapshot() {
  NodeSnapshot s;
  report::NodeTiers& t = s.tiers;
  t.tiers.push_back(report::TierStats{.tier = report::Tier::kDram,
                                      .capacity_bytes = 1000,
                                      .used_bytes = 400,
                                      .blobs = 3,
                                      .hits = 7,
                                      .misses = 2,
                                      .evictions = 1,
                                      .promotions = 4,
                                      .demotions = 5,
                                      .pages = 12});
  t.tiers.push_back(report::TierStats{.tier = report::Tier::kSsd,
                                      .capacity_bytes = 5000,
                                      .used_bytes = 6000,
                                      .blobs = 9,
                                      .hits = 11,
                                      .pages = 36});
  t.text.capacity_bytes = 100;
  t.text.used_bytes = 10;
  t.text.blobs = 1;
  t.text.drops = 2;
  t.text.deletions = 1;
  t.text.rebuilds = 1;
  t.text.pages = 4;
  t.rebuild = report::RebuildQueueStats{
      .queued = 1, .in_flight = 2, .requested = 3, .completed = 4, .expired = 5, .dropped = 6};
  t.engine.leases = 2;
  t.engine.pending_puts = 1;
  t.engine.blobs = 13;
  t.engine.namespaces = 1;
  t.engine.meta_write_errors = 7;
  t.meta = report::MetaStats{.records = 13,
                             .disk_bytes = 4096,
                             .memtable_bytes = 1024,
                             .table_reader_bytes = 512,
                             .block_cache_bytes = 2048};
  t.tenants = {
      {.tenant = "acme", .blobs = 12, .dram_bytes = 400, .ssd_bytes = 6000, .text_blobs = 1},
      {.tenant = "globex\"x", .blobs = 1}};
  t.lookups.resize(report::kLookupPhases);
  t.lookups[0] = report::LookupCounts{.phase = report::LookupPhase::kPrefill,
                                      .lookups = 2,
                                      .queried_pages = 8,
                                      .dram_hit_pages = 0,
                                      .ssd_hit_pages = 0,
                                      .text_hit_pages = 0,
                                      .miss_pages = 8};
  t.lookups[1] = report::LookupCounts{.phase = report::LookupPhase::kMidfill,
                                      .lookups = 1,
                                      .queried_pages = 6,
                                      .dram_hit_pages = 3,
                                      .ssd_hit_pages = 1,
                                      .text_hit_pages = 0,
                                      .miss_pages = 2};
  t.lookups[2] = report::LookupCounts{.phase = report::LookupPhase::kDecode,
                                      .lookups = 3,
                                      .queried_pages = 9,
                                      .dram_hit_pages = 7,
                                      .ssd_hit_pages = 0,
                                      .text_hit_pages = 2,
                                      .miss_pages = 0};
  t.mrc.points = {{500, 0.25}, {1000, 0.5}, {2000, 0.75}};
  t.mrc.accesses = 100;
  t.mrc.sampled_accesses = 10;
  t.mrc.sample_rate = 0.1;
  t.mrc.working_set_bytes = 2000;
  t.token_bytes_per_kv_byte = 0.001;
  report::TierCurve dram;
  dram.tier = report::Tier::kDram;
  dram.capacity_bytes = 1000;
  dram.expected_hit_ratio = 0.5;
  dram.points = {{500, 0.25}, {1000, 0.5}, {2000, 0.75}};
  dram.recommended = report::CurvePoint{2000, 0.75};
  dram.advice = "DRAM 1000 B -> 2000 B raises the \"expected\" hit rate\nfrom 50.0% to 75.0%";
  t.curves.push_back(dram);
  report::TierCurve ssd;
  ssd.tier = report::Tier::kSsd;
  ssd.capacity_bytes = 5000;
  ssd.expected_hit_ratio = 0.75;
  ssd.points = {{2500, 0.75}, {5000, 0.75}};
  ssd.recommended = report::CurvePoint{2500, 0.75};
  ssd.advice = "SSD is larger than it needs to be";
  t.curves.push_back(ssd);

  s.data_plane.fetch_requests = 4;
  s.data_plane.read_requests = 5;
  s.data_plane.put_requests = 6;
  s.data_plane.put_failures = 1;
  s.data_plane.bytes_in = 123456;
  s.data_plane.bytes_out = 654321;
  base::LatencyHistogram fetch, read, put;
  fetch.Record(absl::Microseconds(30));
  fetch.Record(absl::Milliseconds(3));
  put.Record(absl::Seconds(20));
  s.data_plane.fetch_latency = fetch.Snapshot();
  s.data_plane.read_latency = read.Snapshot();
  s.data_plane.put_latency = put.Snapshot();

  // What store/rpc's RpcMetrics reports after the calls below (methods sorted by name):
  //   strata.v1.Store/Match    OK 1 ms, NOT_FOUND 2 ms
  //   strata.v1.Admin/Tiers    OK 200 us
  //   odd"service\/M<newline>ethod  OK 1 us   (escaping)
  auto method = [](std::string name, std::initializer_list<std::pair<int, absl::Duration>> calls) {
    core::RpcMethodStats m{.method = std::move(name)};
    base::LatencyHistogram latency;
    for (const auto& [code, took] : calls) {
      ++m.calls_by_code[code];
      latency.Record(took);
    }
    m.latency = latency.Snapshot();
    return m;
  };
  s.rpc.methods.push_back(method("odd\"service\\/M\nethod", {{0, absl::Microseconds(1)}}));
  s.rpc.methods.push_back(method("strata.v1.Admin/Tiers", {{0, absl::Microseconds(200)}}));
  s.rpc.methods.push_back(
      method("strata.v1.Store/Match", {{0, absl::Milliseconds(1)}, {5, absl::Milliseconds(2)}}));
  s.cluster = ClusterSnapshot{.registered = true,
                              .serving = 3,
                              .joining = 1,
                              .draining = 0,
                              .hot_blobs = 5,
                              .hot_pushed_blobs = 9,
                              .hot_bytes = 4096,
                              .hot_failures = 1,
                              .text_repairs = 2,
                              .text_repaired_segments = 11,
                              .text_repair_puts = 13,
                              .text_repair_failures = 0};
  return s;
}

}  // namespace strata::store::http::testing
