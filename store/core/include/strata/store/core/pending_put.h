// PendingPut: a put between BeginPut and CommitPut/AbortPut.
//
// Its BlobRecord (state kPending, id = put id) lives in the BlobTable; this holds what only
// a put needs: the whole sequence's tokens for the index insert, a pin over the parent's
// prefix path (so neither eviction nor Delete can remove the pages the blob continues
// before it commits), the received byte ranges, the deadline and whether a commit is
// verifying checksums right now. Thread-compatible; owned by the NodeEngine.
#pragma once

#include <vector>

#include "absl/time/time.h"

#include "strata/radix/radix_tree.h"
#include "strata/radix/token_span.h"
#include "strata/store/core/blob_record.h"
#include "strata/store/core/received_bytes.h"

namespace strata::store::core {

struct PendingPut {
  explicit PendingPut(BlobRecord* r) : record(r), received(r->bytes) {}

  BlobRecord* record;                    // owned by the BlobTable
  std::vector<radix::TokenId> sequence;  // pages [0, end_page) of the sequence
  radix::MatchHandle prefix_pin;         // pages [0, first_page); empty when first_page = 0
  ReceivedBytes received;
  absl::Time deadline = absl::InfinitePast();
  bool committing = false;
  uint64_t metadata_bytes = 0;  // as PutTable accounted it at Add
};

}  // namespace strata::store::core
