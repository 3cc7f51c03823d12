#include "store/meta/bench/bench_records.h"

#include <algorithm>
#include <cmath>

namespace strata::store::meta::bench {
namespace {

constexpr radix::TokenId kImStart = 151644;
constexpr radix::TokenId kImEnd = 151645;
constexpr radix::TokenId kUser = 872;
constexpr radix::TokenId kAssistant = 77091;
constexpr radix::TokenId kNewline = 198;

// The cumulative Zipf(1.1) distribution over ranks 1..kVocabulary, built once.
const std::vector<double>& ZipfCdf() {
  static const std::vector<double>* cdf = [] {
    auto* v = new std::vector<double>(kVocabulary);
    double sum = 0;
    for (uint32_t r = 0; r < kVocabulary; ++r) {
      sum += 1.0 / std::pow(static_cast<double>(r + 1), 1.1);
      (*v)[r] = sum;
    }
    for (double& x : *v) x /= sum;
    return v;
  }();
  return *cdf;
}

}  // namespace

const char* TokenStreamName(TokenStream stream) {
  switch (stream) {
    case TokenStream::kUniform:
      return "uniform";
    case TokenStream::kZipf:
      return "zipf";
    case TokenStream::kChat:
      return "chat";
  }
  return "?";
}

TokenSource::TokenSource(TokenStream stream, uint64_t seed) : stream_(stream), rng_(seed) {
  NewSession();
}

void TokenSource::NewSession() {
  if (stream_ != TokenStream::kChat) return;
  // A fixed system prompt: the same 64 tokens at every session start.
  std::mt19937_64 fixed(1234);
  pending_ = {kImStart, 8948, kNewline};  // <|im_start|>system\n
  for (int i = 0; i < 58; ++i) {
    pending_.push_back(static_cast<radix::TokenId>(fixed() % 20000));
  }
  pending_.insert(pending_.end(), {kImEnd, kNewline, kImStart});
  std::reverse(pending_.begin(), pending_.end());  // popped from the back
  content_left_ = 0;
}

radix::TokenId TokenSource::Zipf() {
  const std::vector<double>& cdf = ZipfCdf();
  const double u = std::uniform_real_distribution<double>(0, 1)(rng_);
  return static_cast<radix::TokenId>(std::lower_bound(cdf.begin(), cdf.end(), u) - cdf.begin());
}

radix::TokenId TokenSource::Next() {
  switch (stream_) {
    case TokenStream::kUniform:
      return static_cast<radix::TokenId>(rng_() % kVocabulary);
    case TokenStream::kZipf:
      return Zipf();
    case TokenStream::kChat:
      break;
  }
  if (!pending_.empty()) {
    const radix::TokenId t = pending_.back();
    pending_.pop_back();
    return t;
  }
  if (content_left_ == 0) {
    // Close this turn and open the next: <|im_end|>\n<|im_start|>{user|assistant}\n.
    const radix::TokenId role = rng_() % 2 ? kUser : kAssistant;
    pending_ = {kNewline, role, kImStart, kNewline, kImEnd};
    content_left_ = 20 + static_cast<int>(rng_() % 61);
    return Next();
  }
  --content_left_;
  return Zipf();
}

void TokenSource::Append(size_t n, std::vector<radix::TokenId>* out) {
  for (size_t i = 0; i < n; ++i) out->push_back(Next());
}

RecordSource::RecordSource(const RecordShape& shape, const radix::PrefixHash& namespace_hash,
                           uint64_t seed)
    : shape_(shape),
      namespace_hash_(namespace_hash),
      rng_(seed),
      tokens_(TokenStream::kChat, seed + 1) {}

BlobMeta RecordSource::Next() {
  for (;;) {
    BlobMeta m = NextInSession();
    // A key already made (a session's first page is the shared system prompt) is one the
    // node already has: it continues the chain without a new record.
    if (made_.insert(m.key).second) return m;
  }
}

BlobMeta RecordSource::NextInSession() {
  if (session_left_ == 0) {
    session_left_ = 1 + static_cast<int>(rng_() % 16);
    parent_.reset();
    start_hash_ = namespace_hash_;
    next_page_ = 0;
    tokens_.NewSession();
  }
  --session_left_;
  BlobMeta m;
  m.namespace_hash = namespace_hash_;
  m.parent = parent_;
  m.start_hash = start_hash_;
  m.first_page = next_page_;
  m.pages = 1 + static_cast<uint32_t>(rng_() % shape_.max_pages);
  tokens_.Append(size_t{m.pages} * shape_.page_tokens, &m.tokens);
  m.key.hash = radix::PrefixHashAt(start_hash_, m.tokens, shape_.page_tokens);
  // 8 KV heads of 128 bf16 elements, K and V.
  m.bytes = uint64_t{m.pages} * shape_.num_layers * shape_.page_tokens * 8 * 128 * 2 * 2;
  m.checksums.resize(size_t{m.pages} * shape_.num_layers);
  for (uint64_t& c : m.checksums) c = rng_();
  m.in_dram = true;
  if (rng_() % 2) m.ssd = SsdLocation{(rng_() % (uint64_t{1} << 30)) << 12, m.bytes};
  m.created = absl::FromUnixNanos(1'760'000'000'000'000'000 +
                                  static_cast<int64_t>(generation_) * 1'000'003);
  m.last_access = m.created + absl::Milliseconds(static_cast<int64_t>(rng_() % 100000));
  m.hits = rng_() % 8;
  m.generation = ++generation_;

  parent_ = BlobMetaParent{m.key, m.first_page + m.pages};
  start_hash_ = m.key.hash;
  next_page_ = m.first_page + m.pages;
  return m;
}

}  // namespace strata::store::meta::bench
