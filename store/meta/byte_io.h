// Little-endian byte writing and bounds-checked reading for store/meta's record formats.
// Private to store/meta. Plain functions and a value-type reader; thread-compatible.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "absl/base/internal/endian.h"

#include "strata/radix/prefix_hash.h"

namespace strata::store::meta {

inline void PutU8(uint8_t v, std::string* out) { out->push_back(static_cast<char>(v)); }

inline void PutU32(uint32_t v, std::string* out) {
  char b[4];
  absl::little_endian::Store32(b, v);
  out->append(b, 4);
}

inline void PutU64(uint64_t v, std::string* out) {
  char b[8];
  absl::little_endian::Store64(b, v);
  out->append(b, 8);
}

// u64 hi, then u64 lo.
inline void PutHash(const radix::PrefixHash& h, std::string* out) {
  PutU64(h.hi, out);
  PutU64(h.lo, out);
}

// Reads from a byte string front to back. Every Read* returns false, consuming nothing,
// when fewer bytes remain than it needs.
class ByteReader {
 public:
  explicit ByteReader(std::string_view bytes) : rest_(bytes) {}

  size_t remaining() const { return rest_.size(); }

  bool ReadU8(uint8_t* v) {
    if (rest_.empty()) return false;
    *v = static_cast<uint8_t>(rest_[0]);
    rest_.remove_prefix(1);
    return true;
  }
  bool ReadU32(uint32_t* v) {
    if (rest_.size() < 4) return false;
    *v = absl::little_endian::Load32(rest_.data());
    rest_.remove_prefix(4);
    return true;
  }
  bool ReadU64(uint64_t* v) {
    if (rest_.size() < 8) return false;
    *v = absl::little_endian::Load64(rest_.data());
    rest_.remove_prefix(8);
    return true;
  }
  bool ReadHash(radix::PrefixHash* h) {
    if (rest_.size() < 16) return false;
    return ReadU64(&h->hi) && ReadU64(&h->lo);
  }
  bool ReadBytes(size_t n, std::string_view* out) {
    if (rest_.size() < n) return false;
    *out = rest_.substr(0, n);
    rest_.remove_prefix(n);
    return true;
  }

 private:
  std::string_view rest_;
};

}  // namespace strata::store::meta
