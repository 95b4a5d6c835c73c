// Test support for the PD client tests: a fixture that runs a SimCluster on
// loopback (real clock, resolved ts by hand) and connects PdClients to it
// with short timeouts and backoff.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/memcomparable.h"
#include "pd/pd_client.h"
#include "simkv/sim_cluster.h"

namespace sluice::pd::testing {

inline std::string Enc(std::string_view raw) { return memcomparable::EncodeBytes(raw); }

class PdTestBase : public ::testing::Test {
 protected:
  void StartCluster(std::vector<std::string> raw_split_keys = {"b", "m"},
                    uint64_t cluster_id = 7000000000000000001ULL) {
    cluster_ = StartAnotherCluster(std::move(raw_split_keys), cluster_id);
  }

  std::unique_ptr<simkv::SimCluster> StartAnotherCluster(std::vector<std::string> raw_split_keys,
                                                         uint64_t cluster_id) {
    simkv::SimClusterOptions options;
    options.raw_split_keys = std::move(raw_split_keys);
    options.cluster_id = cluster_id;
    options.resolved_ts_interval = std::chrono::milliseconds(0);
    Result<std::unique_ptr<simkv::SimCluster>> cluster =
        simkv::SimCluster::Start(std::move(options));
    EXPECT_TRUE(cluster.ok()) << cluster.status().ToString();
    return cluster.ok() ? std::move(cluster).value() : nullptr;
  }

  PdClientOptions Options() const {
    PdClientOptions options;
    options.endpoints = {cluster_->pd_address()};
    options.rpc_timeout = std::chrono::milliseconds(2000);
    options.backoff_base = std::chrono::milliseconds(20);
    options.backoff_max = std::chrono::milliseconds(200);
    return options;
  }

  std::unique_ptr<PdClient> Connect(PdClientOptions options) {
    Result<std::unique_ptr<PdClient>> client = PdClient::Connect(std::move(options));
    EXPECT_TRUE(client.ok()) << client.status().ToString();
    return client.ok() ? std::move(client).value() : nullptr;
  }
  std::unique_ptr<PdClient> Connect() { return Connect(Options()); }

  void TearDown() override {
    if (cluster_) cluster_->Stop();
  }

  std::unique_ptr<simkv::SimCluster> cluster_;
};

}  // namespace sluice::pd::testing
