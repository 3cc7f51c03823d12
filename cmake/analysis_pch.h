// The precompiled header of the analysis-only build (deploy/test.sh's tsa,
// STRATA_ANALYSIS_ONLY): the standard library, Abseil and glog headers that most of the
// project's libraries include. clang loads a precompiled header lazily, so a file that
// needs little of it pays little; parsing these headers was about half of the analysis.
// Headers from outside the project only: every project header is still parsed per file.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "glog/logging.h"
