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
  constexpr absl::string_view kKey = "MemAvailable:";
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
  return absl::NotFoundError("no MemAvailable line in /proc/meminfo");
}

absl::StatusOr<uint64_t> ReadMemAvailableBytes(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::UnavailableError(absl::StrCat("cannot read ", path));
  std::ostringstream text;
  text << in.rdbuf();
  return MemAvailableBytes(text.str());
}

}  // namespace strata::store::node
