// Test support for the kvclient tests: a fixture that runs a SimCluster on
// loopback (the meta keys in a region of their own), connects a PdClient,
// a RegionCache and a SnapshotReader to it, and writes TiDB's schema with the
// simkv workload.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/memcomparable.h"
#include "kvclient/meta_reader.h"
#include "kvclient/snapshot_reader.h"
#include "pd/pd_client.h"
#include "pd/region_cache.h"
#include "simkv/sim_cluster.h"
#include "simkv/workload.h"

namespace sluice::kvclient::testing {

class KvClientTest : public ::testing::Test {
 protected:
  // Regions (-inf, "m"), ["m", "t"), ["t", +inf): the meta keys in the middle.
  void StartCluster(std::vector<std::string> raw_split_keys = {"m", "t"}) {
    simkv::SimClusterOptions options;
    options.raw_split_keys = std::move(raw_split_keys);
    options.resolved_ts_interval = std::chrono::milliseconds(0);
    Result<std::unique_ptr<simkv::SimCluster>> cluster =
        simkv::SimCluster::Start(std::move(options));
    ASSERT_TRUE(cluster.ok()) << cluster.status().ToString();
    cluster_ = std::move(cluster).value();

    pd::PdClientOptions pd_options;
    pd_options.endpoints = {cluster_->pd_address()};
    // Generous: a sanitizer build running beside other tests is slow.
    pd_options.rpc_timeout = std::chrono::milliseconds(5000);
    pd_options.backoff_base = std::chrono::milliseconds(20);
    pd_options.backoff_max = std::chrono::milliseconds(200);
    Result<std::unique_ptr<pd::PdClient>> pd = pd::PdClient::Connect(std::move(pd_options));
    ASSERT_TRUE(pd.ok()) << pd.status().ToString();
    pd_ = std::move(pd).value();
    cache_ = std::make_unique<pd::RegionCache>(pd_.get());
    reader_ = NewReader(ReaderOptions());
    meta_ = std::make_unique<KvMetaReader>(pd_.get(), reader_.get());
  }

  // Small batches, so that one hash takes several KvScans.
  static SnapshotReaderOptions ReaderOptions() {
    SnapshotReaderOptions options;
    options.scan_batch = 2;
    options.timeout = std::chrono::seconds(20);
    options.rpc_timeout = std::chrono::seconds(2);
    options.backoff.base = std::chrono::milliseconds(10);
    options.backoff.max = std::chrono::milliseconds(100);
    return options;
  }

  std::unique_ptr<SnapshotReader> NewReader(SnapshotReaderOptions options) {
    return std::make_unique<SnapshotReader>(pd_.get(), cache_.get(), std::move(options));
  }

  // A workload writing to the cluster's store: bootstrap, database
  // "workload" and its tables t1, t2.
  void StartWorkload() {
    simkv::WorkloadOptions options;
    options.seed = 7;
    options.kitchen_sink_table = false;
    workload_ = std::make_unique<simkv::Workload>(&cluster_->mvcc(), &cluster_->tso(), options);
    Status setup = workload_->Setup();
    ASSERT_TRUE(setup.ok()) << setup.ToString();
  }

  void RunDdl(simkv::DdlRequest request) {
    Result<model::Job> job = workload_->RunDdl(request);
    ASSERT_TRUE(job.ok()) << job.status().ToString();
  }

  Ts Now() {
    Result<Ts> ts = pd_->GetTs();
    EXPECT_TRUE(ts.ok()) << ts.status().ToString();
    return ts.ok() ? *ts : Ts();
  }

  simkv::RegionInfo RegionOf(std::string_view raw_key) {
    Result<simkv::RegionInfo> region =
        cluster_->regions().RegionForKey(memcomparable::EncodeBytes(raw_key));
    EXPECT_TRUE(region.ok());
    return region.ok() ? *region : simkv::RegionInfo{};
  }

  // A store other than `store` that holds a peer of `region`.
  static StoreId OtherPeerStore(const simkv::RegionInfo& region, StoreId store) {
    for (const simkv::Peer& peer : region.peers) {
      if (peer.store_id != store) return peer.store_id;
    }
    return StoreId();
  }

  void TearDown() override {
    if (reader_) reader_->Stop();
    if (workload_) workload_->Stop().IgnoreError();
    if (pd_) pd_->Stop();
    if (cluster_) cluster_->Stop();
  }

  std::unique_ptr<simkv::SimCluster> cluster_;
  std::unique_ptr<pd::PdClient> pd_;
  std::unique_ptr<pd::RegionCache> cache_;
  std::unique_ptr<SnapshotReader> reader_;
  std::unique_ptr<KvMetaReader> meta_;
  std::unique_ptr<simkv::Workload> workload_;
};

}  // namespace sluice::kvclient::testing
