// Tier: one place where blob bytes can live (HBM, DRAM, SSD).
//
// A tier is a byte store carved into extents. The node engine asks a tier for an extent
// big enough for a blob (Allocate), moves the blob's bytes in and out (Write / Read or
// the batch forms), and gives the extent back when the blob leaves the tier (Free). A
// tier never sees blob keys: which blob lives in which extent, and whether a read was a
// hit, is the engine's bookkeeping (it bumps counters()).
//
// Ownership: the tier owns its storage and its counters. An Extent is a plain value; the
// caller that received it from Allocate "holds" it until it passes it to Free.
//
// Thread safety: every method of every implementation is safe to call concurrently.
// Reads and writes of different extents never block each other on a lock; reading and
// writing the same bytes at once is a data race the caller must avoid (blobs are
// immutable once committed, so in practice one writer fills an extent before readers
// are told about it).
//
// Errors (each implementation returns exactly these):
//   Allocate  INVALID_ARGUMENT    bytes == 0 or above the tier's largest extent
//             RESOURCE_EXHAUSTED  no free extent fits (the tier is full or too fragmented)
//   Write,    INVALID_ARGUMENT    the extent is empty or does not lie inside this tier
//   Read      OUT_OF_RANGE        [offset, offset + size) does not lie inside the extent
//             and, for the SSD tier (tiering/io/ssd_tier.h), I/O failures:
//             DATA_LOSS           a read failed (EIO) or came back short
//             UNAVAILABLE         a write failed (EIO; the bytes are undefined) or the
//                                 kernel kept asking to retry (EAGAIN / EINTR)
//             RESOURCE_EXHAUSTED  out of space on a sparse file (ENOSPC, EDQUOT, EFBIG)
//             A tier returns the bytes it holds without verifying them (corrupt bytes
//             come back with OK; blob checksums above the tiers catch them).
//   Free      -                   REQUIRES: a live extent of this tier (CHECK-fails if not)
//
// Synchronous and batched I/O. Read and Write are synchronous: they return once the bytes
// have moved. For DRAM (and HBM through a staging copy) that is all there is. An SSD tier
// on io_uring wants many operations in flight and batched submission, so every tier also
// offers ReadBatch / WriteBatch: the caller hands over a batch of operations and a
// completion that is called exactly once with one status per operation. The default
// implementation here runs the operations one after the other with Read / Write and calls
// the completion inline, before returning; the SSD tier overrides the batch forms to
// submit one io_uring batch and completes from its reaper thread. Code that moves bytes
// between tiers (promotion, demotion, the data plane) should therefore use the batch forms
// and must not assume where or when the completion runs; code that only touches DRAM may
// use the synchronous forms. Buffers named in a batch must stay valid until its
// completion has run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"

#include "strata/report/tier.h"
#include "strata/tiering/tier_stats.h"

namespace strata::tiering {

// A contiguous byte range [offset, offset + length) of one tier, as handed out by
// Tier::Allocate. `length` is the granted size: the request rounded up to the tier's
// allocation granule.
struct Extent {
  uint64_t offset = 0;
  uint64_t length = 0;

  uint64_t end() const { return offset + length; }
  friend bool operator==(const Extent&, const Extent&) = default;
};

// One operation of a batch: copy between [offset, offset + buffer.size()) of `extent`
// and a caller's buffer.
struct TierRead {
  Extent extent;
  uint64_t offset = 0;
  absl::Span<std::byte> dst;
};
struct TierWrite {
  Extent extent;
  uint64_t offset = 0;
  absl::Span<const std::byte> src;
};

// Called exactly once per batch, with statuses[i] the outcome of operation i.
using TierIoDone = absl::AnyInvocable<void(std::vector<absl::Status> statuses) &&>;

class Tier {
 public:
  virtual ~Tier() = default;

  // Which tier this is: a byte tier of the one tier enum (report::Tier::kHbm, kDram or
  // kSsd; report::TierName names it).
  virtual report::Tier kind() const = 0;
  // Total bytes the tier can hold.
  virtual uint64_t capacity() const = 0;

  // Reserves an extent of at least `bytes` bytes. See the error table above.
  virtual absl::StatusOr<Extent> Allocate(uint64_t bytes) = 0;
  // Returns an extent to the tier. REQUIRES: `extent` is live (returned by this tier's
  // Allocate and not freed since) and no I/O on it is in flight.
  virtual void Free(const Extent& extent) = 0;

  // Copies `src` into the extent at `offset`.
  virtual absl::Status Write(const Extent& extent, uint64_t offset,
                             absl::Span<const std::byte> src) = 0;
  // Copies dst.size() bytes from the extent at `offset` into `dst`.
  virtual absl::Status Read(const Extent& extent, uint64_t offset,
                            absl::Span<std::byte> dst) const = 0;

  // Batched forms (see the header comment). The defaults run synchronously and call
  // `done` before returning.
  virtual void ReadBatch(std::vector<TierRead> reads, TierIoDone done) const;
  virtual void WriteBatch(std::vector<TierWrite> writes, TierIoDone done);

  // Marks `extent` live again without touching its bytes: a restarted node takes back the
  // extents its metadata names before it allocates anything. Errors are the
  // implementation's (an SSD tier: INVALID_ARGUMENT misaligned or outside, ALREADY_EXISTS
  // or FAILED_PRECONDITION overlapping a live extent); the default (volatile tiers, whose
  // bytes do not survive a restart) is UNIMPLEMENTED.
  virtual absl::Status Reserve(const Extent& extent) {
    return absl::UnimplementedError("this tier keeps nothing across restarts");
  }

  // Makes every completed write durable (an SSD tier: fdatasync). A blob becomes visible
  // in a tier only after this returns OK for its bytes. The default (volatile tiers) does
  // nothing.
  virtual absl::Status Flush() { return absl::OkStatus(); }

  // Capacity, occupancy and the event counts of counters().
  virtual TierStats Stats() const = 0;
  // The event counters the node engine bumps for this tier.
  virtual TierCounters& counters() = 0;
};

}  // namespace strata::tiering
