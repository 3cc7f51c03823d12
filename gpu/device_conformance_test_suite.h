// DeviceConformanceTest: the behaviour every Device implementation must show,
// written once as a value-parameterized GoogleTest suite (bodies in
// device_conformance_test_suite.cc, linked as the OBJECT library
// strata_gpu_conformance). An implementation's test instantiates it with a
// factory:
//
//   INSTANTIATE_TEST_SUITE_P(
//       Host, DeviceConformanceTest,
//       ::testing::Values(DeviceConformanceParam{"host", [] { return CreateHostDevice(); }}),
//       DeviceConformanceParamName);
//
// What it pins: allocation and free (incl. pinned host memory and the stats
// counters), error codes for zero/absurd sizes, null pointers and empty or foreign
// streams/events, H2D -> D2D -> D2H round trips of random bytes, memset, event
// record/query/synchronize, cross-stream ordering by events, host registration,
// move semantics of the RAII owners, many small allocations, concurrent use from
// threads. Every test ends with the Device's stats back at zero (nothing leaked).
//
// If the factory returns UNAVAILABLE every test is skipped with
// "no <name> device: <status>"; any other error fails.
#pragma once

#include <functional>
#include <memory>
#include <ostream>
#include <string>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"

#include "strata/gpu/device.h"

namespace strata::gpu {

struct DeviceConformanceParam {
  // Short identifier: used in test names (letters and digits only) and in the
  // skip message, e.g. "Host" or "CUDA".
  std::string name;
  // Opens a fresh Device; called once or twice per test.
  std::function<absl::StatusOr<std::unique_ptr<Device>>()> open;
};

inline void PrintTo(const DeviceConformanceParam& param, std::ostream* os) { *os << param.name; }

inline std::string DeviceConformanceParamName(
    const ::testing::TestParamInfo<DeviceConformanceParam>& info) {
  return info.param.name;
}

class DeviceConformanceTest : public ::testing::TestWithParam<DeviceConformanceParam> {
 protected:
  void SetUp() override;
  void TearDown() override;

  std::unique_ptr<Device> device_;
};

}  // namespace strata::gpu
