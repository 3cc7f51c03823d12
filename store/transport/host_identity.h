// LocalHostIdentity: a string equal for two processes exactly when they can share memory
// the way UCX's shared-memory (sysv/posix) and CMA transports need: the same kernel boot and
// the same IPC, PID and mount namespaces.
//
// Private to store/transport (no UCX types). Thread-safe. Returns an empty string when any
// part cannot be read; an empty identity never matches another.
#pragma once

#include <string>

namespace strata::store::transport {

std::string LocalHostIdentity();

}  // namespace strata::store::transport
