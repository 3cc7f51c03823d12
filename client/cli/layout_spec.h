// Layout specs: a radix::KvLayout written on one command line.
//
//   layers=32,kv_heads=8,head_dim=128,dtype=bf16,page_tokens=16,format=kv,tp=0/1
//
//   key          value                                             required
//   -----------  ------------------------------------------------  -------------------
//   layers       KvLayout::num_layers                              yes
//   kv_heads     KvLayout::num_kv_heads (per TP rank; 1 for mla)    yes
//   head_dim     KvLayout::head_dim                                yes
//   dtype        a name radix::ParseDType takes: bf16, bfloat16,   yes
//                fp16, float16, fp32, fp8_e4m3, fp8_e5m2, int8, ...
//   page_tokens  KvLayout::page_tokens                             yes
//   format       kv (= key_value) or mla (= mla_latent)            no, default kv
//   tp           RANK/WORLD                                        no, default 0/1
//
// Pairs are separated by commas, in any order, each key at most once; blanks around keys
// and values are ignored. The result is checked with KvLayout::Validate().
//
// Errors: ParseLayoutSpec returns INVALID_ARGUMENT naming the key or value (unknown key,
// key given twice, missing key, a value that does not parse, a field outside radix's
// limits). Pure functions; thread-safe.
#pragma once

#include <string>

#include "absl/status/statusor.h"

#include "strata/radix/kv_layout.h"

namespace strata::cli {

absl::StatusOr<radix::KvLayout> ParseLayoutSpec(const std::string& spec);

// The spec of `layout` with every key, in the order of the table above, dtype by its
// canonical name: ParseLayoutSpec(FormatLayoutSpec(l)) == l for every valid l.
std::string FormatLayoutSpec(const radix::KvLayout& layout);

}  // namespace strata::cli
