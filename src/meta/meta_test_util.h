// Test fixture for the metastore: a fresh directory per test, a ManualClock
// and helpers to open, close and reopen an EmbeddedMetaStore. Tests only.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>

#include "common/clock.h"
#include "meta/embedded_store.h"

namespace sluice::meta {

class MetaStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = ::testing::TempDir() + "/meta_" + info->test_suite_name() + "_" + info->name();
    std::filesystem::remove_all(dir_);
    ASSERT_TRUE(Reopen().ok());
  }
  void TearDown() override {
    store_.reset();
    std::filesystem::remove_all(dir_);
  }

  EmbeddedStoreOptions Options() {
    EmbeddedStoreOptions options;
    options.dir = dir_;
    options.clock = &clock_;
    options.history_revisions = history_revisions_;
    return options;
  }

  // Closes the store (if open) and opens it again from disk.
  Status Reopen() {
    store_.reset();
    Result<std::unique_ptr<EmbeddedMetaStore>> store = EmbeddedMetaStore::Open(Options());
    if (!store.ok()) return store.status();
    store_ = std::move(store).value();
    return Status::Ok();
  }

  std::string dir_;
  int64_t history_revisions_ = 10000;
  ManualClock clock_;
  std::unique_ptr<EmbeddedMetaStore> store_;
};

}  // namespace sluice::meta
