// The precompiled header of every test object (cmake/StrataTesting.cmake): the vendor
// headers nearly every test includes (nlohmann/json: the CLI's, the HTTP adapter's and
// the JSON helpers' tests, whose parse of it was 2-3 s of CPU each). Only headers from
// outside the project, so that a change to strata's own headers never rebuilds it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "nlohmann/json.hpp"
