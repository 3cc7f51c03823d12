#include "strata/store/http/tiers_json.h"

#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <optional>

#include "strata/store/http/metrics_format.h"

namespace strata::store::http {
namespace {

constexpr std::array<std::string_view, 3> kPhases = {"prefill", "midfill", "decode"};

// A minimal JSON writer: objects and arrays with commas placed for the caller.
class Json {
 public:
  void BeginObject() { Open('{'); }
  void EndObject() { Close('}'); }
  void BeginArray() { Open('['); }
  void EndArray() { Close(']'); }
  void Key(std::string_view key) {
    Separate();
    out_ += JsonEscape(key);
    out_ += ':';
    after_key_ = true;
  }
  void Value(uint64_t v) { Raw(std::to_string(v)); }
  void Value(double v) { Raw(std::isfinite(v) ? FormatValue(v) : "null"); }
  void Value(bool v) { Raw(v ? "true" : "false"); }
  void Value(std::string_view v) { Raw(JsonEscape(v)); }
  void Null() { Raw("null"); }

  template <typename T>
  void Field(std::string_view key, T value) {
    Key(key);
    Value(value);
  }

  std::string Take() { return std::move(out_); }

 private:
  void Separate() {
    if (after_key_) {
      after_key_ = false;
      return;
    }
    if (!first_) out_ += ',';
    first_ = false;
  }
  void Open(char c) {
    Separate();
    out_ += c;
    first_ = true;
  }
  void Close(char c) {
    out_ += c;
    first_ = false;
  }
  void Raw(const std::string& text) {
    Separate();
    out_ += text;
  }

  std::string out_;
  bool first_ = true;
  bool after_key_ = false;
};

void WritePoints(const std::vector<tiering::mrc::CurvePoint>& points, Json& j) {
  j.BeginArray();
  for (const tiering::mrc::CurvePoint& p : points) {
    j.BeginObject();
    j.Field("capacity_bytes", p.capacity_bytes);
    j.Field("hit_ratio", p.hit_ratio);
    j.EndObject();
  }
  j.EndArray();
}

const tiering::mrc::TierCurve* CurveOf(const core::NodeTiers& t, std::string_view tier) {
  for (const tiering::mrc::TierCurve& c : t.curves) {
    if (c.tier == tier) return &c;
  }
  return nullptr;
}

// The capacity-planning part of a tier: its curve view, or nulls when it has none.
void WritePlan(const core::NodeTiers& t, std::string_view tier, Json& j) {
  const tiering::mrc::TierCurve* c = CurveOf(t, tier);
  j.Key("plan");
  if (c == nullptr) {
    j.Null();
    return;
  }
  j.BeginObject();
  j.Field("capacity_bytes", c->capacity_bytes);
  j.Field("expected_hit_ratio", c->expected_hit_ratio);
  j.Key("points");
  WritePoints(c->points, j);
  j.Key("recommended");
  j.BeginObject();
  j.Field("capacity_bytes", c->recommended.capacity_bytes);
  j.Field("hit_ratio", c->recommended.hit_ratio);
  j.EndObject();
  j.Field("advice", std::string_view(c->advice));
  j.EndObject();
}

void WriteByteTier(const core::NodeTiers& t, std::string_view name,
                   const std::optional<tiering::TierStats>& stats, uint64_t pages, Json& j) {
  const tiering::TierStats s = stats.value_or(tiering::TierStats{});
  j.BeginObject();
  j.Field("tier", name);
  j.Field("present", stats.has_value());
  j.Field("capacity_bytes", s.capacity_bytes);
  j.Field("used_bytes", s.used_bytes);
  j.Field("free_bytes", s.free_bytes());
  j.Field("blobs", s.blobs);
  j.Field("pages", pages);
  j.Field("read_hits", s.hits);
  j.Field("read_misses", s.misses);
  j.Field("evictions", s.evictions);
  j.Field("promotions", s.promotions);
  j.Field("demotions", s.demotions);
  WritePlan(t, name, j);
  j.EndObject();
}

void WriteTextTier(const core::NodeTiers& t, Json& j) {
  const core::TextTierStats& s = t.text;
  j.BeginObject();
  j.Field("tier", std::string_view("text"));
  j.Field("present", s.capacity_bytes > 0);
  j.Field("capacity_bytes", s.capacity_bytes);
  j.Field("used_bytes", s.used_bytes);
  j.Field("free_bytes", s.capacity_bytes > s.used_bytes ? s.capacity_bytes - s.used_bytes : 0);
  j.Field("blobs", s.blobs);
  j.Field("pages", t.text_pages);
  j.Field("drops", s.drops);
  j.Field("deletions", s.deletions);
  j.Field("rebuilds", s.rebuilds);
  WritePlan(t, "text", j);
  j.EndObject();
}

}  // namespace

std::string JsonEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 2);
  out += '"';
  for (char ch : text) {
    const unsigned char c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      default:
        if (c < 0x20) {
          char buffer[8];
          std::snprintf(buffer, sizeof(buffer), "\\u%04x", c);
          out += buffer;
        } else {
          out += ch;
        }
    }
  }
  out += '"';
  return out;
}

std::string FormatTiersJson(const NodeSnapshot& snapshot) {
  const core::NodeTiers& t = snapshot.tiers;
  Json j;
  j.BeginObject();
  j.Key("tiers");
  j.BeginArray();
  WriteByteTier(t, "dram", t.dram, t.dram_pages, j);
  WriteByteTier(t, "ssd", t.ssd, t.ssd_pages, j);
  WriteTextTier(t, j);
  j.EndArray();

  j.Key("lookups");
  j.BeginObject();
  for (size_t p = 0; p < kPhases.size(); ++p) {
    const core::LookupCounts& c = t.lookups[p];
    j.Key(kPhases[p]);
    j.BeginObject();
    j.Field("lookups", c.lookups);
    j.Field("queried_pages", c.queried_pages);
    j.Field("dram_hit_pages", c.dram_hit_pages);
    j.Field("ssd_hit_pages", c.ssd_hit_pages);
    j.Field("text_hit_pages", c.text_hit_pages);
    j.Field("miss_pages", c.miss_pages);
    j.EndObject();
  }
  j.EndObject();

  j.Key("mrc");
  j.BeginObject();
  j.Field("accesses", t.mrc.accesses);
  j.Field("sampled_accesses", t.mrc.sampled_accesses);
  j.Field("sample_rate", t.mrc.sample_rate);
  j.Field("working_set_bytes", t.mrc.working_set_bytes);
  j.Field("token_bytes_per_kv_byte", t.token_bytes_per_kv_byte);
  j.Key("points");
  WritePoints(t.mrc.points, j);
  j.EndObject();

  j.Key("rebuild");
  j.BeginObject();
  j.Field("queued", t.rebuild.queued);
  j.Field("in_flight", t.rebuild.in_flight);
  j.Field("requested", t.rebuild.requested);
  j.Field("completed", t.rebuild.completed);
  j.Field("expired", t.rebuild.expired);
  j.Field("dropped", t.rebuild.dropped);
  j.EndObject();

  j.Key("node");
  j.BeginObject();
  j.Field("blobs", t.blobs);
  j.Field("unlinked_blobs", t.unlinked_blobs);
  j.Field("namespaces", t.namespaces);
  j.Field("leases", t.leases);
  j.Field("pending_puts", t.pending_puts);
  j.Field("draining", t.draining);
  j.EndObject();
  j.EndObject();
  std::string out = j.Take();
  out += '\n';
  return out;
}

}  // namespace strata::store::http
