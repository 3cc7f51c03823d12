#include "store/transport/host_identity.h"

#include <fstream>
#include <string>

#include <unistd.h>

namespace strata::store::transport {
namespace {

std::string ReadLink(const char* path) {
  char buffer[256];
  const ssize_t n = readlink(path, buffer, sizeof(buffer));
  return n > 0 ? std::string(buffer, static_cast<size_t>(n)) : std::string();
}

}  // namespace

std::string LocalHostIdentity() {
  std::string boot_id;
  std::ifstream file("/proc/sys/kernel/random/boot_id");
  if (!std::getline(file, boot_id) || boot_id.empty()) return {};
  std::string identity = boot_id;
  for (const char* ns : {"/proc/self/ns/ipc", "/proc/self/ns/pid", "/proc/self/ns/mnt"}) {
    const std::string link = ReadLink(ns);
    if (link.empty()) return {};
    identity += "/" + link;
  }
  return identity;
}

}  // namespace strata::store::transport
