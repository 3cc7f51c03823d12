// Demotion and promotion through the node engine, next to the SSD tier's own batch I/O on
// the same file in the same run (tiering/io's ssd_bench puts that tier next to fio).
//
//   demote  Evict(DRAM): victims picked by the policy, one WriteBatch + Flush + one synced
//           metadata batch per round, DRAM extents freed
//   promote Read of SSD-only blobs: DRAM allocated, ReadBatch, every chunk checksum verified
//           ("one per read": a Read per blob; "batched": one Read naming every blob)
//   tier    SsdTier WriteBatch + Flush / ReadBatch of the same sizes straight from / into
//           the arena (the floor the engine adds its work to)
//
//   tier_bench [--dir=PATH] [--blob_mib=4] [--blobs=128] [--meta=true]
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "glog/logging.h"

#include "bench_support.h"
#include "strata/radix/namespace.h"
#include "strata/store/core/chunk_checksum.h"
#include "strata/store/core/node_engine.h"
#include "strata/store/meta/rocks_meta_store.h"
#include "strata/tiering/dram_arena.h"
#include "strata/tiering/io/ssd_tier.h"

namespace strata::store::core {
namespace {

using bench::Mix;

struct Flags {
  std::string dir;
  uint64_t blob_mib = 4;
  uint64_t blobs = 128;
  bool meta = true;
};

// 64 KiB per page: 8 layers x 2 (K, V) x 8 heads x 128 dims x 2 bytes / 16 tokens.
radix::KvLayout Layout() { return bench::Fp16Layout(8, 2, 128, 16); }

double GBps(uint64_t bytes, absl::Duration d) {
  return static_cast<double>(bytes) / absl::ToDoubleSeconds(d) / 1e9;
}

int Main(int argc, char** argv) {
  Flags flags;
  std::string command;
  for (int i = 0; i < argc; ++i) absl::StrAppend(&command, i == 0 ? "" : " ", argv[i]);
  for (int i = 1; i < argc; ++i) {
    const absl::string_view arg = argv[i];
    const auto value = [&](absl::string_view name) -> std::optional<absl::string_view> {
      const std::string prefix = absl::StrCat("--", name, "=");
      if (!absl::StartsWith(arg, prefix)) return std::nullopt;
      return arg.substr(prefix.size());
    };
    if (auto v = value("dir")) {
      flags.dir = std::string(*v);
    } else if (auto v = value("blob_mib")) {
      CHECK(absl::SimpleAtoi(*v, &flags.blob_mib));
    } else if (auto v = value("blobs")) {
      CHECK(absl::SimpleAtoi(*v, &flags.blobs));
    } else if (auto v = value("meta")) {
      flags.meta = *v == "true" || *v == "1";
    } else {
      std::fprintf(stderr, "unknown argument %s\n", argv[i]);
      return 2;
    }
  }
  if (flags.dir.empty()) flags.dir = "strata-tier-bench";
  std::printf("command: %s\ndate: %s\n", command.c_str(),
              absl::FormatTime("%Y-%m-%d %H:%M:%S UTC", absl::Now(), absl::UTCTimeZone()).c_str());
  std::filesystem::remove_all(flags.dir);
  std::filesystem::create_directories(flags.dir);

  const radix::KvLayout layout = Layout();
  auto ns = radix::Namespace::Create("bench", "tiers", layout);
  BENCH_CHECK_OK(ns.status());
  const uint64_t pages = (flags.blob_mib << 20) / layout.BytesPerPage();
  const uint64_t blob_bytes = pages * layout.BytesPerPage();
  const uint64_t total = blob_bytes * flags.blobs;

  tiering::io::SsdTierOptions ssd_options;
  ssd_options.path = flags.dir + "/ssd.tier";
  ssd_options.capacity_bytes = total * 2 + (uint64_t{64} << 20);
  auto ssd_tier = tiering::io::SsdTier::Open(ssd_options);
  BENCH_CHECK_OK(ssd_tier.status());
  std::shared_ptr<tiering::io::SsdTier> ssd = std::move(*ssd_tier);

  NodeEngineOptions options;
  options.dram_bytes = total + (uint64_t{64} << 20);
  options.dram_try_hugetlb = false;
  options.dram_populate = true;
  options.reap_interval = absl::ZeroDuration();
  options.background_demotion = false;
  options.ssd = ssd;
  if (flags.meta) {
    meta::RocksMetaStoreOptions meta_options;
    meta_options.path = flags.dir + "/meta";
    auto store = meta::RocksMetaStore::Open(meta_options);
    BENCH_CHECK_OK(store.status());
    options.meta = std::move(*store);
  }
  auto created = NodeEngine::Create(options);
  BENCH_CHECK_OK(created.status());
  NodeEngine& engine = **created;

  // Fill DRAM with `blobs` blobs of distinct content.
  std::vector<radix::BlobKey> keys;
  std::vector<uint64_t> checksums;
  std::vector<radix::TokenId> tokens(pages * layout.page_tokens);
  for (uint64_t b = 0; b < flags.blobs; ++b) {
    for (size_t t = 0; t < tokens.size(); ++t) {
      tokens[t] = static_cast<radix::TokenId>(Mix(b * tokens.size() + t) % 152064);
    }
    std::vector<std::byte> bytes(blob_bytes);
    for (uint64_t i = 0; i < blob_bytes / 8; ++i) {
      const uint64_t v = Mix(b << 32 | i);
      std::memcpy(bytes.data() + i * 8, &v, 8);
    }
    auto blob_layout = radix::BlobLayout::Create(layout, pages);
    BENCH_CHECK_OK(blob_layout.status());
    auto sums = ComputeChunkChecksums(*blob_layout, bytes);
    BENCH_CHECK_OK(sums.status());
    PutRequest request;
    request.tokens = tokens;
    request.bytes = blob_bytes;
    request.checksums = *sums;
    auto begun = engine.BeginPut(*ns, request);
    BENCH_CHECK_OK(begun.status());
    {
      auto target = engine.PutTarget(begun->put_id);
      BENCH_CHECK_OK(target.status());
      std::memcpy(target->span().data(), bytes.data(), blob_bytes);
    }
    BENCH_CHECK_OK(engine.PutReceived(begun->put_id, 0, blob_bytes));
    BENCH_CHECK_OK(engine.CommitPut(begun->put_id).status());
    keys.push_back(begun->key);
  }

  // Demotion through the engine.
  absl::Time t0 = absl::Now();
  auto evicted = engine.Evict(Tier::kDram, total);
  const absl::Duration demote = absl::Now() - t0;
  BENCH_CHECK_OK(evicted.status());
  CHECK_EQ(evicted->blobs_demoted, flags.blobs);

  // Promotion: one Read per blob.
  const auto read_all = [&](bool batched) {
    std::vector<ReadRange> ranges;
    for (const auto& key : keys) {
      ranges.push_back(ReadRange{key, 0, static_cast<uint32_t>(pages), 0, layout.num_layers});
    }
    const absl::Time start = absl::Now();
    if (batched) {
      auto read = engine.Read(*ns, ranges);
      BENCH_CHECK_OK(read.status());
      BENCH_CHECK_OK(engine.Release(read->lease_id));
    } else {
      for (const ReadRange& range : ranges) {
        auto read = engine.Read(*ns, {&range, 1});
        BENCH_CHECK_OK(read.status());
        BENCH_CHECK_OK(engine.Release(read->lease_id));
      }
    }
    return absl::Now() - start;
  };
  const absl::Duration promote_each = read_all(false);
  BENCH_CHECK_OK(engine.Evict(Tier::kDram, total).status());  // SSD copies kept
  const absl::Duration promote_batched = read_all(true);

  // The tier's own batch I/O on the same file, from / into an arena like the engine's.
  created->reset();
  options.meta.reset();
  tiering::DramArenaOptions arena_options;
  arena_options.capacity_bytes = options.dram_bytes;
  arena_options.name = "strata-tier-bench";
  arena_options.try_hugetlb = false;
  arena_options.populate = true;
  auto made_arena = tiering::DramArena::Create(arena_options);
  BENCH_CHECK_OK(made_arena.status());
  tiering::DramArena& arena = **made_arena;
  std::vector<tiering::Extent> dram_extents, ssd_extents;
  for (uint64_t b = 0; b < flags.blobs; ++b) {
    auto d = arena.Allocate(blob_bytes);
    auto s = ssd->Allocate(blob_bytes);
    BENCH_CHECK_OK(d.status());
    BENCH_CHECK_OK(s.status());
    dram_extents.push_back(*d);
    ssd_extents.push_back(*s);
  }
  const auto run = [&](bool write) {
    absl::Notification done;
    const absl::Time start = absl::Now();
    if (write) {
      std::vector<tiering::TierWrite> ops;
      for (uint64_t b = 0; b < flags.blobs; ++b) {
        ops.push_back({ssd_extents[b], 0, arena.Data(dram_extents[b]).first(blob_bytes)});
      }
      ssd->WriteBatch(std::move(ops), [&](std::vector<absl::Status> s) {
        for (const auto& status : s) BENCH_CHECK_OK(status);
        done.Notify();
      });
      done.WaitForNotification();
      BENCH_CHECK_OK(ssd->Flush());
    } else {
      std::vector<tiering::TierRead> ops;
      for (uint64_t b = 0; b < flags.blobs; ++b) {
        ops.push_back({ssd_extents[b], 0, arena.Data(dram_extents[b]).first(blob_bytes)});
      }
      ssd->ReadBatch(std::move(ops), [&](std::vector<absl::Status> s) {
        for (const auto& status : s) BENCH_CHECK_OK(status);
        done.Notify();
      });
      done.WaitForNotification();
    }
    return absl::Now() - start;
  };
  const absl::Duration tier_write = run(true);
  const absl::Duration tier_read = run(false);

  std::printf("\n%llu blobs x %llu MiB (%.2f GiB), metadata: %s\n",
              static_cast<unsigned long long>(flags.blobs),
              static_cast<unsigned long long>(flags.blob_mib),
              static_cast<double>(total) / (1 << 30), flags.meta ? "RocksDB" : "none");
  std::printf("%-36s %10s %10s\n", "operation", "GB/s", "vs tier");
  const double tw = GBps(total, tier_write), tr = GBps(total, tier_read);
  std::printf("%-36s %10.2f %9.2fx\n", "tier: WriteBatch + Flush", tw, 1.0);
  std::printf("%-36s %10.2f %9.2fx\n", "engine: demote (Evict DRAM)", GBps(total, demote),
              GBps(total, demote) / tw);
  std::printf("%-36s %10.2f %9.2fx\n", "tier: ReadBatch", tr, 1.0);
  std::printf("%-36s %10.2f %9.2fx\n", "engine: promote, one Read per blob",
              GBps(total, promote_each), GBps(total, promote_each) / tr);
  std::printf("%-36s %10.2f %9.2fx\n", "engine: promote, one Read for all",
              GBps(total, promote_batched), GBps(total, promote_batched) / tr);
  std::filesystem::remove_all(flags.dir);
  return 0;
}

}  // namespace
}  // namespace strata::store::core

int main(int argc, char** argv) { return strata::store::core::Main(argc, argv); }
