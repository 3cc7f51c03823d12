// strata-gpu-bench: device-memory figures of issue 14, each beside its physical limit
// measured in the same run, against a live strata-node through libstrata.
//
//   strata-gpu-bench --node HOST:PORT [--device cuda|host] [--sizes 4MiB,64MiB] [--seconds 1]
//                    [--context-tokens 32768] [--blob-tokens 1024]
//
// Rows (GB/s = 10^9 bytes/s; ratio = figure / its limit):
//   h2d peak           pinned host -> device copies (cudaMemcpyAsync), SIZE each: the limit
//   d2d peak           device -> device copies, SIZE each: the limit of the kernel
//   staged read        Client::Read of a SIZE blob into device memory over UCX
//                      (same_host off): the pinned pool, receive overlapping the copies
//   same-host read     the same with the same-host channel: DMA from the node's arena
//   direct read        the same received straight into device memory and checksummed there
//                      (path (a): UCX with CUDA memory; printed as not run where UCX stages)
//   checksum kernel    Device::ChecksumChunks over the SIZE blob in device memory (XXH3 of
//                      each layer page: path (a)'s and the HBM reader's verification)
//   scatter kernel     Device::ScatterPagedAsync of a SIZE blob in device memory into a
//                      vLLM-layout paged cache (bytes moved / time), against d2d peak
//   hbm read           the same-host read of the SIZE blob once the node holds it in its HBM
//                      tier (strata-node --hbm_bytes, --same_host_share_hbm): device to device
//                      from the node's pool (CUDA IPC), against d2d peak; printed as not run
//                      where the node has no HBM tier, does not share it, or this device
//                      cannot open it (--device host: another process's memory)
//   context e2e        a context of CONTEXT-TOKENS tokens of a 70B-like layout (80 layers,
//                      8 KV heads, head dim 128, bf16, 16-token pages: 320 KiB a token,
//                      10 GiB at 32K) written in BLOB-TOKENS blobs, then Match + ReadLayers
//                      into device memory + scatter into a paged cache (block table
//                      shuffled), timed from the Match to the last scatter done; against
//                      h2d peak. Once with the same-host channel, once staged.
// --device host runs everything on the host device (memcpy plays every copy and the CPU
// reference the kernel): the pipelines' own cost on a machine without a GPU.
// Exit status: 0 when every call succeeded; 1 on the first failure (printed); 2 usage.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <functional>
#include <memory>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

#include "strata/base/byte_size.h"
#include "strata/base/status_macros.h"
#include "strata/client.h"
#include "strata/gpu/device.h"
#include "strata/gpu/paged_kv.h"
#include "strata/options.h"
#include "strata/types.h"
#include "strata/worker/device_reference_model.h"
#include "strata/worker/reference_model.h"

namespace strata {
namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  std::string node = "127.0.0.1:7400";
  bool cuda = true;
  std::vector<uint64_t> sizes = {uint64_t{4} << 20, uint64_t{64} << 20};
  double seconds = 1.0;
  uint32_t context_tokens = 32768;
  uint32_t blob_tokens = 1024;
};

KvLayout Layout70B() {
  return KvLayout{.num_layers = 80,
                  .num_kv_heads = 8,
                  .head_dim = 128,
                  .dtype = DType::kBFloat16,
                  .page_tokens = 16,
                  .format = KvFormat::kKeyValue,
                  .tp_rank = 0,
                  .tp_world = 1};
}

// 8 layers of the same heads: 512 KiB a page, for the per-size rows.
KvLayout LayoutSmall() {
  KvLayout l = Layout70B();
  l.num_layers = 8;
  return l;
}

void Row(const std::string& figure, uint64_t bytes, double gbps, const std::string& limit_name,
         double limit) {
  if (limit > 0) {
    std::printf("| %-16s | %10.1f MiB | %8.2f | %-10s | %8.2f | %5.2f |\n", figure.c_str(),
                bytes / 1048576.0, gbps, limit_name.c_str(), limit, gbps / limit);
  } else {
    std::printf("| %-16s | %10.1f MiB | %8.2f | %-10s | %8s | %5s |\n", figure.c_str(),
                bytes / 1048576.0, gbps, limit_name.c_str(), "-", "-");
  }
  std::fflush(stdout);
}

// Runs `op` (moving `bytes` each call) for at least `seconds` and 3 calls; GB/s.
absl::StatusOr<double> Rate(uint64_t bytes, double seconds,
                            const std::function<absl::Status()>& op) {
  STRATA_RETURN_IF_ERROR(op());  // warm-up
  const Clock::time_point t0 = Clock::now();
  uint64_t calls = 0;
  double elapsed = 0;
  while (calls < 3 || elapsed < seconds) {
    STRATA_RETURN_IF_ERROR(op());
    ++calls;
    elapsed = std::chrono::duration<double>(Clock::now() - t0).count();
  }
  return calls * static_cast<double>(bytes) / elapsed / 1e9;
}

std::vector<TokenId> Tokens(std::mt19937_64& rng, size_t n) {
  std::vector<TokenId> out(n);
  for (TokenId& t : out) t = static_cast<TokenId>(rng() % 128000);
  return out;
}

class Bench {
 public:
  explicit Bench(Options o) : o_(std::move(o)) {}

  absl::Status Run() {
    if (o_.cuda) {
      STRATA_ASSIGN_OR_RETURN(device_, gpu::OpenCudaDevice(0));
    } else {
      STRATA_ASSIGN_OR_RETURN(device_, gpu::CreateHostDevice({}));
    }
    STRATA_ASSIGN_OR_RETURN(stream_, device_->CreateStream());
    STRATA_ASSIGN_OR_RETURN(staged_, Connect(false, false));
    STRATA_ASSIGN_OR_RETURN(direct_, Connect(false, true));
    STRATA_ASSIGN_OR_RETURN(local_, Connect(true, false));
    std::printf("# device: %s\n\n", device_->name().c_str());
    std::printf("| figure | size | GB/s | limit | limit GB/s | ratio |\n");
    std::printf("| --- | ---: | ---: | --- | ---: | ---: |\n");
    for (uint64_t size : o_.sizes) STRATA_RETURN_IF_ERROR(PerSize(size));
    STRATA_RETURN_IF_ERROR(ModelRow());
    STRATA_RETURN_IF_ERROR(Context(true));
    STRATA_RETURN_IF_ERROR(Context(false));
    if (local_->stats().device_reads_direct == 0) {
      return absl::FailedPreconditionError(
          "the same-host rows did not use the same-host channel (node on another host?)");
    }
    return absl::OkStatus();
  }

 private:
  absl::StatusOr<std::unique_ptr<Client>> Connect(bool same_host, bool device_direct) {
    ClientOptions options = ClientOptions::FromEnvironment();
    options.node = o_.node;
    options.same_host = same_host;
    options.device_direct = device_direct;
    options.wait_for_node = true;
    options.default_timeout = absl::Seconds(120);
    std::shared_ptr<gpu::Device> device(device_.get(), [](gpu::Device*) {});
    options.open_device = [device](int) -> absl::StatusOr<std::shared_ptr<gpu::Device>> {
      return device;
    };
    return Client::Connect(options);
  }

  // A vLLM-layout paged cache (K and V apart, 16-token blocks) of `blocks` blocks in device
  // memory, and the rows of a blob of `pages` pages scattered into it through a shuffled
  // block table.
  struct Paged {
    std::vector<gpu::DeviceBuffer> tensors;
    gpu::PagedCache cache;
    gpu::BlobShape shape;
    std::vector<uint64_t> rows;
  };
  absl::StatusOr<Paged> MakePaged(const KvLayout& layout, uint32_t pages, uint64_t blocks,
                                  std::mt19937_64& rng) {
    Paged p;
    const uint64_t row_bytes = uint64_t{layout.num_kv_heads} * layout.head_dim * 2;
    p.shape = gpu::BlobShape{layout.num_layers, pages, layout.page_tokens, row_bytes, true};
    std::vector<void*> k, v;
    for (uint32_t l = 0; l < layout.num_layers; ++l) {
      for (int h = 0; h < 2; ++h) {
        STRATA_ASSIGN_OR_RETURN(gpu::DeviceBuffer t,
                                device_->Allocate(blocks * layout.page_tokens * row_bytes));
        (h == 0 ? k : v).push_back(t.data());
        p.tensors.push_back(std::move(t));
      }
    }
    p.cache = gpu::VllmSeparateCache(k, v, blocks, layout.page_tokens, row_bytes);
    std::vector<int32_t> table(blocks);
    std::iota(table.begin(), table.end(), 0);
    std::shuffle(table.begin(), table.end(), rng);
    STRATA_RETURN_IF_ERROR(
        gpu::RowsFromBlockTable(table, layout.page_tokens, 0, p.shape.Tokens(), &p.rows));
    return p;
  }

  absl::StatusOr<gpu::DeviceBuffer> Filled(uint64_t bytes) {
    STRATA_ASSIGN_OR_RETURN(gpu::DeviceBuffer b, device_->Allocate(bytes));
    STRATA_RETURN_IF_ERROR(device_->MemsetAsync(b.data(), 0x5a, bytes, stream_));
    STRATA_RETURN_IF_ERROR(device_->Synchronize(stream_));
    return b;
  }

  absl::Status PerSize(uint64_t size) {
    STRATA_ASSIGN_OR_RETURN(gpu::DeviceBuffer pinned, device_->AllocatePinnedHost(size));
    std::memset(pinned.data(), 0x33, size);
    STRATA_ASSIGN_OR_RETURN(gpu::DeviceBuffer a, Filled(size));
    STRATA_ASSIGN_OR_RETURN(gpu::DeviceBuffer b, Filled(size));
    STRATA_ASSIGN_OR_RETURN(const double h2d, Rate(size, o_.seconds, [&]() -> absl::Status {
                              STRATA_RETURN_IF_ERROR(device_->CopyToDeviceAsync(
                                  a.data(), pinned.data(), size, stream_));
                              return device_->Synchronize(stream_);
                            }));
    Row("h2d peak", size, h2d, "", 0);
    STRATA_ASSIGN_OR_RETURN(const double d2d, Rate(size, o_.seconds, [&]() -> absl::Status {
                              STRATA_RETURN_IF_ERROR(device_->CopyDeviceToDeviceAsync(
                                  b.data(), a.data(), size, stream_));
                              return device_->Synchronize(stream_);
                            }));
    Row("d2d peak", size, d2d, "", 0);

    // A blob of `size` bytes (whole pages of the small layout) on the node.
    STRATA_ASSIGN_OR_RETURN(
        const Namespace ns,
        Namespace::Create("gpu-bench", absl::StrCat("bench-", size, "-", ::time(nullptr)),
                          LayoutSmall()));
    const uint32_t pages = static_cast<uint32_t>(size / ns.layout().BytesPerPage());
    const uint64_t bytes = PagesBytes(ns.layout(), pages);
    std::mt19937_64 rng(size);
    const std::vector<TokenId> tokens = Tokens(rng, size_t{pages} * ns.layout().page_tokens);
    STRATA_ASSIGN_OR_RETURN(
        const WriteResult written,
        staged_->Write(ns, std::nullopt, tokens, MemoryDescriptor::Host(pinned.data(), bytes)));
    const ReadRange range{written.key, 0, pages};
    const MemoryDescriptor dst = MemoryDescriptor::CudaDevice(a.data(), bytes, 0);
    for (int same_host = 0; same_host < 2; ++same_host) {
      Client& client = same_host ? *local_ : *staged_;
      STRATA_ASSIGN_OR_RETURN(const double read, Rate(bytes, o_.seconds, [&]() {
                                return client.Read(ns, {&range, 1}, {&dst, 1});
                              }));
      Row(same_host ? "same-host read" : "staged read", bytes, read, "h2d peak", h2d);
    }
    // Path (a): received straight into device memory and checksummed there — where the
    // transport can write it (UCX with CUDA; the host device); else the client staged.
    const uint64_t received = direct_->stats().device_reads_received;
    STRATA_ASSIGN_OR_RETURN(const double direct, Rate(bytes, o_.seconds, [&]() {
                              return direct_->Read(ns, {&range, 1}, {&dst, 1});
                            }));
    if (direct_->stats().device_reads_received > received) {
      Row("direct read", bytes, direct, "h2d peak", h2d);
    } else {
      std::printf(
          "| direct read      | (not run: this UCX cannot write %s memory: it staged) | | | | |\n",
          device_->name().c_str());
    }
    // The device's chunk checksums (path (a)'s verification) over the blob in device memory.
    std::vector<uint64_t> sums(bytes / ns.layout().BytesPerLayerPage());
    STRATA_ASSIGN_OR_RETURN(const double checksum, Rate(bytes, o_.seconds, [&]() {
                              return device_->ChecksumChunks(a.data(),
                                                             ns.layout().BytesPerLayerPage(),
                                                             sums.size(), 1, sums.data(), stream_);
                            }));
    Row("checksum kernel", bytes, checksum, "d2d peak", d2d);
    STRATA_RETURN_IF_ERROR(HbmRow(ns, tokens, range, dst, bytes, d2d));

    // The scatter kernel: the blob (in device memory) into a vLLM cache with K and V apart.
    STRATA_ASSIGN_OR_RETURN(const Paged paged, MakePaged(ns.layout(), pages, pages * 2, rng));
    STRATA_ASSIGN_OR_RETURN(const double scatter, Rate(bytes, o_.seconds, [&]() -> absl::Status {
                              STRATA_RETURN_IF_ERROR(device_->ScatterPagedAsync(
                                  a.data(), paged.shape, paged.cache, paged.rows, stream_));
                              return device_->Synchronize(stream_);
                            }));
    Row("scatter kernel", bytes, scatter, "d2d peak", d2d);
    (void)staged_->Delete(written.key);
    return absl::OkStatus();
  }

  // The SIZE blob, read many times above, from the node's HBM tier: waits (up to 10 s) for
  // Match to show it there, then reads it as the same-host read did; counted only if the
  // bytes came device to device (ClientStats::device_bytes_from_hbm).
  absl::Status HbmRow(const Namespace& ns, const std::vector<TokenId>& tokens,
                      const ReadRange& range, const MemoryDescriptor& dst, uint64_t bytes,
                      double d2d) {
    const Clock::time_point give_up = Clock::now() + std::chrono::seconds(10);
    bool in_hbm = false;
    while (!in_hbm && Clock::now() < give_up) {
      STRATA_ASSIGN_OR_RETURN(const MatchResult match, local_->Match(ns, tokens));
      in_hbm = !match.segments.empty() && match.segments[0].tier == Tier::kHbm;
      if (!in_hbm) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if (!in_hbm) {
      std::printf(
          "| hbm read         | (not run: the node keeps no HBM copy: no HBM tier) | | | | |\n");
      return absl::OkStatus();
    }
    const uint64_t before = local_->stats().device_bytes_from_hbm;
    STRATA_ASSIGN_OR_RETURN(const double read, Rate(bytes, o_.seconds, [&]() {
                              return local_->Read(ns, {&range, 1}, {&dst, 1});
                            }));
    if (local_->stats().device_bytes_from_hbm == before) {
      std::printf(
          "| hbm read         | (not run: the node does not share its HBM tier, or %s cannot "
          "open it) | | | | |\n",
          device_->name().c_str());
      return absl::OkStatus();
    }
    Row("hbm read", bytes, read, "d2d peak", d2d);
    return absl::OkStatus();
  }

  // The reference model computing 64 pages (1024 tokens) of the 70B-like layout into device
  // memory (worker::DeviceReferenceModel) against the CPU model into host memory: KV bytes
  // produced per second, and the check that both produced the same bytes.
  absl::Status ModelRow() {
    const KvLayout layout = Layout70B();
    const uint32_t pages = 64;
    std::mt19937_64 rng(9);
    const std::vector<TokenId> tokens = Tokens(rng, size_t{pages} * layout.page_tokens);
    STRATA_ASSIGN_OR_RETURN(std::unique_ptr<worker::ReferenceModel> cpu,
                            worker::ReferenceModel::Create(layout, 42));
    std::shared_ptr<gpu::Device> device(device_.get(), [](gpu::Device*) {});
    STRATA_ASSIGN_OR_RETURN(std::unique_ptr<worker::DeviceReferenceModel> on_device,
                            worker::DeviceReferenceModel::Create(*cpu, device));
    const uint64_t bytes = PagesBytes(layout, pages);
    STRATA_ASSIGN_OR_RETURN(gpu::DeviceBuffer out, device_->Allocate(bytes));
    std::vector<std::byte> host(bytes);
    STRATA_ASSIGN_OR_RETURN(const double cpu_rate, Rate(bytes, o_.seconds, [&]() {
                              return cpu->ComputeBlob(tokens, 0, pages, absl::MakeSpan(host));
                            }));
    STRATA_ASSIGN_OR_RETURN(const double device_rate, Rate(bytes, o_.seconds, [&]() {
                              return on_device->ComputeBlob(tokens, 0, pages, out.data(), bytes);
                            }));
    std::vector<std::byte> back(bytes);
    STRATA_RETURN_IF_ERROR(device_->CopyToHostAsync(back.data(), out.data(), bytes, stream_));
    STRATA_RETURN_IF_ERROR(device_->Synchronize(stream_));
    if (back != host) {
      return absl::DataLossError("the device model's KV differs from the CPU model's");
    }
    Row("model on device", bytes, device_rate, "cpu model", cpu_rate);
    std::printf(
        "|   (%u tokens of the 70B-like layout; the same bytes as the CPU model's) | | | | | |\n",
        pages * layout.page_tokens);
    return absl::OkStatus();
  }

  // The 70B-like context, end to end.
  absl::Status Context(bool same_host) {
    const KvLayout layout = Layout70B();
    STRATA_ASSIGN_OR_RETURN(
        const Namespace ns,
        Namespace::Create("gpu-bench", absl::StrCat("context-", same_host, "-", ::time(nullptr)),
                          layout));
    const uint32_t blob_pages = o_.blob_tokens / layout.page_tokens;
    const uint32_t pages = o_.context_tokens / layout.page_tokens;
    const uint64_t total = PagesBytes(layout, pages);
    std::mt19937_64 rng(same_host ? 2 : 3);
    const std::vector<TokenId> tokens = Tokens(rng, size_t{pages} * layout.page_tokens);
    std::optional<BlobKey> first;
    {
      // Written from host memory, a blob at a time.
      std::vector<std::byte> kv(PagesBytes(layout, blob_pages));
      for (size_t i = 0; i < kv.size(); i += 4096) kv[i] = static_cast<std::byte>(rng());
      std::optional<Parent> parent;
      for (uint32_t done = 0; done < pages; done += blob_pages) {
        const uint32_t n = std::min(blob_pages, pages - done);
        const auto own = absl::MakeConstSpan(tokens).subspan(size_t{done} * layout.page_tokens,
                                                             size_t{n} * layout.page_tokens);
        STRATA_ASSIGN_OR_RETURN(
            const WriteResult w,
            staged_->Write(ns, parent, own,
                           MemoryDescriptor::Host(kv.data(), PagesBytes(layout, n))));
        parent = Parent{w.key, done + n};
        if (!first.has_value()) first = w.key;
      }
    }
    STRATA_ASSIGN_OR_RETURN(gpu::DeviceBuffer landing, device_->Allocate(total));
    STRATA_ASSIGN_OR_RETURN(const Paged paged, MakePaged(layout, pages, pages, rng));
    Client& client = same_host ? *local_ : *staged_;
    double best = 0;
    for (int round = 0; round < 3; ++round) {
      const Clock::time_point t0 = Clock::now();
      STRATA_ASSIGN_OR_RETURN(const MatchResult match, client.Match(ns, tokens));
      if (match.ReadablePages() != pages) {
        return absl::InternalError(
            absl::StrCat("the context matched ", match.ReadablePages(), " of ", pages, " pages"));
      }
      STRATA_RETURN_IF_ERROR(client.ReadLayers(
          ns, match.segments, pages, MemoryDescriptor::CudaDevice(landing.data(), total, 0),
          [](uint32_t) { return absl::OkStatus(); }));
      STRATA_RETURN_IF_ERROR(device_->ScatterPagedAsync(landing.data(), paged.shape, paged.cache,
                                                        paged.rows, stream_));
      STRATA_RETURN_IF_ERROR(device_->Synchronize(stream_));
      const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
      best = std::max(best, total / seconds / 1e9);
    }
    // The h2d limit at a large size, measured now.
    const uint64_t probe = std::min<uint64_t>(total, uint64_t{256} << 20);
    STRATA_ASSIGN_OR_RETURN(gpu::DeviceBuffer pinned, device_->AllocatePinnedHost(probe));
    STRATA_ASSIGN_OR_RETURN(const double h2d, Rate(probe, o_.seconds, [&]() -> absl::Status {
                              STRATA_RETURN_IF_ERROR(device_->CopyToDeviceAsync(
                                  landing.data(), pinned.data(), probe, stream_));
                              return device_->Synchronize(stream_);
                            }));
    Row(same_host ? "context same-host" : "context staged", total, best, "h2d peak", h2d);
    std::printf("|   (%u tokens, %u layers: Match + ReadLayers + scatter, best of 3) | | | | | |\n",
                o_.context_tokens, layout.num_layers);
    // The whole context goes (its first blob and everything below it).
    if (first.has_value()) (void)staged_->Delete(*first);
    return absl::OkStatus();
  }

  const Options o_;
  std::unique_ptr<gpu::Device> device_;
  gpu::Stream stream_;
  std::unique_ptr<Client> staged_;  // device_direct off: the pinned staging pool
  std::unique_ptr<Client> direct_;  // device_direct on
  std::unique_ptr<Client> local_;   // the same-host channel
};

int Main(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc || (i < argc && std::string_view(argv[i]) == "--help"); i += 2) {
    const std::string_view arg = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : "";
    bool ok = true;
    if (arg == "--node") {
      o.node = v;
    } else if (arg == "--device") {
      ok = std::string_view(v) == "cuda" || std::string_view(v) == "host";
      o.cuda = std::string_view(v) == "cuda";
    } else if (arg == "--sizes") {
      o.sizes.clear();
      for (absl::string_view s : absl::StrSplit(v, ',')) {
        absl::StatusOr<uint64_t> size = base::ParseBytes(std::string_view(s.data(), s.size()));
        ok = ok && size.ok() && *size >= LayoutSmall().BytesPerPage();
        o.sizes.push_back(size.value_or(0));
      }
    } else if (arg == "--seconds") {
      ok = absl::SimpleAtod(v, &o.seconds) && o.seconds > 0;
    } else if (arg == "--context-tokens") {
      ok = absl::SimpleAtoi(v, &o.context_tokens) && o.context_tokens >= 16 &&
           o.context_tokens % 16 == 0;
    } else if (arg == "--blob-tokens") {
      ok = absl::SimpleAtoi(v, &o.blob_tokens) && o.blob_tokens >= 16 && o.blob_tokens % 16 == 0 &&
           o.blob_tokens <= 3200;  // a blob is at most 1 GiB (320 KiB a token)
    } else {
      ok = false;
    }
    if (!ok) {
      std::fprintf(stderr,
                   "usage: %s --node HOST:PORT [--device cuda|host] [--sizes 4MiB,64MiB] "
                   "[--seconds 1] [--context-tokens 32768] [--blob-tokens 1024]\n",
                   argv[0]);
      return 2;
    }
  }
  char date[64];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof(date), "%Y-%m-%d %H:%M:%S UTC", std::gmtime(&now));
  std::vector<std::string> args(argv, argv + argc);
  std::printf("# command: %s\n# date: %s\n", absl::StrJoin(args, " ").c_str(), date);
  Bench bench(o);
  if (absl::Status s = bench.Run(); !s.ok()) {
    std::fprintf(stderr, "strata-gpu-bench: %s\n", s.ToString().c_str());
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace strata

int main(int argc, char** argv) { return strata::Main(argc, argv); }
