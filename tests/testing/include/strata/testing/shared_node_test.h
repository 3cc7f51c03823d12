// SharedNodeTest: a gtest fixture whose test suite shares one strata-node process (started
// once per suite with NodeProcess's defaults, killed at the end) and gives each test fresh
// Store and Admin stubs of it. For suites whose tests do not disturb each other's state
// (distinct namespaces, no draining), where a node per test would only cost start-up time.
//
// Test-only (strata::testing_node). The suite owns the node (a static member, deleted in
// TearDownTestSuite); a suite whose node failed to start fails each test in SetUp.
// Not thread-safe: gtest runs a suite's tests one at a time.
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"

#include "strata/testing/node_process.h"

namespace strata::testing {

class SharedNodeTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    absl::StatusOr<std::unique_ptr<NodeProcess>> node = NodeProcess::Start();
    ASSERT_TRUE(node.ok()) << node.status();
    node_ = node->release();
  }
  static void TearDownTestSuite() {
    delete node_;
    node_ = nullptr;
  }
  void SetUp() override {
    ASSERT_NE(node_, nullptr);
    store_ = node_->StoreStub();
    admin_ = node_->AdminStub();
  }

  inline static NodeProcess* node_ = nullptr;
  std::unique_ptr<v1::Store::Stub> store_;
  std::unique_ptr<v1::Admin::Stub> admin_;
};

}  // namespace strata::testing
