#include "strata/store/http/metrics_format.h"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <utility>

#include "strata/base/status_code_name.h"

namespace strata::store::http {
namespace {

// Phase names in NodeTiers::lookups order (report::LookupPhaseIndex).

using Label = std::pair<std::string_view, std::string_view>;

// Writes families: `# HELP` and `# TYPE` go out with a family's first sample, so a family
// without samples leaves no trace (Prometheus parsers accept either; empty ones only add
// noise).
class Writer {
 public:
  void Family(std::string_view name, std::string_view type, std::string_view help) {
    name_ = name;
    type_ = type;
    help_ = help;
    header_written_ = false;
  }

  void Sample(std::string_view suffix, std::initializer_list<Label> labels, double value) {
    SampleWith(suffix, labels, {}, FormatValue(value));
  }
  void Sample(std::string_view suffix, std::initializer_list<Label> labels, uint64_t value) {
    SampleWith(suffix, labels, {}, std::to_string(value));
  }
  void Sample(std::initializer_list<Label> labels, uint64_t value) { Sample("", labels, value); }
  void Sample(std::initializer_list<Label> labels, double value) { Sample("", labels, value); }

  // The family's histogram series for one label set (cumulative buckets).
  void Histogram(std::initializer_list<Label> labels, const base::HistogramSnapshot& h) {
    uint64_t cumulative = 0;
    for (size_t i = 0; i < h.counts.size(); ++i) {
      cumulative += h.counts[i];
      const std::string le =
          i < h.upper_bounds_seconds.size() ? FormatValue(h.upper_bounds_seconds[i]) : "+Inf";
      SampleWith("_bucket", labels, Label{"le", le}, std::to_string(cumulative));
    }
    SampleWith("_sum", labels, {}, FormatValue(h.sum_seconds));
    SampleWith("_count", labels, {}, std::to_string(cumulative));
  }

  std::string Take() { return std::move(out_); }

 private:
  void SampleWith(std::string_view suffix, std::initializer_list<Label> labels, Label extra,
                  const std::string& value) {
    if (!header_written_) {
      out_.append("# HELP ").append(name_).append(" ").append(EscapeHelp(help_)).append("\n");
      out_.append("# TYPE ").append(name_).append(" ").append(type_).append("\n");
      header_written_ = true;
    }
    out_.append(name_).append(suffix);
    if (labels.size() > 0 || !extra.first.empty()) {
      out_.push_back('{');
      bool first = true;
      auto add = [&](const Label& label) {
        if (!first) out_.push_back(',');
        first = false;
        out_.append(label.first).append("=\"").append(EscapeLabelValue(label.second)).append("\"");
      };
      for (const Label& label : labels) add(label);
      if (!extra.first.empty()) add(extra);
      out_.push_back('}');
    }
    out_.append(" ").append(value).append("\n");
  }

  std::string out_;
  std::string_view name_, type_, help_;
  bool header_written_ = false;
};

// The stats of `tier`; zeros when the node has no such tier (the samples are written anyway).
report::TierStats StatsOf(const report::NodeTiers& t, report::Tier tier) {
  const report::TierStats* stats = t.Find(tier);
  return stats != nullptr ? *stats : report::TierStats{.tier = tier};
}

// The counts of the p-th counted phase; zeros when the node reported none.
report::LookupCounts CountsOf(const report::NodeTiers& t, size_t p) {
  const report::LookupCounts* counts = t.LookupsFor(report::kCountedPhases[p]);
  return counts != nullptr ? *counts : report::LookupCounts{.phase = report::kCountedPhases[p]};
}

void WriteTiers(const report::NodeTiers& t, Writer& w) {
  const report::TierStats dram = StatsOf(t, report::Tier::kDram);
  const report::TierStats ssd = StatsOf(t, report::Tier::kSsd);
  const uint64_t text_free =
      t.text.capacity_bytes > t.text.used_bytes ? t.text.capacity_bytes - t.text.used_bytes : 0;
  w.Family("strata_tier_capacity_bytes", "gauge",
           "Bytes the tier can hold (text: the token budget; ssd: 0 when the node has no SSD "
           "tier).");
  w.Sample({{"tier", "dram"}}, dram.capacity_bytes);
  w.Sample({{"tier", "ssd"}}, ssd.capacity_bytes);
  w.Sample({{"tier", "text"}}, t.text.capacity_bytes);
  w.Family("strata_tier_used_bytes", "gauge",
           "Bytes in use in the tier (granted extent sizes; text: token bytes plus overhead).");
  w.Sample({{"tier", "dram"}}, dram.used_bytes);
  w.Sample({{"tier", "ssd"}}, ssd.used_bytes);
  w.Sample({{"tier", "text"}}, t.text.used_bytes);
  w.Family("strata_tier_free_bytes", "gauge", "Bytes of the tier not in use.");
  w.Sample({{"tier", "dram"}}, dram.free_bytes());
  w.Sample({{"tier", "ssd"}}, ssd.free_bytes());
  w.Sample({{"tier", "text"}}, text_free);
  w.Family("strata_tier_blobs", "gauge",
           "Blobs whose bytes the tier holds (text: blobs kept as tokens only).");
  w.Sample({{"tier", "dram"}}, dram.blobs);
  w.Sample({{"tier", "ssd"}}, ssd.blobs);
  w.Sample({{"tier", "text"}}, t.text.blobs);
  w.Family("strata_tier_pages", "gauge",
           "Pages of indexed blobs in the tier (a blob in DRAM and on SSD counts in both).");
  w.Sample({{"tier", "dram"}}, dram.pages);
  w.Sample({{"tier", "ssd"}}, ssd.pages);
  w.Sample({{"tier", "text"}}, t.text.pages);

  w.Family("strata_tier_read_hits_total", "counter", "Blob reads served from the tier.");
  w.Sample({{"tier", "dram"}}, dram.hits);
  w.Sample({{"tier", "ssd"}}, ssd.hits);
  w.Family("strata_tier_read_misses_total", "counter",
           "Blob reads the tier could not serve from its own bytes.");
  w.Sample({{"tier", "dram"}}, dram.misses);
  w.Sample({{"tier", "ssd"}}, ssd.misses);
  w.Family("strata_tier_evictions_total", "counter",
           "Blobs whose bytes were dropped from the tier.");
  w.Sample({{"tier", "dram"}}, dram.evictions);
  w.Sample({{"tier", "ssd"}}, ssd.evictions);
  w.Family("strata_tier_demotions_total", "counter", "Blobs moved from the tier to a slower one.");
  w.Sample({{"tier", "dram"}}, dram.demotions);
  w.Sample({{"tier", "ssd"}}, ssd.demotions);
  w.Family("strata_tier_promotions_total", "counter",
           "Blobs copied into the tier from a slower one.");
  w.Sample({{"tier", "dram"}}, dram.promotions);
  w.Sample({{"tier", "ssd"}}, ssd.promotions);

  w.Family("strata_text_drops_total", "counter",
           "Blobs whose KV bytes were dropped, keeping their tokens (TEXT).");
  w.Sample({}, t.text.drops);
  w.Family("strata_text_deletions_total", "counter",
           "TEXT records deleted (under TEXT pressure or on request).");
  w.Sample({}, t.text.deletions);
  w.Family("strata_text_rebuilds_total", "counter",
           "TEXT blobs refilled with their recomputed bytes by a put.");
  w.Sample({}, t.text.rebuilds);
}

void WriteLookups(const report::NodeTiers& t, Writer& w) {
  w.Family("strata_lookups_total", "counter",
           "Match calls by phase (prefill, midfill, decode: as the caller said, else "
           "inferred from the answer).");
  for (size_t p = 0; p < report::kLookupPhases; ++p) {
    w.Sample({{"phase", report::LookupPhaseName(report::kCountedPhases[p])}},
             CountsOf(t, p).lookups);
  }
  w.Family("strata_lookup_queried_pages_total", "counter",
           "Whole pages asked for by Match calls, by phase.");
  for (size_t p = 0; p < report::kLookupPhases; ++p) {
    w.Sample({{"phase", report::LookupPhaseName(report::kCountedPhases[p])}},
             CountsOf(t, p).queried_pages);
  }
  w.Family("strata_lookup_pages_total", "counter",
           "Pages asked for by Match calls, by phase and result: a hit in the fastest tier "
           "holding the page (dram, ssd, text: tokens known, bytes not) or a miss.");
  for (size_t p = 0; p < report::kLookupPhases; ++p) {
    const report::LookupCounts c = CountsOf(t, p);
    w.Sample({{"phase", report::LookupPhaseName(report::kCountedPhases[p])}, {"result", "dram"}},
             c.dram_hit_pages);
    w.Sample({{"phase", report::LookupPhaseName(report::kCountedPhases[p])}, {"result", "ssd"}},
             c.ssd_hit_pages);
    w.Sample({{"phase", report::LookupPhaseName(report::kCountedPhases[p])}, {"result", "text"}},
             c.text_hit_pages);
    w.Sample({{"phase", report::LookupPhaseName(report::kCountedPhases[p])}, {"result", "miss"}},
             c.miss_pages);
  }
}

void WriteNode(const report::NodeTiers& t, Writer& w) {
  w.Family("strata_rebuild_tasks_queued", "gauge", "Rebuild tasks waiting for a worker.");
  w.Sample({}, t.rebuild.queued);
  w.Family("strata_rebuild_tasks_in_flight", "gauge",
           "Rebuild tasks handed to a worker, not yet filled or expired.");
  w.Sample({}, t.rebuild.in_flight);
  w.Family("strata_rebuild_tasks_requested_total", "counter", "Rebuild tasks ever queued.");
  w.Sample({}, t.rebuild.requested);
  w.Family("strata_rebuild_tasks_completed_total", "counter", "Rebuild tasks filled by a put.");
  w.Sample({}, t.rebuild.completed);
  w.Family("strata_rebuild_tasks_expired_total", "counter",
           "Rebuild tasks handed out and not filled in time (queued again).");
  w.Sample({}, t.rebuild.expired);
  w.Family("strata_rebuild_tasks_dropped_total", "counter",
           "Rebuild tasks given up (too many attempts, or their blob went away).");
  w.Sample({}, t.rebuild.dropped);

  w.Family("strata_leases_active", "gauge", "Read leases held now.");
  w.Sample({}, t.engine.leases);
  w.Family("strata_puts_pending", "gauge", "Puts begun and not yet committed or aborted.");
  w.Sample({}, t.engine.pending_puts);
  w.Family("strata_index_blobs", "gauge", "Committed blobs in the index.");
  w.Sample({}, t.engine.blobs);
  w.Family("strata_unlinked_blobs", "gauge",
           "Blobs out of the index whose bytes leases or transfers still hold.");
  w.Sample({}, t.engine.unlinked_blobs);
  w.Family("strata_namespaces", "gauge", "Namespaces (tenant, model, layout) known.");
  w.Sample({}, t.engine.namespaces);
  w.Family("strata_meta_write_errors_total", "counter",
           "Metadata writes that failed: those records are cached but not durable (a restart "
           "does not bring them back).");
  w.Sample({}, t.engine.meta_write_errors);
  w.Family("strata_meta_disk_bytes", "gauge",
           "The metadata store's SST files and write-ahead logs on disk.");
  w.Sample({}, t.meta.disk_bytes);
  w.Family("strata_meta_memory_bytes", "gauge",
           "Memory the metadata store holds outside the tiers: memtables, the index and filter "
           "blocks of open SST files (table_readers), the block cache.");
  w.Sample({{"part", "memtables"}}, t.meta.memtable_bytes);
  w.Sample({{"part", "table_readers"}}, t.meta.table_reader_bytes);
  w.Sample({{"part", "block_cache"}}, t.meta.block_cache_bytes);
  w.Family("strata_node_draining", "gauge", "1 while the node drains (puts refused), else 0.");
  w.Sample({}, uint64_t{t.engine.draining ? 1u : 0u});
}

// Per tenant label (issue 12, item 9): at most kMaxReportedTenants series per family, then
// "(other)".
void WriteTenants(const report::NodeTiers& t, Writer& w) {
  w.Family("strata_tenant_blobs", "gauge", "Committed blobs of a tenant label (Namespace.tenant).");
  for (const report::TenantUsage& u : t.tenants) w.Sample({{"tenant", u.tenant}}, u.blobs);
  w.Family("strata_tenant_bytes", "gauge",
           "Extent bytes a tenant label's committed blobs hold, by tier.");
  for (const report::TenantUsage& u : t.tenants) {
    w.Sample({{"tenant", u.tenant}, {"tier", "dram"}}, u.dram_bytes);
    w.Sample({{"tenant", u.tenant}, {"tier", "ssd"}}, u.ssd_bytes);
  }
  w.Family("strata_tenant_text_blobs", "gauge",
           "A tenant label's blobs in the TEXT state (bytes dropped, tokens kept).");
  for (const report::TenantUsage& u : t.tenants) w.Sample({{"tenant", u.tenant}}, u.text_blobs);
  w.Family("strata_tenant_charged_bytes", "gauge",
           "Extent bytes of all a tenant label's records by tier (pending puts and moves "
           "included): what its quota counts.");
  for (const report::TenantUsage& u : t.tenants) {
    w.Sample({{"tenant", u.tenant}, {"tier", "dram"}}, u.dram_charged_bytes);
    w.Sample({{"tenant", u.tenant}, {"tier", "ssd"}}, u.ssd_charged_bytes);
  }
  w.Family("strata_tenant_quota_bytes", "gauge",
           "A tenant label's byte quota by tier (only labels and tiers with one).");
  for (const report::TenantUsage& u : t.tenants) {
    if (u.dram_quota_bytes > 0)
      w.Sample({{"tenant", u.tenant}, {"tier", "dram"}}, u.dram_quota_bytes);
    if (u.ssd_quota_bytes > 0) w.Sample({{"tenant", u.tenant}, {"tier", "ssd"}}, u.ssd_quota_bytes);
  }
  w.Family("strata_tenant_quota_evictions_total", "counter",
           "Blobs of a tenant label that left a tier to make room under its own quota.");
  for (const report::TenantUsage& u : t.tenants) {
    w.Sample({{"tenant", u.tenant}}, u.quota_evictions);
  }
  w.Family("strata_tenant_quota_refusals_total", "counter",
           "Allocations of a tenant label refused at its quota (RESOURCE_EXHAUSTED).");
  for (const report::TenantUsage& u : t.tenants) w.Sample({{"tenant", u.tenant}}, u.quota_refusals);
}

void WriteMrc(const report::NodeTiers& t, Writer& w) {
  w.Family("strata_mrc_expected_hit_ratio", "gauge",
           "Live miss-ratio curve: expected cumulative page hit ratio through the tier at its "
           "current capacity.");
  for (const auto& c : t.curves)
    w.Sample({{"tier", report::TierName(c.tier)}}, c.expected_hit_ratio);
  w.Family("strata_mrc_capacity_bytes", "gauge",
           "The tier's capacity as the miss-ratio curve counts it (text: KV-byte "
           "equivalent of the token budget).");
  for (const auto& c : t.curves) w.Sample({{"tier", report::TierName(c.tier)}}, c.capacity_bytes);
  w.Family("strata_mrc_recommended_capacity_bytes", "gauge",
           "Smallest capacity of the tier within 1 percentage point of its best hit ratio.");
  for (const auto& c : t.curves)
    w.Sample({{"tier", report::TierName(c.tier)}},
             c.recommended.value_or(report::CurvePoint{}).capacity_bytes);
  w.Family("strata_mrc_recommended_hit_ratio", "gauge",
           "Expected cumulative hit ratio at the recommended capacity.");
  for (const auto& c : t.curves)
    w.Sample({{"tier", report::TierName(c.tier)}},
             c.recommended.value_or(report::CurvePoint{}).hit_ratio);
  w.Family("strata_mrc_accesses_total", "counter",
           "Page accesses fed to the miss-ratio-curve estimator.");
  w.Sample({}, t.mrc.accesses);
  w.Family("strata_mrc_sampled_accesses_total", "counter",
           "Of those, accesses the SHARDS sample kept.");
  w.Sample({}, t.mrc.sampled_accesses);
  w.Family("strata_mrc_sample_rate", "gauge", "SHARDS sampling rate in effect.");
  w.Sample({}, t.mrc.sample_rate);
  w.Family("strata_mrc_working_set_bytes", "gauge",
           "Estimated KV bytes of the distinct pages looked up.");
  w.Sample({}, t.mrc.working_set_bytes);
}

void WriteDataPlane(const core::DataPlaneStats& d, Writer& w) {
  w.Family("strata_dataplane_requests_total", "counter",
           "Data-plane requests received, by operation (fetch, read, put).");
  w.Sample({{"op", "fetch"}}, d.fetch_requests);
  w.Sample({{"op", "read"}}, d.read_requests);
  w.Sample({{"op", "put"}}, d.put_requests);
  w.Family("strata_dataplane_request_failures_total", "counter",
           "Data-plane requests that ended with an error, by operation.");
  w.Sample({{"op", "fetch"}}, d.fetch_failures);
  w.Sample({{"op", "read"}}, d.read_failures);
  w.Sample({{"op", "put"}}, d.put_failures);
  w.Family("strata_dataplane_received_bytes_total", "counter",
           "Put bytes received over the data plane (bytes in).");
  w.Sample({}, d.bytes_in);
  w.Family("strata_dataplane_sent_bytes_total", "counter",
           "Blob bytes sent over the data plane (bytes out).");
  w.Sample({}, d.bytes_out);
  w.Family("strata_dataplane_malformed_requests_total", "counter",
           "Data-plane headers or range lists that did not decode.");
  w.Sample({}, d.malformed);
  w.Family("strata_dataplane_connections_refused_total", "counter",
           "Data-plane connections refused because their credential was missing, forged or "
           "expired.");
  w.Sample({}, d.peers_refused);
  w.Family("strata_dataplane_requests_in_flight", "gauge",
           "Data-plane requests received whose reply has not been sent.");
  w.Sample({}, d.requests_in_flight);
  w.Family("strata_dataplane_transfer_duration_seconds", "histogram",
           "Data-plane request latency, from arrival to its FETCH_DONE / PUT_DONE sent.");
  w.Histogram({{"op", "fetch"}}, d.fetch_latency);
  w.Histogram({{"op", "read"}}, d.read_latency);
  w.Histogram({{"op", "put"}}, d.put_latency);
}

void WriteSameHost(const core::SameHostStats& s, Writer& w) {
  w.Family("strata_same_host_clients", "gauge", "Same-host channel connections open.");
  w.Sample({}, s.clients);
  w.Family("strata_same_host_requests_total", "counter",
           "Same-host channel requests answered, by operation (read, put) and outcome.");
  w.Sample({{"op", "read"}, {"outcome", "ok"}}, s.reads);
  w.Sample({{"op", "read"}, {"outcome", "error"}}, s.read_failures);
  w.Sample({{"op", "put"}, {"outcome", "ok"}}, s.puts);
  w.Sample({{"op", "put"}, {"outcome", "error"}}, s.put_failures);
  w.Family("strata_same_host_bytes_total", "counter",
           "Bytes leased to same-host readers (read) and copied from staging files (put).");
  w.Sample({{"op", "read"}}, s.bytes_granted);
  w.Sample({{"op", "put"}}, s.bytes_put);
  w.Family("strata_same_host_hbm_bytes_total", "counter",
           "Bytes leased to same-host GPU readers that had an HBM copy to copy device to "
           "device (the node shares its HBM tier: same_host_share_hbm).");
  w.Sample({}, s.bytes_granted_hbm);
  w.Family("strata_same_host_leases_expired_in_copy_total", "counter",
           "Same-host leases found expired when a client checked them after its copies (those "
           "copies were discarded and read again).");
  w.Sample({}, s.leases_expired_in_copy);
  w.Family("strata_same_host_refused_total", "counter",
           "Same-host connections refused (credential, client limit) or never greeted.");
  w.Sample({}, s.refused);
  w.Family("strata_same_host_malformed_total", "counter",
           "Same-host messages that did not decode, and releases of leases not the client's.");
  w.Sample({}, s.malformed);
}

void WriteRpc(const core::RpcMetricsSnapshot& r, Writer& w) {
  // "strata.v1.Store/Match" -> service "strata.v1.Store", method "Match".
  auto split = [](const std::string& full) {
    const size_t slash = full.rfind('/');
    const std::string_view name(full);
    if (slash == std::string::npos) return std::pair<std::string_view, std::string_view>("", name);
    return std::pair(name.substr(0, slash), name.substr(slash + 1));
  };
  w.Family("strata_rpc_calls_total", "counter",
           "Finished gRPC calls by service, method and status code.");
  for (const core::RpcMethodStats& m : r.methods) {
    const auto [service, method] = split(m.method);
    for (int code = 0; code < core::kGrpcStatusCodes; ++code) {
      const uint64_t n = m.calls_by_code[static_cast<size_t>(code)];
      if (n == 0) continue;
      w.Sample({{"service", service}, {"method", method}, {"code", GrpcCodeName(code)}}, n);
    }
  }
  w.Family("strata_rpc_duration_seconds", "histogram",
           "gRPC call latency on the node, from the call's start to its status, by method.");
  for (const core::RpcMethodStats& m : r.methods) {
    const auto [service, method] = split(m.method);
    w.Histogram({{"service", service}, {"method", method}}, m.latency);
  }
}

}  // namespace

void WriteCluster(const ClusterSnapshot& c, Writer& w) {
  w.Family("strata_cluster_registered", "gauge",
           "1 while the node's registration holds a lease in its cluster's etcd, else 0.");
  w.Sample({}, uint64_t{c.registered ? 1u : 0u});
  w.Family("strata_cluster_members", "gauge",
           "Members in the node's own view of its cluster, by state (kept when it replicates "
           "hot blobs or repairs token text).");
  w.Sample({{"state", "serving"}}, c.serving);
  w.Sample({{"state", "joining"}}, c.joining);
  w.Sample({{"state", "draining"}}, c.draining);
  w.Family("strata_cluster_hot_replicated_blobs_total", "counter",
           "Hot blobs this node pushed to the next nodes of their segment's ranking.");
  w.Sample({}, c.hot_blobs);
  w.Family("strata_cluster_hot_pushed_blobs_total", "counter",
           "Blobs written to other nodes for hot replicas (a segment's earlier blobs included).");
  w.Sample({}, c.hot_pushed_blobs);
  w.Family("strata_cluster_hot_pushed_bytes_total", "counter",
           "KV bytes sent to other nodes for hot replicas.");
  w.Sample({}, c.hot_bytes);
  w.Family("strata_cluster_hot_push_failures_total", "counter",
           "Hot-replica pushes that failed (a target away or full, the blob gone).");
  w.Sample({}, c.hot_failures);
  w.Family("strata_cluster_text_repairs_total", "counter",
           "Membership changes on which the node re-copied segments' token text.");
  w.Sample({}, c.text_repairs);
  w.Family("strata_cluster_text_repaired_segments_total", "counter",
           "Segments whose token text this node copied to a node new in their top R.");
  w.Sample({}, c.text_repaired_segments);
  w.Family("strata_cluster_text_repair_puts_total", "counter",
           "TEXT puts sent by the token-text repair.");
  w.Sample({}, c.text_repair_puts);
  w.Family("strata_cluster_text_repair_failures_total", "counter",
           "Token-text segment copies that failed part-way.");
  w.Sample({}, c.text_repair_failures);
}

std::string EscapeLabelValue(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string EscapeHelp(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string FormatValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  std::array<char, 32> buffer;
  const auto result = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value);
  return std::string(buffer.data(), result.ptr);
}

std::string_view GrpcCodeName(int code) {
  const std::string_view name = base::StatusCodeName(code);
  return name.empty() ? "UNKNOWN" : name;
}

std::string FormatMetrics(const NodeSnapshot& snapshot) {
  Writer w;
  WriteTiers(snapshot.tiers, w);
  WriteLookups(snapshot.tiers, w);
  WriteNode(snapshot.tiers, w);
  WriteTenants(snapshot.tiers, w);
  WriteMrc(snapshot.tiers, w);
  WriteDataPlane(snapshot.data_plane, w);
  WriteSameHost(snapshot.same_host, w);
  WriteRpc(snapshot.rpc, w);
  WriteCluster(snapshot.cluster, w);
  return w.Take();
}

}  // namespace strata::store::http
