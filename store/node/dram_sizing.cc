#include "strata/store/node/dram_sizing.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"

namespace strata::store::node {

uint64_t DefaultDramBytes(uint64_t mem_available_bytes) {
  constexpr uint64_t kAlign = uint64_t{2} << 20;
  const uint64_t quarter = mem_available_bytes / 4;
  return std::clamp(quarter, kMinDefaultDramBytes, kMaxDefaultDramBytes) / kAlign * kAlign;
}

absl::StatusOr<uint64_t> MemAvailableBytes(std::string_view meminfo) {
  return MemInfoBytes(meminfo, "MemAvailable");
}

absl::StatusOr<uint64_t> MemInfoBytes(std::string_view meminfo, std::string_view name) {
  const std::string key = absl::StrCat(absl::string_view(name.data(), name.size()), ":");
  const absl::string_view kKey = key;
  for (absl::string_view line :
       absl::StrSplit(absl::string_view(meminfo.data(), meminfo.size()), '\n')) {
    if (!absl::StartsWith(line, kKey)) continue;
    absl::string_view rest = absl::StripAsciiWhitespace(line.substr(kKey.size()));
    uint64_t multiplier = 1;
    if (absl::EndsWith(rest, "kB")) {
      multiplier = 1024;
      rest = absl::StripAsciiWhitespace(rest.substr(0, rest.size() - 2));
    }
    uint64_t value = 0;
    if (!absl::SimpleAtoi(rest, &value) || value > UINT64_MAX / multiplier) {
      return absl::InvalidArgumentError(absl::StrCat("cannot parse \"", line, "\""));
    }
    return value * multiplier;
  }
  return absl::NotFoundError(
      absl::StrCat("no ", absl::string_view(name.data(), name.size()), " line in /proc/meminfo"));
}

absl::StatusOr<uint64_t> ReadMemInfoBytes(std::string_view name, const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::UnavailableError(absl::StrCat("cannot read ", path));
  std::ostringstream text;
  text << in.rdbuf();
  return MemInfoBytes(text.str(), name);
}

absl::StatusOr<uint64_t> ReadMemAvailableBytes(const std::string& path) {
  return ReadMemInfoBytes("MemAvailable", path);
}

}  // namespace strata::store::node
