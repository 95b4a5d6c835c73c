// Test fixtures for the metastore. MetaStoreTest: the embedded store on a
// ManualClock, with reopen (its own tests). MetaBackendTest: the contract
// tests, once per backend (embedded, etcd). Tests only.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/clock.h"
#include "meta/embedded_store.h"
#include "meta/etcd_store.h"

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

// The keys of `events`, in order.
inline std::vector<std::string> Keys(const std::vector<WatchEvent>& events) {
  std::vector<std::string> keys;
  for (const WatchEvent& e : events) keys.push_back(e.kv.key);
  return keys;
}

// The backends every MetaStore contract test runs against.
enum class Backend { kEmbedded, kEtcd };

inline std::string BackendName(const ::testing::TestParamInfo<Backend>& info) {
  return info.param == Backend::kEmbedded ? "embedded" : "etcd";
}

// A fresh store per test, on the real clock: the embedded store in a new
// directory, or the etcd at $SLUICE_TEST_ETCD (scripts/services.sh starts
// one) under a key prefix of its own, so tests may share that etcd. Without
// $SLUICE_TEST_ETCD the etcd cases skip, naming the variable. Other clients
// may write to a shared etcd meanwhile, so tests compare the revisions their
// own writes return, not absolute numbers.
class MetaBackendTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = std::string(info->test_suite_name()) + "_" + info->name();
    for (char& c : name) {
      if (c == '/') c = '_';
    }
    if (GetParam() == Backend::kEmbedded) {
      dir_ = ::testing::TempDir() + "/meta_" + name;
      std::filesystem::remove_all(dir_);
    } else {
      const char* endpoint = std::getenv("SLUICE_TEST_ETCD");
      if (endpoint == nullptr || *endpoint == '\0') {
        GTEST_SKIP() << "SLUICE_TEST_ETCD is not set (scripts/services.sh starts etcd)";
      }
      etcd_.endpoints = {endpoint};
      etcd_.key_prefix = "/sluice-test/" + name + "/" + std::to_string(::getpid()) + "." +
                         std::to_string(Clock::Real()->WallNow().time_since_epoch().count()) + "/";
    }
    ASSERT_TRUE(Reopen().ok());
  }

  // Closes the store and opens it again: from its directory (embedded), or
  // as a new client of the same etcd and key prefix.
  Status Reopen() {
    store_ = nullptr;
    owned_.reset();
    if (GetParam() == Backend::kEmbedded) {
      EmbeddedStoreOptions options;
      options.dir = dir_;
      ASSIGN_OR_RETURN(std::unique_ptr<EmbeddedMetaStore> store, EmbeddedMetaStore::Open(options));
      EmbeddedMetaStore* raw = store.get();
      stop_ = [raw] { raw->Stop(); };
      owned_ = std::move(store);
    } else {
      ASSIGN_OR_RETURN(std::unique_ptr<EtcdMetaStore> store, EtcdMetaStore::Open(etcd_));
      EtcdMetaStore* raw = store.get();
      stop_ = [raw] { raw->Stop(); };
      owned_ = std::move(store);
    }
    store_ = owned_.get();
    return Status::Ok();
  }

  void TearDown() override {
    store_ = nullptr;
    owned_.reset();
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  // Events from `cursor` until there are `n` (bounded wait); fewer if the
  // wait ends first.
  static std::vector<WatchEvent> Collect(WatchCursor* cursor, size_t n) {
    std::vector<WatchEvent> out;
    const Clock::TimePoint deadline = Clock::Real()->Now() + std::chrono::seconds(10);
    while (out.size() < n) {
      Result<std::vector<WatchEvent>> got = cursor->Next(CancelToken(), deadline);
      if (!got.ok()) break;
      for (WatchEvent& e : *got) out.push_back(std::move(e));
    }
    return out;
  }

  // Whether `cursor`'s next event is the put of `marker` (written now): so
  // nothing under its prefix changed between the previous event and now.
  ::testing::AssertionResult NextEventIsMarker(WatchCursor* cursor, const std::string& marker) {
    Result<Revision> put = store_->Put(marker, "marker");
    if (!put.ok()) return ::testing::AssertionFailure() << put.status().ToString();
    std::vector<WatchEvent> events = Collect(cursor, 1);
    if (events.empty()) return ::testing::AssertionFailure() << "no event";
    if (events[0].kv.key != marker) {
      return ::testing::AssertionFailure() << "unexpected event on " << events[0].kv.key;
    }
    return ::testing::AssertionSuccess();
  }

  MetaStore* store_ = nullptr;
  std::unique_ptr<MetaStore> owned_;
  std::function<void()> stop_;  // Stops the store (Stop() is not in the interface).
  std::string dir_;             // Embedded.
  EtcdStoreOptions etcd_;       // etcd.
};

#define SLUICE_META_BACKENDS(suite)                                                                \
  INSTANTIATE_TEST_SUITE_P(Backends, suite, ::testing::Values(Backend::kEmbedded, Backend::kEtcd), \
                           BackendName)

}  // namespace sluice::meta
