// MemoryRegion: a registration of an existing buffer with the transport (ucp_mem_map).
//
// The node registers its whole DRAM arena once; a client may register destination buffers
// it reuses. Passing a region to Messenger::Send / IncomingData::Accept lets RDMA transports
// skip their per-transfer registration-cache lookup. Over TCP, shared memory and CMA (the
// transports on the development machine) registration is a bookkeeping no-op; UCX moves the
// bytes either way.
//
// Ownership: created by Messenger::RegisterMemory; unmaps on destruction. Does not own the
// buffer, which must outlive the region. A region keeps its messenger's UCX context alive,
// so it may outlive the Messenger (useless then, but safe).
//
// Thread-safe: const methods from any thread; destruction on any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace strata::store::transport {

class MemoryRegion {
 public:
  ~MemoryRegion();
  MemoryRegion(const MemoryRegion&) = delete;
  MemoryRegion& operator=(const MemoryRegion&) = delete;

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  // True when [p, p + n) lies inside the region.
  bool Contains(const void* p, size_t n) const;

  struct Rep;  // private; holds the UCX handle (store/transport/memory_region_rep.h)
  const Rep& rep() const { return *rep_; }

 private:
  friend class MessengerImpl;
  MemoryRegion(const uint8_t* data, size_t size, std::unique_ptr<Rep> rep);
  const uint8_t* data_;
  size_t size_;
  std::unique_ptr<Rep> rep_;
};

}  // namespace strata::store::transport
