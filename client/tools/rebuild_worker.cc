#include "client/tools/rebuild_worker.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

#include "strata/radix/chunk_checksum.h"

namespace strata::tools {

const char* RebuildOutcomeName(RebuildOutcome outcome) {
  switch (outcome) {
    case RebuildOutcome::kRebuilt:
      return "rebuilt";
    case RebuildOutcome::kExisted:
      return "existed";
    case RebuildOutcome::kSkipped:
      return "skipped";
    case RebuildOutcome::kChecksumMismatch:
      return "checksum-mismatch";
    case RebuildOutcome::kWriteFailed:
      return "write-failed";
  }
  return "unknown";
}

absl::StatusOr<const worker::ReferenceModel*> SeededModels::For(const KvLayout& layout) {
  const std::string name = layout.ToString();
  auto it = models_.find(name);
  if (it == models_.end()) {
    absl::StatusOr<std::unique_ptr<worker::ReferenceModel>> model =
        worker::ReferenceModel::Create(layout, seed_);
    if (!model.ok()) return model.status();
    it = models_.emplace(name, *std::move(model)).first;
  }
  return it->second.get();
}

absl::StatusOr<std::vector<std::byte>> ComputeRebuild(const RebuildTask& task,
                                                      const worker::ReferenceModel& model) {
  if (!task.ns.has_value()) return absl::InvalidArgumentError("task: no namespace");
  const KvLayout& layout = task.ns->layout();
  if (!(model.layout() == layout)) {
    return absl::FailedPreconditionError(absl::StrCat("the model's layout ",
                                                      model.layout().ToString(),
                                                      " is not the task's ", layout.ToString()));
  }
  const uint64_t tokens = (uint64_t{task.first_page} + task.pages) * layout.page_tokens;
  if (task.pages == 0 || task.sequence_tokens.size() != tokens) {
    return absl::InvalidArgumentError(absl::StrCat("task: ", task.sequence_tokens.size(),
                                                   " sequence tokens for pages [", task.first_page,
                                                   ", +", task.pages, ")"));
  }
  if (task.chunk_checksums.size() != uint64_t{layout.num_layers} * task.pages) {
    return absl::InvalidArgumentError(absl::StrCat("task: ", task.chunk_checksums.size(),
                                                   " chunk checksums for ", task.pages,
                                                   " pages of ", layout.num_layers, " layers"));
  }
  absl::StatusOr<std::vector<std::byte>> bytes =
      model.ComputeBlobBytes(task.sequence_tokens, task.first_page, task.pages);
  if (!bytes.ok()) return bytes.status();
  if (absl::Status s =
          radix::VerifyChunkChecksums(*bytes, layout, task.pages, task.chunk_checksums);
      !s.ok()) {
    if (s.code() != absl::StatusCode::kDataLoss) return s;
    return absl::DataLossError(
        absl::StrCat("the recomputed KV differs from the original (", s.message(),
                     "): not the model or seed that wrote it (seed ", model.seed(), ")"));
  }
  return bytes;
}

RebuildTaskReport RebuildOne(Client& client, const RebuildTask& task, ModelForLayout models,
                             const CallOptions& call, const PrefixTokensFor& prefix_tokens) {
  RebuildTaskReport report;
  report.task = task;
  if (!task.ns.has_value()) {
    report.status = absl::InvalidArgumentError("task: no namespace");
    return report;
  }
  absl::StatusOr<const worker::ReferenceModel*> model = models(task.ns->layout());
  if (!model.ok()) {
    report.status = model.status();
    return report;
  }
  const absl::Time start = absl::Now();
  // A blob past a cluster segment start: the sequence's earlier tokens are on other nodes.
  RebuildTask whole;
  if (task.segment_start.has_value()) {
    if (!prefix_tokens) {
      report.status = absl::FailedPreconditionError(absl::StrCat(
          "blob ", task.key.ToHex(), " follows a cluster segment start at page ",
          task.segment_start->pages,
          ": the tokens before it are on other nodes (run the worker on the cluster)"));
      return report;
    }
    absl::StatusOr<std::vector<TokenId>> prefix = prefix_tokens(*task.ns, *task.segment_start);
    if (!prefix.ok()) {
      report.status = prefix.status();
      return report;
    }
    whole = task;
    whole.sequence_tokens = *std::move(prefix);
    whole.sequence_tokens.insert(whole.sequence_tokens.end(), task.sequence_tokens.begin(),
                                 task.sequence_tokens.end());
  }
  absl::StatusOr<std::vector<std::byte>> bytes =
      ComputeRebuild(task.segment_start.has_value() ? whole : task, **model);
  report.compute_time = absl::Now() - start;
  if (!bytes.ok()) {
    report.outcome = bytes.status().code() == absl::StatusCode::kDataLoss
                         ? RebuildOutcome::kChecksumMismatch
                         : RebuildOutcome::kSkipped;
    report.status = bytes.status();
    return report;
  }
  report.bytes = bytes->size();
  const std::vector<TokenId> own = task.OwnTokens();
  const absl::Time write_start = absl::Now();
  const MemoryDescriptor source =
      MemoryDescriptor::Host(static_cast<const void*>(bytes->data()), bytes->size());
  absl::StatusOr<WriteResult> wrote =
      task.segment_start.has_value() && !task.parent.has_value()
          ? client.Write(*task.ns, *task.segment_start, own, source, call)
          : client.Write(*task.ns, task.parent, own, source, call);
  report.write_time = absl::Now() - write_start;
  if (!wrote.ok()) {
    report.outcome = RebuildOutcome::kWriteFailed;
    report.status = wrote.status();
  } else if (wrote->key != task.key) {
    // The node computed another key from the same parent and tokens: never expected.
    report.outcome = RebuildOutcome::kWriteFailed;
    report.status = absl::InternalError(absl::StrCat("the put made blob ", wrote->key.ToHex(),
                                                     ", not the task's ", task.key.ToHex()));
  } else {
    // indexed_pages 0: another put refilled the blob between the pull and this commit.
    report.outcome = wrote->existed || wrote->indexed_pages == 0 ? RebuildOutcome::kExisted
                                                                 : RebuildOutcome::kRebuilt;
  }
  return report;
}

RebuildWorkerSummary RunRebuildWorker(Client& client, ModelForLayout models,
                                      const RebuildWorkerOptions& options) {
  RebuildWorkerSummary summary;
  const absl::Time start = absl::Now();
  if (options.batch == 0 || options.batch > 1024) {
    summary.status =
        absl::InvalidArgumentError(absl::StrCat("batch: ", options.batch, " is outside [1, 1024]"));
    return summary;
  }
  if (options.poll_wait < absl::ZeroDuration() || options.poll_wait > absl::Seconds(60)) {
    summary.status = absl::InvalidArgumentError("poll_wait: outside [0, 60s]");
    return summary;
  }
  if (options.idle_exit < absl::ZeroDuration()) {
    summary.status = absl::InvalidArgumentError("idle_exit: negative");
    return summary;
  }
  absl::Time last_task = absl::Now();
  while (options.max_tasks == 0 || summary.tasks < options.max_tasks) {
    if (options.stop && options.stop()) break;
    const absl::Duration idle = absl::Now() - last_task;
    if (summary.pulls > 0 && options.idle_exit > absl::ZeroDuration() &&
        idle >= options.idle_exit) {
      break;
    }
    // Wait no longer than the idle time left (a zero idle_exit: one pull without waiting).
    const absl::Duration wait =
        std::max(absl::ZeroDuration(), std::min(options.poll_wait, options.idle_exit - idle));
    uint32_t want = options.batch;
    if (options.max_tasks != 0) {
      want = static_cast<uint32_t>(std::min<uint64_t>(want, options.max_tasks - summary.tasks));
    }
    absl::StatusOr<std::vector<RebuildTask>> tasks = client.PullRebuildTasks(want, wait);
    ++summary.pulls;
    if (!tasks.ok()) {
      summary.status = tasks.status();
      break;
    }
    if (tasks->empty()) {
      if (options.idle_exit == absl::ZeroDuration()) break;
      continue;
    }
    for (const RebuildTask& task : *tasks) {
      const RebuildTaskReport report = RebuildOne(client, task, models, {}, options.prefix_tokens);
      ++summary.tasks;
      switch (report.outcome) {
        case RebuildOutcome::kRebuilt:
          ++summary.rebuilt;
          summary.bytes_written += report.bytes;
          break;
        case RebuildOutcome::kExisted:
          ++summary.existed;
          break;
        case RebuildOutcome::kSkipped:
          ++summary.skipped;
          break;
        case RebuildOutcome::kChecksumMismatch:
          ++summary.checksum_mismatches;
          break;
        case RebuildOutcome::kWriteFailed:
          ++summary.write_failures;
          break;
      }
      if (options.on_task) options.on_task(report);
    }
    last_task = absl::Now();
  }
  summary.elapsed = absl::Now() - start;
  return summary;
}

RebuildWorkerSummary RunRebuildWorker(Client& client, const worker::ReferenceModel& model,
                                      const RebuildWorkerOptions& options) {
  const auto one =
      [&model](const KvLayout& layout) -> absl::StatusOr<const worker::ReferenceModel*> {
    if (!(model.layout() == layout)) {
      return absl::FailedPreconditionError(absl::StrCat("no model for layout ", layout.ToString(),
                                                        " (this worker computes ",
                                                        model.layout().ToString(), ")"));
    }
    return &model;
  };
  return RunRebuildWorker(client, one, options);
}

}  // namespace strata::tools
