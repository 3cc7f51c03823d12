#include "strata/tiering/tier.h"

#include <utility>

namespace strata::tiering {

void Tier::ReadBatch(std::vector<TierRead> reads, TierIoDone done) const {
  std::vector<absl::Status> statuses;
  statuses.reserve(reads.size());
  for (const TierRead& read : reads) statuses.push_back(Read(read.extent, read.offset, read.dst));
  std::move(done)(std::move(statuses));
}

void Tier::WriteBatch(std::vector<TierWrite> writes, TierIoDone done) {
  std::vector<absl::Status> statuses;
  statuses.reserve(writes.size());
  for (const TierWrite& write : writes) {
    statuses.push_back(Write(write.extent, write.offset, write.src));
  }
  std::move(done)(std::move(statuses));
}

}  // namespace strata::tiering
