// The workload of meta_bench: realistic token streams and blob records.
//
// Token streams (vocabulary 152064, Qwen2's):
//   kUniform  ids uniform in [0, 152064): the worst case for every codec
//   kZipf     ids drawn from Zipf(s = 1.1) over ranks, id = rank: BPE vocabularies number
//             frequent tokens low, so natural text looks like this
//   kChat     kZipf content inside a chat template: every 20-80 content tokens a turn
//             closes and opens (<|im_end|> \n <|im_start|> assistant \n ...: ids 151644,
//             151645, 872, 77091, 198), and a 64-token system prompt repeats at each
//             session start
//
// Blob records: sessions of 1..16 blobs, each blob 1..max_pages pages of page_tokens
// tokens from a kChat stream, chained by real prefix hashes (key = PrefixHashAt(start_hash,
// tokens)), each blob's parent the previous blob of its session; num_layers * pages random
// chunk checksums; half on SSD. A key made before (sessions share their first page, the
// system prompt) is not made again, as the node would not write it twice. Deterministic for
// a seed. Thread-compatible.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <vector>

#include "absl/container/flat_hash_set.h"

#include "strata/radix/blob_key.h"
#include "strata/radix/prefix_hash.h"
#include "strata/radix/token_span.h"
#include "strata/store/meta/blob_meta.h"

namespace strata::store::meta::bench {

inline constexpr uint32_t kVocabulary = 152064;

enum class TokenStream { kUniform, kZipf, kChat };
const char* TokenStreamName(TokenStream stream);

class TokenSource {
 public:
  TokenSource(TokenStream stream, uint64_t seed);
  // Appends n tokens of the stream to *out.
  void Append(size_t n, std::vector<radix::TokenId>* out);
  // Starts a new session (kChat: the system prompt comes next).
  void NewSession();

 private:
  radix::TokenId Next();
  radix::TokenId Zipf();

  TokenStream stream_;
  std::mt19937_64 rng_;
  std::vector<radix::TokenId> pending_;  // template tokens to emit before more content
  int content_left_ = 0;
};

struct RecordShape {
  uint32_t page_tokens = 32;
  uint32_t max_pages = 4;
  uint32_t num_layers = 32;
};

class RecordSource {
 public:
  RecordSource(const RecordShape& shape, const radix::PrefixHash& namespace_hash, uint64_t seed);
  // The next record with a key not made before.
  BlobMeta Next();

 private:
  BlobMeta NextInSession();

  RecordShape shape_;
  radix::PrefixHash namespace_hash_;
  std::mt19937_64 rng_;
  TokenSource tokens_;
  int session_left_ = 0;
  std::optional<BlobMetaParent> parent_;
  radix::PrefixHash start_hash_;
  uint32_t next_page_ = 0;
  uint64_t generation_ = 0;
  absl::flat_hash_set<radix::BlobKey> made_;
};

}  // namespace strata::store::meta::bench
