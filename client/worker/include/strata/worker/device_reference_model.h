// DeviceReferenceModel: a ReferenceModel (reference_model.h) computed on a gpu::Device, the
// blob written straight into that device's memory — CUDA kernels on a GPU, the host
// device's run of the same arithmetic elsewhere (strata/gpu/reference_kv.h). The bytes are
// the CPU model's, bit for bit: both evaluate the specification's binary32 operations in
// its order with no fused multiply-add, and encode through the same integer code
// (strata/gpu/reference_math.h). So a blob rebuilt on a GPU and one rebuilt on a CPU have
// the same chunk checksums, and a worker can fill its paged cache without a host copy.
//
// Create uploads the model's weights to the device once. Each call computes the tokens'
// h_0 on the host (embedding + position: kModelDim floats a token), uploads it with the
// state's running means, runs the job and returns once the blob is written (the stream
// synchronized) and the state advanced.
//
// Thread safety: calls are serialized on the model's own stream (a mutex); the state passed
// in is the caller's (one thread at a time, as for ReferenceModel). The ReferenceModel and
// the Device outlive it.
//
// Errors: as ReferenceModel's (INVALID_ARGUMENT bad tokens or an output of the wrong size,
// FAILED_PRECONDITION another model's state, OUT_OF_RANGE pages past the sequence), plus
// the device's: RESOURCE_EXHAUSTED no room for the weights or the scratch, INVALID_ARGUMENT
// (host device) an output that is not this device's memory, INTERNAL a kernel failure.
// On error the state is unchanged.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"

#include "strata/gpu/device.h"
#include "strata/radix/token_span.h"
#include "strata/worker/model_state.h"
#include "strata/worker/reference_model.h"

namespace strata::worker {

class DeviceReferenceModel {
 public:
  static absl::StatusOr<std::unique_ptr<DeviceReferenceModel>> Create(
      const ReferenceModel& model, std::shared_ptr<gpu::Device> device);

  const ReferenceModel& model() const { return model_; }
  gpu::Device& device() const { return *device_; }

  // ReferenceModel::ComputeNextPages with `out` (out_bytes of it) device memory.
  absl::Status ComputeNextPages(ModelState* state, absl::Span<const radix::TokenId> tokens,
                                void* out, uint64_t out_bytes) ABSL_LOCKS_EXCLUDED(mu_);
  // ReferenceModel::Advance on the device (no KV computed).
  absl::Status Advance(ModelState* state, absl::Span<const radix::TokenId> tokens)
      ABSL_LOCKS_EXCLUDED(mu_);
  // ReferenceModel::ComputeBlob with `out` device memory.
  absl::Status ComputeBlob(absl::Span<const radix::TokenId> prefix_and_span, uint32_t first_page,
                           uint32_t num_pages, void* out, uint64_t out_bytes)
      ABSL_LOCKS_EXCLUDED(mu_);

 private:
  DeviceReferenceModel(const ReferenceModel& model, std::shared_ptr<gpu::Device> device,
                       gpu::DeviceBuffer weights, gpu::Stream stream);
  // Runs `tokens` from `state` (its running means on the device already in scratch) through
  // the model, writing the blob when out != nullptr. REQUIRES: mu_ held, checks done.
  absl::Status Run(ModelState* state, absl::Span<const radix::TokenId> tokens, uint8_t* out,
                   uint64_t blob_pages) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const ReferenceModel& model_;
  const std::shared_ptr<gpu::Device> device_;  // declared first: destroyed after its buffers
  absl::Mutex mu_;
  gpu::DeviceBuffer weights_ ABSL_GUARDED_BY(mu_);
  gpu::Stream stream_ ABSL_GUARDED_BY(mu_);
};

}  // namespace strata::worker
