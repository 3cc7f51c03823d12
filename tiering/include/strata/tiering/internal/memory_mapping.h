// MemoryMapping: owns one mmap'ed region and unmaps it on destruction. Move-only.
// Not thread-safe (a plain owner, like std::unique_ptr).
#pragma once

#include <cstddef>
#include <utility>

#include <sys/mman.h>

namespace strata::tiering::internal {

class MemoryMapping {
 public:
  MemoryMapping() = default;
  // Takes ownership of [address, address + length), a region returned by mmap.
  MemoryMapping(void* address, size_t length) : address_(address), length_(length) {}
  MemoryMapping(MemoryMapping&& other) noexcept
      : address_(std::exchange(other.address_, nullptr)),
        length_(std::exchange(other.length_, 0)) {}
  MemoryMapping& operator=(MemoryMapping&& other) noexcept {
    if (this != &other) {
      Reset();
      address_ = std::exchange(other.address_, nullptr);
      length_ = std::exchange(other.length_, 0);
    }
    return *this;
  }
  MemoryMapping(const MemoryMapping&) = delete;
  MemoryMapping& operator=(const MemoryMapping&) = delete;
  ~MemoryMapping() { Reset(); }

  std::byte* data() const { return static_cast<std::byte*>(address_); }
  size_t size() const { return length_; }
  bool valid() const { return address_ != nullptr; }
  void Reset() {
    if (address_ != nullptr) ::munmap(address_, length_);
    address_ = nullptr;
    length_ = 0;
  }

 private:
  void* address_ = nullptr;
  size_t length_ = 0;
};

}  // namespace strata::tiering::internal
