#include "strata/store/cluster/node_record.h"

#include <cerrno>
#include <cstring>
#include <random>
#include <type_traits>

#include <fcntl.h>
#include <unistd.h>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

#include "nlohmann/json.hpp"
#include "strata/base/read_file.h"

namespace strata::store::cluster {
namespace {

using nlohmann::json;

absl::StatusOr<NodeState> StateFromName(std::string_view name) {
  if (name == "joining") return NodeState::kJoining;
  if (name == "serving") return NodeState::kServing;
  if (name == "draining") return NodeState::kDraining;
  return absl::InvalidArgumentError(
      absl::StrCat("node record: unknown state \"", std::string(name), "\""));
}

bool IsNodeId(std::string_view id) {
  return id.size() == 16 && id.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

// Reads field `name` of `object` as T into *out; INVALID_ARGUMENT when missing or mistyped.
template <typename T>
absl::Status Field(const json& object, const char* name, T* out) {
  const auto it = object.find(name);
  if (it == object.end()) {
    return absl::InvalidArgumentError(absl::StrCat("node record: no \"", name, "\""));
  }
  if constexpr (std::is_unsigned_v<T>) {
    if (!it->is_number_unsigned()) {
      return absl::InvalidArgumentError(
          absl::StrCat("node record: \"", name, "\" has the wrong type"));
    }
  }
  try {
    *out = it->get<T>();
  } catch (const json::exception&) {
    return absl::InvalidArgumentError(
        absl::StrCat("node record: \"", name, "\" has the wrong type"));
  }
  return absl::OkStatus();
}

absl::Status ErrnoError(const std::string& what, const std::string& path) {
  return absl::InternalError(absl::StrCat(what, " ", path, ": ", std::strerror(errno)));
}

}  // namespace

std::string_view NodeStateName(NodeState state) {
  switch (state) {
    case NodeState::kJoining:
      return "joining";
    case NodeState::kServing:
      return "serving";
    case NodeState::kDraining:
      return "draining";
  }
  return "unknown";
}

std::string EncodeNodeRecord(const NodeRecord& record) {
  const json object = {
      {"id", record.id},
      {"grpc", record.grpc_address},
      {"dataplane", record.dataplane_address},
      {"http", record.http_address},
      {"state", std::string(NodeStateName(record.state))},
      {"version", record.version},
      {"capacity",
       {{"hbm", record.hbm_bytes}, {"dram", record.dram_bytes}, {"ssd", record.ssd_bytes}}},
      {"started_ms", record.started_ms}};
  return object.dump();
}

absl::StatusOr<NodeRecord> DecodeNodeRecord(std::string_view text) {
  const json object = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (object.is_discarded() || !object.is_object()) {
    return absl::InvalidArgumentError("node record: not a JSON object");
  }
  NodeRecord record;
  std::string state;
  json capacity;
  for (absl::Status s :
       {Field(object, "id", &record.id), Field(object, "grpc", &record.grpc_address),
        Field(object, "dataplane", &record.dataplane_address),
        Field(object, "http", &record.http_address), Field(object, "state", &state),
        Field(object, "version", &record.version), Field(object, "capacity", &capacity),
        Field(object, "started_ms", &record.started_ms)}) {
    if (!s.ok()) return s;
  }
  if (!IsNodeId(record.id)) {
    return absl::InvalidArgumentError(
        absl::StrCat("node record: id \"", record.id, "\" is not 16 lowercase hex digits"));
  }
  if (!capacity.is_object()) {
    return absl::InvalidArgumentError("node record: \"capacity\" is not an object");
  }
  for (absl::Status s :
       {Field(capacity, "hbm", &record.hbm_bytes), Field(capacity, "dram", &record.dram_bytes),
        Field(capacity, "ssd", &record.ssd_bytes)}) {
    if (!s.ok()) return s;
  }
  absl::StatusOr<NodeState> parsed = StateFromName(state);
  if (!parsed.ok()) return parsed.status();
  record.state = *parsed;
  return record;
}

bool IsClusterName(std::string_view name) {
  return !name.empty() && name.size() <= 64 &&
         name.find_first_not_of(
             "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") ==
             std::string_view::npos;
}

std::string MembershipPrefix(const std::string& cluster) {
  return absl::StrCat("/strata/", cluster, "/nodes/");
}

std::string MembershipKey(const std::string& cluster, const std::string& id) {
  return absl::StrCat(MembershipPrefix(cluster), id);
}

absl::StatusOr<std::string> LoadOrCreateNodeId(const std::string& data_dir) {
  const std::string path = data_dir + "/node_id";
  absl::StatusOr<std::string> text = base::ReadFileToString(path, 4096);
  if (text.ok()) {
    const std::string id(absl::StripAsciiWhitespace(*text));
    if (!IsNodeId(id)) {
      return absl::DataLossError(
          absl::StrCat(path, ": \"", id.substr(0, 40), "\" is not a node id (16 hex digits)"));
    }
    return id;
  }
  if (!absl::IsNotFound(text.status())) return text.status();
  std::random_device random;
  const uint64_t bits = (uint64_t{random()} << 32) ^ random();
  const std::string id = absl::StrFormat("%016x", bits);
  const std::string temp = path + ".tmp";
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoError("cannot create", temp);
  const std::string line = id + "\n";
  const bool written = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size()) &&
                       ::fsync(fd) == 0;
  ::close(fd);
  if (!written) return ErrnoError("cannot write", temp);
  if (::rename(temp.c_str(), path.c_str()) != 0) return ErrnoError("cannot rename", temp);
  return id;
}

}  // namespace strata::store::cluster
