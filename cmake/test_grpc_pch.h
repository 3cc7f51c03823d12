// The precompiled header of test folders whose tests speak gRPC (STRATA_TEST_PCH=grpc in
// cmake/StrataTesting.cmake): the common test headers and the gRPC ones.
#pragma once

#include "grpc_pch.h"
#include "test_pch.h"
