// IdGenerator: the engine's put, lease and record ids. Each id is a bijective mix
// (SplitMix64's finalizer) of a counter plus a per-engine random secret: unique (distinct
// counters give distinct ids), never 0, and not guessable from one another (a lease id is
// what ReadSource trusts).
//
// Thread safety: Next is thread-safe and lock-free (the counter is atomic), so ids are
// taken under any lock or none. Errors: none.
#pragma once

#include <atomic>
#include <cstdint>

namespace strata::store::core {

class IdGenerator {
 public:
  explicit IdGenerator(uint64_t secret) : secret_(secret) {}
  IdGenerator(const IdGenerator&) = delete;
  IdGenerator& operator=(const IdGenerator&) = delete;

  // A new id, never 0.
  uint64_t Next() {
    uint64_t id = 0;
    while (id == 0) id = Mix(counter_.fetch_add(1, std::memory_order_relaxed) + 1 + secret_);
    return id;
  }

  // The bijection itself.
  static uint64_t Mix(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

 private:
  const uint64_t secret_;
  std::atomic<uint64_t> counter_{0};
};

}  // namespace strata::store::core
