// strata-moe-demo: the MoE reference worker's four phases against a live node
// (client/tools/moe_demo.h): prefill, midfill, decode attention, decode experts, with the KV
// moving between strata and a paged cache in device memory.
//
//   strata-moe-demo [--node HOST:PORT] [--device host|cuda] [--prompt-pages 8]
//                   [--midfill-pages 2] [--decode-steps 2]
//
// Prints one row per phase (pages read and written, milliseconds) and the experts the last
// decode step chose. Exit status: 0 when every phase ran and the self-checks held; 1
// otherwise (printed); 2 usage.
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

#include "absl/strings/numbers.h"
#include "absl/time/clock.h"

#include "client/tools/moe_demo.h"
#include "strata/client.h"
#include "strata/gpu/device.h"
#include "strata/options.h"

namespace strata {
namespace {

int Main(int argc, char** argv) {
  ClientOptions options = ClientOptions::FromEnvironment();
  tools::MoeDemoOptions demo;
  // 4 layers x 8 KV heads x 128, bf16, 16-token pages (64 KiB a page).
  demo.layout = KvLayout{.num_layers = 4,
                         .num_kv_heads = 8,
                         .head_dim = 128,
                         .dtype = DType::kBFloat16,
                         .page_tokens = 16,
                         .format = KvFormat::kKeyValue,
                         .tp_rank = 0,
                         .tp_world = 1};
  // A namespace of its own per run: the demo's blobs continue the blobs it wrote itself.
  demo.model = "org/moe-demo-" + std::to_string(absl::ToUnixNanos(absl::Now()));
  bool cuda = false;
  for (int i = 1; i < argc; i += 2) {
    const std::string_view arg = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : nullptr;
    bool ok = v != nullptr;
    if (ok && arg == "--node") {
      options.node = v;
    } else if (ok && arg == "--device") {
      cuda = std::string_view(v) == "cuda";
      ok = cuda || std::string_view(v) == "host";
    } else if (ok && arg == "--prompt-pages") {
      ok = absl::SimpleAtoi(v, &demo.prompt_pages) && demo.prompt_pages >= 1;
    } else if (ok && arg == "--midfill-pages") {
      ok = absl::SimpleAtoi(v, &demo.midfill_pages);
    } else if (ok && arg == "--decode-steps") {
      ok = absl::SimpleAtoi(v, &demo.decode_steps);
    } else {
      ok = false;
    }
    if (!ok) {
      std::fprintf(stderr,
                   "usage: %s [--node HOST:PORT] [--device host|cuda] [--prompt-pages 8] "
                   "[--midfill-pages 2] [--decode-steps 2]\n",
                   argv[0]);
      return 2;
    }
  }
  absl::StatusOr<std::unique_ptr<gpu::Device>> opened =
      cuda ? gpu::OpenCudaDevice(0) : gpu::CreateHostDevice({});
  if (!opened.ok()) {
    std::fprintf(stderr, "strata-moe-demo: %s\n", opened.status().ToString().c_str());
    return 1;
  }
  demo.device = std::shared_ptr<gpu::Device>(*std::move(opened));
  std::shared_ptr<gpu::Device> device = demo.device;
  options.open_device = [device](int) -> absl::StatusOr<std::shared_ptr<gpu::Device>> {
    return device;
  };
  options.wait_for_node = true;
  absl::StatusOr<std::unique_ptr<Client>> client = Client::Connect(options);
  absl::StatusOr<tools::MoeDemoResult> result =
      client.ok() ? tools::RunMoeDemo(**client, demo) : client.status();
  if (!result.ok()) {
    std::fprintf(stderr, "strata-moe-demo: %s\n", result.status().ToString().c_str());
    return 1;
  }
  std::printf(
      "device %s, node %s\n| phase | pages read | pages written | ms |\n| --- | ---: | ---: | ---: "
      "|\n",
      demo.device->name().c_str(), options.node.c_str());
  for (const tools::MoePhase& p : result->phases) {
    std::printf("| %s | %u | %u | %.1f |\n", p.name.c_str(), p.pages_read, p.pages_written,
                p.milliseconds);
  }
  std::printf("experts chosen by the last decode step:");
  for (uint32_t x : result->experts_chosen) std::printf(" %u", x);
  std::printf("\nthe decode output from strata's KV equals the recomputed one, bit for bit\n");
  return 0;
}

}  // namespace
}  // namespace strata

int main(int argc, char** argv) { return strata::Main(argc, argv); }
