#include "strata/tiering/admission_policy.h"

#include <memory>

#include "gtest/gtest.h"

#include "strata/base/status_test_macros.h"
#include "strata/tiering/reuse_admission.h"

namespace strata::tiering {
namespace {

BlobTraits Candidate(uint32_t first_page, uint32_t pages, uint32_t page_tokens = 16) {
  return BlobTraits{
      .bytes = 4096, .first_page = first_page, .pages = pages, .page_tokens = page_tokens};
}

BlobAccessStats Stats(uint64_t reads, uint64_t previous_read_tick, uint64_t now_tick) {
  return BlobAccessStats{.reads = reads,
                         .insert_tick = 0,
                         .previous_read_tick = previous_read_tick,
                         .now_tick = now_tick};
}

TEST(AdmissionPolicyTest, AlwaysMovesEverything) {
  AlwaysAdmission always;
  EXPECT_EQ(always.name(), "always");
  EXPECT_TRUE(always.ShouldDemote(Candidate(0, 1), Stats(0, 0, 0)));
  EXPECT_TRUE(always.ShouldPromote(Candidate(0, 1), Stats(1, 0, 1u << 30)));
}

TEST(AdmissionPolicyTest, ReuseDemotesReadOrDeepBlobsOnly) {
  ReuseAdmission reuse(ReuseAdmissionOptions{
      .demote_min_reads = 1, .demote_min_depth_tokens = 1024, .promote_window_ticks = 100});
  EXPECT_EQ(reuse.name(), "reuse");
  // Written once, never read, shallow: drop to TEXT.
  EXPECT_FALSE(reuse.ShouldDemote(Candidate(0, 4), Stats(0, 0, 50)));
  // Read once: worth an SSD write.
  EXPECT_TRUE(reuse.ShouldDemote(Candidate(0, 4), Stats(1, 10, 50)));
  // Never read, but ending at token 1024 (63 + 1 pages of 16): deep enough.
  EXPECT_FALSE(reuse.ShouldDemote(Candidate(62, 1), Stats(0, 0, 50)));
  EXPECT_TRUE(reuse.ShouldDemote(Candidate(63, 1), Stats(0, 0, 50)));
  // Unknown page size: judged on reads alone.
  EXPECT_FALSE(reuse.ShouldDemote(Candidate(1000, 1, /*page_tokens=*/0), Stats(0, 0, 50)));
  // Depth never qualifies when the option is off.
  ReuseAdmission reads_only(
      ReuseAdmissionOptions{.demote_min_reads = 2, .demote_min_depth_tokens = 0});
  EXPECT_FALSE(reads_only.ShouldDemote(Candidate(1000, 1), Stats(1, 0, 50)));
  EXPECT_TRUE(reads_only.ShouldDemote(Candidate(1000, 1), Stats(2, 0, 50)));
}

TEST(AdmissionPolicyTest, ReusePromotesOnASecondReadWithinTheWindow) {
  ReuseAdmission reuse(ReuseAdmissionOptions{.promote_window_ticks = 100});
  // The first read (the current one is counted) stays on SSD.
  EXPECT_FALSE(reuse.ShouldPromote(Candidate(0, 1), Stats(1, 0, 10)));
  // A second read 100 ticks after the first: promote; 101: too far apart.
  EXPECT_TRUE(reuse.ShouldPromote(Candidate(0, 1), Stats(2, 400, 500)));
  EXPECT_FALSE(reuse.ShouldPromote(Candidate(0, 1), Stats(2, 399, 500)));
  EXPECT_TRUE(reuse.ShouldPromote(Candidate(0, 1), Stats(7, 500, 500)));
  // A clock that went backwards (bad input) never promotes.
  EXPECT_FALSE(reuse.ShouldPromote(Candidate(0, 1), Stats(3, 600, 500)));
}

TEST(AdmissionPolicyTest, FactoryKnowsBothAndRejectsTheRest) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<AdmissionPolicy> always, MakeAdmissionPolicy("always"));
  EXPECT_EQ(always->name(), "always");
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<AdmissionPolicy> reuse, MakeAdmissionPolicy("reuse"));
  EXPECT_EQ(reuse->name(), "reuse");
  EXPECT_CODE(MakeAdmissionPolicy("lru"), absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(MakeAdmissionPolicy(""), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace strata::tiering
