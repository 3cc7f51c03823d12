// What store/core's one-shot benchmark programs share: aborting on a status, a key mixer,
// a KV layout from its shape, and `--name=value` flags. Header-only; benchmarks only.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "glog/logging.h"

#include "strata/radix/kv_layout.h"

// Aborts with the status on error (a benchmark has nothing to recover).
#define BENCH_CHECK_OK(expr)                                     \
  do {                                                           \
    const absl::Status bench_status_ = (expr);                   \
    CHECK(bench_status_.ok()) << #expr << ": " << bench_status_; \
  } while (false)

namespace strata::store::core::bench {

// splitmix64's finalizer.
inline uint64_t Mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// A float16 K/V layout of one TP rank.
inline radix::KvLayout Fp16Layout(uint32_t layers, uint32_t heads, uint32_t head_dim,
                                  uint32_t page_tokens) {
  return radix::KvLayout{.num_layers = layers,
                         .num_kv_heads = heads,
                         .head_dim = head_dim,
                         .dtype = radix::DType::kFloat16,
                         .page_tokens = page_tokens,
                         .format = radix::KvFormat::kKeyValue,
                         .tp_rank = 0,
                         .tp_world = 1};
}

// The value of `arg` if it is --name=VALUE with a non-empty VALUE, else empty.
inline absl::string_view FlagValue(absl::string_view arg, absl::string_view name) {
  const std::string prefix = absl::StrCat("--", name, "=");
  return absl::StartsWith(arg, prefix) ? arg.substr(prefix.size()) : absl::string_view();
}

}  // namespace strata::store::core::bench
