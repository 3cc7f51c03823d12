// IncomingData::Rep: the shared state behind an IncomingData (private to store/transport).
//
// Shared (std::shared_ptr) by the IncomingData handle and, while the payload waits for a
// decision after the handler returned, by the MessengerImpl (its `kept_` set). `impl` is
// dereferenced only on the progress thread (inside commands or on that thread), where the
// MessengerImpl is known to be alive; other threads reach it only through `queue`, whose
// Push runs the command cancelled once the messenger has shut down.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

#include "store/transport/command_queue.h"
#include "strata/store/transport/incoming_data.h"
#include "strata/store/transport/messenger.h"

namespace strata::store::transport {

struct IncomingData::Rep {
  // Where the payload stands.
  enum class State {
    kUndecided,         // no Accept/Drop yet
    kQueued,            // Accept/Drop queued from another thread; data must persist
    kReceiving,         // rendezvous receive started; UCX owns the descriptor
    kFinished,          // eager bytes copied out, or dropped after the handler returned
    kDroppedInHandler,  // dropped while the handler ran (rendezvous sender gets ABORTED)
    kGone,              // the sender failed or the messenger shut down: released
  };

  MessengerImpl* impl = nullptr;
  std::shared_ptr<CommandQueue> queue;
  std::thread::id progress_thread;
  PeerId peer = PeerId::kNone;
  size_t size = 0;
  // Rendezvous: the bytes are still at the sender (UCX) or in the peer's TCP stream.
  bool rendezvous = false;
  // Came on the peer's TCP stream (StreamConnection), not through UCX.
  bool stream = false;
  // A streamed payload's name on its connection (StreamConnection::Frame::sequence).
  uint64_t stream_sequence = 0;

  mutable absl::Mutex mu;
  State state ABSL_GUARDED_BY(mu) = State::kUndecided;
  // True while the handler that received this payload runs.
  bool in_handler ABSL_GUARDED_BY(mu) = true;
  // Eager: the transport's bytes (valid while in_handler). UCX rendezvous: UCX's descriptor.
  void* ucx_data ABSL_GUARDED_BY(mu) = nullptr;
  // Eager bytes copied when the handler kept the descriptor.
  std::vector<uint8_t> kept_bytes ABSL_GUARDED_BY(mu);
  // Why the payload is gone (kGone): the sender's failure, or CANCELLED at shutdown.
  absl::Status gone_status ABSL_GUARDED_BY(mu);
};

}  // namespace strata::store::transport
