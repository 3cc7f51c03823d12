#include "strata/tiering/internal/prefault.h"

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <sys/mman.h>
#include <unistd.h>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "strata/base/status_test_macros.h"
#include "strata/tiering/internal/memory_mapping.h"
#include "strata/tiering/internal/unique_fd.h"

namespace strata::tiering::internal {
namespace {

constexpr size_t kPage = 4096;

// A shared, writable mapping of `mapped` bytes over a fresh memfd of `file` bytes.
struct MappedFile {
  UniqueFd fd;
  MemoryMapping mapping;
};

MappedFile MapFreshFile(size_t file, size_t mapped) {
  MappedFile result;
  result.fd = UniqueFd(::memfd_create("strata-prefault-test", MFD_CLOEXEC));
  EXPECT_TRUE(result.fd.valid()) << std::strerror(errno);
  EXPECT_EQ(::ftruncate(result.fd.get(), static_cast<off_t>(file)), 0) << std::strerror(errno);
  void* address = ::mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_SHARED, result.fd.get(), 0);
  EXPECT_NE(address, MAP_FAILED) << std::strerror(errno);
  if (address != MAP_FAILED) result.mapping = MemoryMapping(address, mapped);
  return result;
}

// Pages of `mapping` that are in memory, by mincore(2).
size_t ResidentPages(const MemoryMapping& mapping) {
  std::vector<unsigned char> residency(mapping.size() / kPage);
  EXPECT_EQ(::mincore(mapping.data(), mapping.size(), residency.data()), 0);
  size_t resident = 0;
  for (unsigned char page : residency) resident += page & 1;
  return resident;
}

bool KernelHasPopulateWrite() {
#ifdef MADV_POPULATE_WRITE
  MemoryMapping probe(
      ::mmap(nullptr, kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), kPage);
  return ::madvise(probe.data(), 0, MADV_POPULATE_WRITE) == 0;
#else
  return false;
#endif
}

TEST(PrefaultTest, EveryPageIsResidentAfterwards) {
  constexpr size_t kBytes = 4 << 20;
  MappedFile file = MapFreshFile(kBytes, kBytes);
  ASSERT_TRUE(file.mapping.valid());
  EXPECT_EQ(ResidentPages(file.mapping), 0u);
  ASSERT_OK(PrefaultForWrite(file.mapping.data(), file.mapping.size()));
  EXPECT_EQ(ResidentPages(file.mapping), kBytes / kPage);
  EXPECT_OK(PrefaultForWrite(file.mapping.data(), 0));
}

TEST(PrefaultTest, PageThatCannotBeBackedIsAnErrorNotSigbus) {
  if (!KernelHasPopulateWrite()) {
    GTEST_SKIP() << "kernel lacks MADV_POPULATE_WRITE: the touch fallback is the only way";
  }
  // The mapping runs one page past the end of its file: touching that page raises SIGBUS,
  // MADV_POPULATE_WRITE reports EFAULT. The error must come back instead of a touch.
  MappedFile file = MapFreshFile(kPage, 2 * kPage);
  ASSERT_TRUE(file.mapping.valid());
  const absl::Status status = PrefaultForWrite(file.mapping.data(), file.mapping.size());
  EXPECT_CODE(status, absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), ::testing::HasSubstr("MADV_POPULATE_WRITE"));
}

TEST(PrefaultTest, ReadOnlyMappingIsAnErrorNotSegfault) {
  if (!KernelHasPopulateWrite()) {
    GTEST_SKIP() << "kernel lacks MADV_POPULATE_WRITE: the touch fallback is the only way";
  }
  // EINVAL from a known advice (a mapping without PROT_WRITE) must not take the fallback,
  // which would write to the read-only page.
  MappedFile file = MapFreshFile(kPage, kPage);
  ASSERT_TRUE(file.mapping.valid());
  ASSERT_EQ(::mprotect(file.mapping.data(), kPage, PROT_READ), 0);
  EXPECT_CODE(PrefaultForWrite(file.mapping.data(), kPage), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace strata::tiering::internal
