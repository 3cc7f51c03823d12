#include "strata/types.h"

#include <vector>

#include "gtest/gtest.h"

#include "strata/base/status_test_macros.h"

namespace strata {
namespace {

TEST(MemoryDescriptorTest, HostMemoryOfTheRightSizeIsAccepted) {
  std::vector<std::byte> buffer(64);
  EXPECT_OK(CheckMemoryDescriptor(MemoryDescriptor::Host(buffer.data(), 64), 64, "d"));
  MemoryDescriptor pinned = MemoryDescriptor::Host(buffer.data(), 64);
  pinned.kind = MemoryKind::kPinnedHost;
  EXPECT_OK(CheckMemoryDescriptor(pinned, 64, "d"));
  const std::vector<std::byte> source(8);
  EXPECT_OK(CheckMemoryDescriptor(MemoryDescriptor::Host(source.data(), 8), 8, "source"));
}

TEST(MemoryDescriptorTest, RefusalsNameTheArgument) {
  std::vector<std::byte> buffer(64);
  const absl::Status wrong_size =
      CheckMemoryDescriptor(MemoryDescriptor::Host(buffer.data(), 63), 64, "destinations[2]");
  EXPECT_CODE(wrong_size, absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(wrong_size.message(), "destinations[2]: 63 bytes, expected 64");

  EXPECT_CODE(
      CheckMemoryDescriptor(MemoryDescriptor::Host(static_cast<void*>(nullptr), 64), 64, "d"),
      absl::StatusCode::kInvalidArgument);
  MemoryDescriptor negative = MemoryDescriptor::Host(buffer.data(), 64);
  negative.device = -1;
  EXPECT_CODE(CheckMemoryDescriptor(negative, 64, "d"), absl::StatusCode::kInvalidArgument);
  MemoryDescriptor odd = MemoryDescriptor::Host(buffer.data(), 64);
  odd.kind = static_cast<MemoryKind>(42);
  EXPECT_CODE(CheckMemoryDescriptor(odd, 64, "d"), absl::StatusCode::kInvalidArgument);
}

TEST(MemoryDescriptorTest, DeviceMemoryIsCheckedLikeHostMemory) {
  std::vector<std::byte> buffer(64);
  EXPECT_OK(CheckMemoryDescriptor(MemoryDescriptor::CudaDevice(buffer.data(), 64, 1), 64, "dst"));
  EXPECT_CODE(CheckMemoryDescriptor(MemoryDescriptor::CudaDevice(buffer.data(), 64, -1), 64, "d"),
              absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(CheckMemoryDescriptor(MemoryDescriptor::CudaDevice(nullptr, 64, 0), 64, "d"),
              absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(CheckMemoryDescriptor(MemoryDescriptor::CudaDevice(buffer.data(), 64, 0), 65, "d"),
              absl::StatusCode::kInvalidArgument);
}

TEST(TypesTest, PagesBytesAndReadRangeFromSegment) {
  const KvLayout layout{.num_layers = 3,
                        .num_kv_heads = 2,
                        .head_dim = 4,
                        .dtype = DType::kFloat16,
                        .page_tokens = 8,
                        .format = KvFormat::kKeyValue,
                        .tp_rank = 0,
                        .tp_world = 1};
  ASSERT_OK(layout.Validate());
  // One layer-page: 2 (K, V) x 8 tokens x 2 heads x 4 dims x 2 bytes = 256; 3 layers.
  EXPECT_EQ(PagesBytes(layout, 5), 5u * 3 * 256);
  const Segment segment{BlobKey{PrefixHash{1, 2}}, 3, 4, 10, 9, Tier::kDram};
  EXPECT_EQ(ReadRange::FromSegment(segment), (ReadRange{BlobKey{PrefixHash{1, 2}}, 3, 4}));
}

TEST(RebuildTaskTest, OwnTokensAreTheLastPagesOfTheSequence) {
  const KvLayout layout{.num_layers = 2,
                        .num_kv_heads = 1,
                        .head_dim = 4,
                        .dtype = DType::kFloat16,
                        .page_tokens = 2,
                        .format = KvFormat::kKeyValue,
                        .tp_rank = 0,
                        .tp_world = 1};
  RebuildTask task;
  task.first_page = 2;
  task.pages = 1;
  task.sequence_tokens = {1, 2, 3, 4, 5, 6};
  EXPECT_TRUE(task.OwnTokens().empty());  // no namespace: no page size
  task.ns = Namespace::Create("acme", "m", layout).value();
  EXPECT_EQ(task.OwnTokens(), (std::vector<TokenId>{5, 6}));
  task.pages = 3;
  EXPECT_EQ(task.OwnTokens(), task.sequence_tokens);
  task.pages = 4;  // more than the sequence holds
  EXPECT_TRUE(task.OwnTokens().empty());
}

}  // namespace
}  // namespace strata
