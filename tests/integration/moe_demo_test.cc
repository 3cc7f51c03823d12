// The MoE reference worker (client/tools/moe_demo.h) against a real node on the host
// gpu::Device: prefill, midfill, decode attention and decode experts, the KV moving between
// strata and a paged cache in device memory over UCX (staged) and the same-host channel
// (DMA from the node's arena). The demo's own checks — the prompt read back byte-identical
// to the model's KV, the decode output from strata's KV bit-identical to the recomputed
// one — must hold.
#include "client/tools/moe_demo.h"

#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"

#include "client_e2e_support.h"
#include "strata/base/status_test_macros.h"
#include "strata/gpu/device.h"

namespace strata::integration {
namespace {

class MoeDemoTest : public ::testing::TestWithParam<std::string> {};

TEST_P(MoeDemoTest, FourPhasesThroughDeviceMemoryMatchTheRecomputedOutput) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<testing::NodeProcess> node,
                       StartNodeWithDataPlane(GetParam()));
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<gpu::Device> device,
                       gpu::CreateHostDevice({.memory_bytes = size_t{128} << 20}));
  ClientOptions options = ClientOptionsFor(node->grpc_address(), GetParam());
  options.device_staging_bytes = size_t{4} << 20;
  options.open_device = [device](int) -> absl::StatusOr<std::shared_ptr<gpu::Device>> {
    return device;
  };
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Client> client, Client::Connect(options));
  tools::MoeDemoOptions demo;
  demo.layout = ClientTestLayout();
  demo.prompt_pages = 6;
  demo.midfill_pages = 2;
  demo.decode_steps = 2;
  demo.device = device;
  ASSERT_OK_AND_ASSIGN(const tools::MoeDemoResult result, tools::RunMoeDemo(*client, demo));

  std::vector<std::string> names;
  for (const tools::MoePhase& p : result.phases) names.push_back(p.name);
  EXPECT_EQ(names,
            (std::vector<std::string>{"prefill", "midfill", "decode attention", "decode experts",
                                      "decode attention", "decode experts"}));
  EXPECT_EQ(result.phases[1].pages_read, 6u);  // the midfill read the prompt
  EXPECT_EQ(result.phases[4].pages_read, 9u);  // the second decode step the whole context
  EXPECT_EQ(result.experts_chosen.size(), demo.top_k);
  EXPECT_EQ(result.output.size(), ClientTestLayout().num_kv_heads * ClientTestLayout().head_dim);
  const ClientStats stats = client->stats();
  EXPECT_EQ(stats.device_writes, 4u);  // prompt, midfill, two decode pages
  if (GetParam() == kSameHost) {
    EXPECT_EQ(stats.device_reads_direct, 3u);
    EXPECT_EQ(stats.device_writes_direct, 4u);
  } else if (GetParam() == kTcpDeviceDirect) {
    EXPECT_EQ(stats.device_reads_received, 3u);
    EXPECT_EQ(stats.device_writes_direct, 4u);
  } else {
    EXPECT_EQ(stats.device_reads_staged, 3u);
  }
  // Refused up front: an MLA layout.
  tools::MoeDemoOptions mla = demo;
  mla.layout.format = KvFormat::kMlaLatent;
  mla.layout.num_kv_heads = 1;
  EXPECT_EQ(tools::RunMoeDemo(*client, mla).status().code(), absl::StatusCode::kInvalidArgument);
}

INSTANTIATE_TEST_SUITE_P(Paths, MoeDemoTest,
                         ::testing::Values(std::string("tcp"), std::string(kSameHost),
                                           std::string(kTcpDeviceDirect)),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return TransportTestName(info.param);
                         });

}  // namespace
}  // namespace strata::integration
