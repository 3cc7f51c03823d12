// The analysis-only build's precompiled header for the gRPC-heavy libraries
// (strata_grpc_pch): cmake/analysis_pch.h with gRPC and strata's generated code.
#pragma once

#include "analysis_pch.h"
#include "grpc_pch.h"
