// Chunk checksums as the engine uses them: radix's (strata/radix/chunk_checksum.h, where the
// definition, the layout table and the errors are), named in store::core for its callers.
#pragma once

#include "strata/radix/chunk_checksum.h"

namespace strata::store::core {

using radix::BlobChecksum;
using radix::ChunkChecksum;
using radix::ChunkIndex;
using radix::ComputeChunkChecksums;

}  // namespace strata::store::core
