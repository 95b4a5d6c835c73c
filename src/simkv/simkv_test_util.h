// Test support for the simkv conformance tests: a fixture that runs a
// SimCluster on loopback with a manual clock and manual resolved ts, and
// helpers to write data and to find regions, leaders and followers.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/memcomparable.h"
#include "simkv/cdc_test_client.h"
#include "simkv/sim_cluster.h"

namespace sluice::simkv::testing {

class SimKvTest : public ::testing::Test {
 protected:
  // 3 stores, 3 replicas, regions (-inf, "b"), ["b", "m"), ["m", +inf),
  // resolved ts driven by hand.
  SimClusterOptions DefaultOptions() {
    SimClusterOptions options;
    options.raw_split_keys = {"b", "m"};
    options.clock = &clock_;
    options.resolved_ts_interval = std::chrono::milliseconds(0);
    return options;
  }

  void StartCluster() { StartCluster(DefaultOptions()); }
  void StartCluster(SimClusterOptions options) {
    Result<std::unique_ptr<SimCluster>> cluster = SimCluster::Start(std::move(options));
    ASSERT_TRUE(cluster.ok()) << cluster.status().ToString();
    cluster_ = std::move(cluster).value();
  }

  // Stops the cluster and starts a new one from the default options as
  // `adjust` changes them.
  void RestartCluster(const std::function<void(SimClusterOptions*)>& adjust) {
    cluster_->Stop();
    SimClusterOptions options = DefaultOptions();
    adjust(&options);
    StartCluster(std::move(options));
  }

  void TearDown() override {
    if (cluster_) cluster_->Stop();
  }

  uint64_t cluster_id() const { return cluster_->cluster_id(); }

  RegionInfo RegionFor(std::string_view raw_key) {
    Result<RegionInfo> region =
        cluster_->regions().RegionForKey(memcomparable::EncodeBytes(raw_key));
    EXPECT_TRUE(region.ok());
    return region.ok() ? *region : RegionInfo{};
  }

  std::string LeaderAddress(const RegionInfo& region) {
    return cluster_->store_address(region.leader);
  }

  StoreId FollowerStore(const RegionInfo& region) {
    for (const Peer& peer : region.peers) {
      if (peer.store_id != region.leader) return peer.store_id;
    }
    return StoreId();
  }

  std::unique_ptr<CdcTestClient> Connect(const std::string& address,
                                         CdcTestClientOptions options = {}) {
    return std::make_unique<CdcTestClient>(address, options);
  }

  // A client of `region`'s leader that does not read its stream until
  // StartReading(): once gRPC's windows fill, its stream sink fills too.
  std::unique_ptr<CdcTestClient> ConnectPaused(const RegionInfo& region) {
    CdcTestClientOptions paused;
    paused.start_reading = false;
    return Connect(LeaderAddress(region), paused);
  }

  // A connected client with `region` registered under `request_id` and
  // initialized.
  std::unique_ptr<CdcTestClient> Subscribe(const RegionInfo& region, uint64_t request_id,
                                           Ts checkpoint = Ts(0), bool old_value = true) {
    auto client = Connect(LeaderAddress(region));
    EXPECT_TRUE(
        client->Send(RegisterRequest(cluster_id(), region, request_id, checkpoint, old_value)));
    EXPECT_TRUE(client->WaitInitialized(request_id, region.id.value()));
    return client;
  }

  // Writes the pairs in one transaction and returns its commit ts.
  Ts Put(const std::vector<std::pair<std::string, std::string>>& pairs) {
    Result<Txn> txn = cluster_->txn().Begin();
    EXPECT_TRUE(txn.ok());
    for (const auto& [key, value] : pairs) txn->Put(key, value);
    Result<Ts> commit = cluster_->txn().Commit(*txn);
    EXPECT_TRUE(commit.ok()) << commit.status().ToString();
    return commit.ok() ? *commit : Ts();
  }

  // A transaction with the pairs prewritten and left open.
  Txn Prewrite(const std::vector<std::pair<std::string, std::string>>& pairs) {
    Result<Txn> txn = cluster_->txn().Begin();
    EXPECT_TRUE(txn.ok());
    for (const auto& [key, value] : pairs) txn->Put(key, value);
    Status status = cluster_->txn().Prewrite(*txn);
    EXPECT_TRUE(status.ok()) << status.ToString();
    return *std::move(txn);
  }

  static void ExpectNoViolations(const CdcTestClient& client) {
    StreamLog log = client.Snapshot();
    for (const std::string& violation : log.violations) ADD_FAILURE() << violation;
  }

  ManualClock clock_;
  std::unique_ptr<SimCluster> cluster_;
};

}  // namespace sluice::simkv::testing
