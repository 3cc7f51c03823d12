// The precompiled header of the libraries most of whose files build JSON (client/cli's
// commands): nlohmann/json, whose parse was most of those files' compile time (3-4 s of
// CPU each under ASan). Headers from outside the project only.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"

#include "nlohmann/json.hpp"
