// Restart time-to-ready: how long a node takes to rebuild its index from its metadata
// store, next to the floor of just reading and decoding that store.
//
// The program writes N blob records into a fresh RocksMetaStore (sessions of chained
// blobs, a share of them with SSD extents), closes it, then measures, each from a freshly
// opened store:
//   scan   RocksMetaStore::Open + LoadAll decoding every record (the floor)
//   ready  RocksMetaStore::Open + SsdTier::Open + NodeEngine::Create (LoadAll, checks,
//          radix inserts, SSD extents reserved, TEXT accounting): time-to-ready
// and prints one table with the ratio ready / scan.
//
//   restart_bench [--records=1000000] [--dir=PATH] [--session_blobs=4] [--page_tokens=16]
//                 [--ssd_share=0.25]
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "glog/logging.h"

#include "bench_support.h"
#include "strata/radix/namespace.h"
#include "strata/radix/prefix_hash.h"
#include "strata/store/core/node_engine.h"
#include "strata/store/meta/meta_batch.h"
#include "strata/store/meta/rocks_meta_store.h"
#include "strata/tiering/io/ssd_tier.h"

namespace strata::store::core {
namespace {

using bench::Mix;

struct Flags {
  uint64_t records = 1'000'000;
  std::string dir;
  uint32_t session_blobs = 4;
  uint32_t page_tokens = 16;
  double ssd_share = 0.25;
};

radix::KvLayout Layout(uint32_t page_tokens) { return bench::Fp16Layout(4, 1, 64, page_tokens); }

constexpr uint64_t kGranule = uint64_t{64} << 10;

// Writes the records; returns the SSD capacity their extents need.
uint64_t Populate(const Flags& flags, const radix::Namespace& ns, const std::string& path) {
  meta::RocksMetaStoreOptions options;
  options.path = path;
  auto store = meta::RocksMetaStore::Open(options);
  BENCH_CHECK_OK(store.status());
  const radix::PrefixHash h0 = radix::NamespaceHash(ns);
  const radix::KvLayout& layout = ns.layout();
  meta::MetaBatch batch;
  batch.PutNamespace(ns);
  uint64_t ssd_extents = 0;
  uint64_t counter = 0;
  for (uint64_t i = 0; i < flags.records;) {
    std::optional<meta::BlobMetaParent> parent;
    radix::PrefixHash start = h0;
    for (uint32_t b = 0; b < flags.session_blobs && i < flags.records; ++b, ++i) {
      meta::BlobMeta m;
      m.namespace_hash = h0;
      m.parent = parent;
      m.start_hash = start;
      m.first_page = b;
      m.pages = 1;
      m.bytes = layout.BytesPerPage();
      for (uint32_t t = 0; t < flags.page_tokens; ++t) {
        m.tokens.push_back(static_cast<radix::TokenId>(Mix(++counter) % 152064));
      }
      for (uint32_t l = 0; l < layout.num_layers; ++l) m.checksums.push_back(Mix(++counter));
      m.key = radix::BlobKey{radix::PrefixHashAt(start, m.tokens, flags.page_tokens)};
      m.in_dram = true;
      if (static_cast<double>(Mix(i) % 1000) < flags.ssd_share * 1000) {
        m.ssd = meta::SsdLocation{ssd_extents * kGranule, kGranule};
        ++ssd_extents;
      }
      m.created = absl::Now();
      m.last_access = m.created;
      batch.PutBlob(m);
      parent = meta::BlobMetaParent{m.key, b + 1};
      start = m.key.hash;
      if (batch.size() >= 1000) {
        BENCH_CHECK_OK((*store)->Apply(batch));
        batch.Clear();
      }
    }
  }
  BENCH_CHECK_OK((*store)->Apply(batch));
  return std::max<uint64_t>(1, ssd_extents) * kGranule;
}

int Main(int argc, char** argv) {
  Flags flags;
  std::string command;
  for (int i = 0; i < argc; ++i) absl::StrAppend(&command, i == 0 ? "" : " ", argv[i]);
  for (int i = 1; i < argc; ++i) {
    const absl::string_view arg = argv[i];
    const auto value = [&](absl::string_view name) { return bench::FlagValue(arg, name); };
    if (!value("records").empty()) {
      CHECK(absl::SimpleAtoi(value("records"), &flags.records));
    } else if (!value("dir").empty()) {
      flags.dir = std::string(value("dir"));
    } else if (!value("session_blobs").empty()) {
      CHECK(absl::SimpleAtoi(value("session_blobs"), &flags.session_blobs));
    } else if (!value("page_tokens").empty()) {
      CHECK(absl::SimpleAtoi(value("page_tokens"), &flags.page_tokens));
    } else if (!value("ssd_share").empty()) {
      CHECK(absl::SimpleAtod(value("ssd_share"), &flags.ssd_share));
    } else {
      std::fprintf(stderr, "unknown argument %s\n", argv[i]);
      return 2;
    }
  }
  if (flags.dir.empty()) {
    flags.dir = (std::filesystem::temp_directory_path() / "strata-restart-bench").string();
  }
  std::printf("command: %s\ndate: %s\n", command.c_str(),
              absl::FormatTime("%Y-%m-%d %H:%M:%S UTC", absl::Now(), absl::UTCTimeZone()).c_str());
  std::filesystem::remove_all(flags.dir);
  std::filesystem::create_directories(flags.dir);
  const std::string meta_path = flags.dir + "/meta";
  auto ns = radix::Namespace::Create("bench", "restart", Layout(flags.page_tokens));
  BENCH_CHECK_OK(ns.status());

  absl::Time t0 = absl::Now();
  const uint64_t ssd_bytes = Populate(flags, *ns, meta_path);
  const absl::Duration populate = absl::Now() - t0;

  // The floor: open and decode everything.
  t0 = absl::Now();
  uint64_t scanned = 0;
  {
    meta::RocksMetaStoreOptions options;
    options.path = meta_path;
    auto store = meta::RocksMetaStore::Open(options);
    BENCH_CHECK_OK(store.status());
    meta::MetaLoadCallbacks callbacks;
    callbacks.on_namespace = [](const radix::PrefixHash&, radix::Namespace) {
      return absl::OkStatus();
    };
    callbacks.on_blob = [&](meta::BlobMeta) {
      ++scanned;
      return absl::OkStatus();
    };
    BENCH_CHECK_OK((*store)->LoadAll(callbacks).status());
  }
  const absl::Duration scan = absl::Now() - t0;

  // Time-to-ready of a node.
  t0 = absl::Now();
  RestoreReport report;
  {
    meta::RocksMetaStoreOptions meta_options;
    meta_options.path = meta_path;
    auto store = meta::RocksMetaStore::Open(meta_options);
    BENCH_CHECK_OK(store.status());
    tiering::io::SsdTierOptions ssd_options;
    ssd_options.path = flags.dir + "/ssd.tier";
    ssd_options.capacity_bytes = ssd_bytes;
    ssd_options.preallocate = false;
    auto ssd = tiering::io::SsdTier::Open(ssd_options);
    BENCH_CHECK_OK(ssd.status());
    NodeEngineOptions options;
    options.dram_bytes = uint64_t{256} << 20;
    options.dram_try_hugetlb = false;
    options.reap_interval = absl::ZeroDuration();
    options.background_demotion = false;
    options.text_bytes = uint64_t{4} << 30;
    options.meta = std::move(*store);
    options.ssd = std::move(*ssd);
    auto engine = NodeEngine::Create(options);
    BENCH_CHECK_OK(engine.status());
    report = (*engine)->restored();
    const absl::Duration ready = absl::Now() - t0;
    std::printf("\n%-28s %12s %14s %10s\n", "phase", "seconds", "records/s", "vs scan");
    const auto row = [&](const char* name, absl::Duration d, uint64_t n) {
      const double s = absl::ToDoubleSeconds(d);
      std::printf("%-28s %12.3f %14.0f %9.2fx\n", name, s, n / s, s / absl::ToDoubleSeconds(scan));
    };
    row("populate (batches of 1000)", populate, flags.records);
    row("scan: open + LoadAll", scan, scanned);
    row("ready: node Create", ready, report.restored);
    std::printf(
        "\nrestored %llu blobs (%llu on SSD, %llu TEXT), dropped %llu, corrupt %llu; "
        "engine's own read %.3f s, index rebuilt at %.3f s\n",
        static_cast<unsigned long long>(report.restored),
        static_cast<unsigned long long>(report.on_ssd),
        static_cast<unsigned long long>(report.text),
        static_cast<unsigned long long>(report.dropped),
        static_cast<unsigned long long>(report.corrupt), absl::ToDoubleSeconds(report.load_time),
        absl::ToDoubleSeconds(report.ready_time));
  }
  std::filesystem::remove_all(flags.dir);
  return report.restored == flags.records ? 0 : 1;
}

}  // namespace
}  // namespace strata::store::core

int main(int argc, char** argv) { return strata::store::core::Main(argc, argv); }
