// Stream: the RAII owner of one ordered queue of asynchronous device work
// (copies, memsets, kernels, event records). Work enqueued on one stream runs in
// the order it was enqueued; work on different streams may run concurrently and
// is ordered only through events (Event::Record + Device::WaitForEvent).
//
// Made by Device::CreateStream and usable only with that Device: passing it to
// another Device's methods returns INVALID_ARGUMENT.
//
// Ownership: move-only; destruction releases the queue through its Device. Work
// still queued completes (as with cudaStreamDestroy) but nobody can wait for it
// any more, so synchronize first if its results matter. A moved-from or
// default-constructed Stream is empty; Device methods reject an empty stream with
// INVALID_ARGUMENT.
//
// REQUIRES: the Device that made a stream outlives it.
//
// Thread safety: a Stream is a handle; several threads may enqueue on the same
// stream through the (thread-safe) Device, but the relative order of calls that
// race is then unspecified. Moving or destroying a Stream needs exclusive access.
#pragma once

namespace strata::gpu {

class Device;

class Stream {
 public:
  Stream() = default;
  Stream(Stream&& other) noexcept;
  Stream& operator=(Stream&& other) noexcept;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream();

  bool empty() const { return handle_ == nullptr; }
  // The Device that made this stream; nullptr when empty.
  Device* device() const { return owner_; }

  // Releases the queue now; the stream becomes empty. No-op when already empty.
  void Reset();

 private:
  friend class Device;
  Stream(Device* owner, void* handle) : owner_(owner), handle_(handle) {}

  Device* owner_ = nullptr;
  void* handle_ = nullptr;  // opaque to everyone but the owning Device
};

}  // namespace strata::gpu
