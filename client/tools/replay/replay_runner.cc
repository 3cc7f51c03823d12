#include "client/tools/replay/replay_runner.h"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <deque>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

#include "client/tools/replay/trace_pages.h"
#include "strata/radix/prefix_hash.h"
#include "strata/tiering/mrc/page_keys.h"

namespace strata::replay {
namespace {

using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// What one request did; merged into ReplayResult under the runner's lock.
struct Outcome {
  std::array<LookupTally, kPhases> phases;
  uint64_t bytes_read = 0, pages_read = 0, bytes_written = 0, pages_written = 0;
  uint64_t puts = 0, puts_existed = 0;
  std::optional<double> match_ms, read_ms, put_ms;
  std::vector<double> decode_ms;
  std::vector<std::string> errors;
  std::string error_message;  // the failed call's message
  RequestRecord record;
};

class Runner {
 public:
  Runner(const ReplayConfig& config, const tiering::sim::ReplayTrace& trace,
         const std::vector<uint64_t>& input_tokens, tools::KvStore& store, radix::Namespace ns)
      : config_(config),
        trace_(trace),
        input_tokens_(input_tokens),
        store_(store),
        ns_(std::move(ns)),
        h0_(radix::NamespaceHash(ns_)),
        page_bytes_(ns_.layout().BytesPerPage()) {}

  ReplayResult Run() {
    const size_t n = config_.max_requests == 0
                         ? trace_.requests.size()
                         : std::min<size_t>(config_.max_requests, trace_.requests.size());
    ComputeWriters(n);
    {
      absl::MutexLock lock(&mu_);
      done_.assign(n, false);
      result_.records.resize(n);
    }
    // Trace time counts from the first request (a trace may carry epoch timestamps).
    double t0_ms = 0;
    for (size_t r = 0; r < n; ++r) {
      t0_ms = r == 0 ? trace_.requests[r].timestamp_ms
                     : std::min(t0_ms, trace_.requests[r].timestamp_ms);
    }
    const auto start = start_ = Clock::now();
    std::vector<std::thread> workers;
    for (int i = 0; i < config_.concurrency; ++i) workers.emplace_back([this] { WorkerLoop(); });
    for (size_t r = 0; r < n; ++r) {
      // Honour the (scaled) trace clock.
      if (config_.speedup > 0) {
        const double due_ms = (trace_.requests[r].timestamp_ms - t0_ms) / config_.speedup;
        const double now_ms = MsSince(start);
        if (due_ms > now_ms) absl::SleepFor(absl::Milliseconds(due_ms - now_ms));
      }
      absl::MutexLock lock(&mu_);
      // Wait for a free worker and for the requests that introduced this one's blocks.
      auto ready = [this, r]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        if (queue_.size() + running_ >= static_cast<size_t>(config_.concurrency)) return false;
        for (size_t w : writers_[r]) {
          if (!done_[w]) return false;
        }
        return true;
      };
      mu_.Await(absl::Condition(&ready));
      if (config_.speedup > 0) {
        const double lag =
            MsSince(start) - (trace_.requests[r].timestamp_ms - t0_ms) / config_.speedup;
        result_.max_dispatch_lag_ms = std::max(result_.max_dispatch_lag_ms, lag);
      }
      queue_.push_back(r);
    }
    {
      absl::MutexLock lock(&mu_);
      closed_ = true;
    }
    for (std::thread& t : workers) t.join();
    absl::MutexLock lock(&mu_);
    result_.requests = n;
    result_.wall_s = MsSince(start) / 1000;
    return std::move(result_);
  }

 private:
  // writers_[r]: the earlier requests that first contained one of r's blocks.
  void ComputeWriters(size_t n) {
    absl::flat_hash_map<uint64_t, size_t> first;
    writers_.assign(n, {});
    seen_before_.assign(n, false);
    for (size_t r = 0; r < n; ++r) {
      for (uint64_t b : trace_.requests[r].blocks) {
        auto [it, inserted] = first.emplace(b, r);
        if (!inserted) {
          seen_before_[r] = true;
          if (std::find(writers_[r].begin(), writers_[r].end(), it->second) == writers_[r].end()) {
            writers_[r].push_back(it->second);
          }
        }
      }
    }
  }

  void WorkerLoop() {
    std::vector<std::byte> buffer;  // read destination and write source, reused
    while (true) {
      size_t r;
      {
        absl::MutexLock lock(&mu_);
        auto has_work = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
          return !queue_.empty() || closed_;
        };
        mu_.Await(absl::Condition(&has_work));
        if (queue_.empty()) return;
        r = queue_.front();
        queue_.pop_front();
        ++running_;
      }
      const auto t0 = Clock::now();
      Outcome out = Replay(r, buffer);
      const double request_ms = MsSince(t0);
      Merge(r, std::move(out), request_ms);
    }
  }

  CallOptions Call() const {
    return CallOptions::WithTimeout(absl::Seconds(config_.call_timeout_s));
  }

  // A Match, counted in `tally`; its whole pages go to the exact curve when the node
  // answered OK. NOT_FOUND (unknown namespace) is a miss of every page.
  absl::StatusOr<tools::KvStore::Lookup> CountedMatch(absl::Span<const TokenId> tokens,
                                                      LookupPhase phase, uint64_t input_tokens,
                                                      LookupTally& tally, double* ms) {
    const auto t0 = Clock::now();
    absl::StatusOr<tools::KvStore::Lookup> m = store_.Match(ns_, tokens, phase, Call());
    *ms = MsSince(t0);
    const uint32_t pages = static_cast<uint32_t>(tokens.size() / ns_.layout().page_tokens);
    if (m.ok()) {
      // Keyed as the node keys its live curve (tiering/mrc/page_keys.h).
      std::vector<uint64_t> keys;
      tiering::mrc::AppendPrefixPageKeys(h0_.lo ^ h0_.hi, tokens, ns_.layout().page_tokens, &keys);
      absl::MutexLock lock(&exact_mu_);
      for (const uint64_t key : keys) exact_.Access(key, page_bytes_);
    } else if (m.status().code() == absl::StatusCode::kNotFound) {
      m = tools::KvStore::Lookup{};
    } else {
      return m.status();
    }
    ++tally.lookups;
    tally.queried_pages += pages;
    tally.queried_tokens += input_tokens;
    tally.hit_tokens += uint64_t{m->match.matched_pages} * ns_.layout().page_tokens;
    tally.readable_pages += m->match.ReadablePages();
    for (const Segment& s : m->match.segments) {
      switch (s.tier) {
        case Tier::kSsd:
          tally.ssd_pages += s.page_count;
          break;
        case Tier::kText:
          tally.text_pages += s.page_count;
          break;
        default:
          tally.dram_pages += s.page_count;
          break;
      }
    }
    return m;
  }

  Outcome Replay(size_t r, std::vector<std::byte>& buffer) {
    Outcome out;
    const tiering::sim::ReplayRequest& req = trace_.requests[r];
    const uint32_t pt = ns_.layout().page_tokens;
    const uint32_t pages = static_cast<uint32_t>(req.blocks.size());
    std::vector<TokenId> tokens(size_t{pages} * pt);
    for (uint32_t i = 0; i < pages; ++i) {
      BlockTokens(req.blocks[i], config_.seed, absl::MakeSpan(tokens).subspan(size_t{i} * pt, pt));
    }
    const int phase = seen_before_[r] ? kMidfillPhase : kPrefillPhase;
    out.record = {req.timestamp_ms, phase, pages, 0, false};
    auto fail = [&out](absl::string_view what, const absl::Status& s) {
      out.errors.push_back(absl::StrCat(absl::StatusCodeToString(s.code()), " (", what, ")"));
      out.error_message = std::string(s.message());
      return std::move(out);
    };
    if (pages == 0) {
      out.record.ok = true;
      return out;
    }
    double ms = 0;
    absl::StatusOr<tools::KvStore::Lookup> m =
        CountedMatch(tokens, phase == kPrefillPhase ? LookupPhase::kPrefill : LookupPhase::kMidfill,
                     input_tokens_[r], out.phases[phase], &ms);
    if (!m.ok()) return fail("match", m.status());
    out.match_ms = ms;
    out.record.hit_pages = m->match.matched_pages;
    const uint32_t readable = m->match.ReadablePages();
    out.record.readable_pages = readable;
    if (readable > 0) {
      const size_t bytes = PagesBytes(ns_.layout(), readable);
      if (buffer.size() < bytes) buffer.resize(bytes);
      const auto t0 = Clock::now();
      absl::Status s =
          store_.Read(ns_, *m, readable, MemoryDescriptor::Host(buffer.data(), bytes), Call());
      if (!s.ok()) return fail("read", s);
      out.read_ms = MsSince(t0);
      out.bytes_read += bytes;
      out.pages_read += readable;
    }
    if (pages > readable) {
      const uint32_t count = pages - readable;
      const size_t bytes = PagesBytes(ns_.layout(), count);
      if (buffer.size() < bytes) buffer.resize(bytes);
      FillBlobBytes(absl::MakeConstSpan(req.blocks).subspan(readable, count), ns_.layout(),
                    config_.seed, absl::MakeSpan(buffer.data(), bytes));
      const auto t0 = Clock::now();
      absl::StatusOr<WriteResult> w =
          store_.Write(ns_, tokens, readable,
                       MemoryDescriptor::Host(static_cast<const void*>(buffer.data()), bytes),
                       tools::ParentAt(*m, readable), Call());
      if (!w.ok()) return fail("put", w.status());
      out.put_ms = MsSince(t0);
      ++out.puts;
      if (w->existed) {
        ++out.puts_existed;
      } else {
        out.bytes_written += bytes;
        out.pages_written += count;
      }
    }
    for (uint32_t d = 0; d < config_.decode_lookups; ++d) {
      absl::StatusOr<tools::KvStore::Lookup> dm = CountedMatch(
          tokens, LookupPhase::kDecode, input_tokens_[r], out.phases[kDecodePhase], &ms);
      if (!dm.ok()) return fail("decode match", dm.status());
      out.decode_ms.push_back(ms);
    }
    out.record.ok = true;
    return out;
  }

  void Merge(size_t r, Outcome out, double request_ms) {
    absl::MutexLock lock(&mu_);
    for (int p = 0; p < kPhases; ++p) result_.phases[p].Add(out.phases[p]);
    result_.bytes_read += out.bytes_read;
    result_.pages_read += out.pages_read;
    result_.bytes_written += out.bytes_written;
    result_.pages_written += out.pages_written;
    result_.puts += out.puts;
    result_.puts_existed += out.puts_existed;
    if (out.match_ms) result_.match_ms.push_back(*out.match_ms);
    for (double d : out.decode_ms) result_.match_ms.push_back(d);
    if (out.read_ms) result_.read_ms.push_back(*out.read_ms);
    if (out.put_ms) result_.put_ms.push_back(*out.put_ms);
    for (const std::string& e : out.errors) {
      if (++result_.errors[e] == 1) result_.error_samples[e] = out.error_message;
    }
    if (out.record.ok) {
      result_.request_ms.push_back(request_ms);
    } else {
      ++result_.failed_requests;
    }
    result_.records[r] = out.record;
    result_.records[r].done_s = MsSince(start_) / 1000;
    done_[r] = true;
    --running_;
  }

 public:
  tiering::mrc::ExactMrc TakeExact() {
    absl::MutexLock lock(&exact_mu_);
    return std::move(exact_);
  }

 private:
  const ReplayConfig& config_;
  const tiering::sim::ReplayTrace& trace_;
  const std::vector<uint64_t>& input_tokens_;
  tools::KvStore& store_;
  Clock::time_point start_;  // set before the workers start
  const radix::Namespace ns_;
  const radix::PrefixHash h0_;
  const uint64_t page_bytes_;
  std::vector<std::vector<size_t>> writers_;  // set before the workers start
  std::vector<bool> seen_before_;             // set before the workers start

  absl::Mutex mu_;
  std::deque<size_t> queue_ ABSL_GUARDED_BY(mu_);
  size_t running_ ABSL_GUARDED_BY(mu_) = 0;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<bool> done_ ABSL_GUARDED_BY(mu_);
  ReplayResult result_ ABSL_GUARDED_BY(mu_);

  absl::Mutex exact_mu_;
  tiering::mrc::ExactMrc exact_ ABSL_GUARDED_BY(exact_mu_);
};

}  // namespace

const char* PhaseIndexName(int phase) {
  switch (phase) {
    case kPrefillPhase:
      return "prefill";
    case kMidfillPhase:
      return "midfill";
    case kDecodePhase:
      return "decode";
  }
  return "unknown";
}

void LookupTally::Add(const LookupTally& o) {
  lookups += o.lookups;
  queried_pages += o.queried_pages;
  dram_pages += o.dram_pages;
  ssd_pages += o.ssd_pages;
  text_pages += o.text_pages;
  readable_pages += o.readable_pages;
  queried_tokens += o.queried_tokens;
  hit_tokens += o.hit_tokens;
}

absl::StatusOr<ReplayResult> RunReplay(const ReplayConfig& config,
                                       const tiering::sim::ReplayTrace& trace,
                                       const std::vector<uint64_t>& input_tokens,
                                       tools::KvStore& store) {
  if (input_tokens.size() != trace.requests.size()) {
    return absl::InvalidArgumentError("input_tokens and trace requests differ in length");
  }
  absl::StatusOr<radix::Namespace> ns =
      radix::Namespace::Create(config.tenant, config.model, config.Layout());
  if (!ns.ok()) return ns.status();
  Runner runner(config, trace, input_tokens, store, *ns);
  ReplayResult result = runner.Run();
  result.exact = runner.TakeExact();
  return result;
}

}  // namespace strata::replay
