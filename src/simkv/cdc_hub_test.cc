// CdcHub without gRPC: registration races with region operations, scan
// stitching by apply index, and the budget of rows buffered during a scan.
#include "simkv/cdc_hub.h"

#include <gtest/gtest.h>

#include "common/memcomparable.h"
#include "simkv/txn_client.h"

namespace sluice::simkv {
namespace {

class CdcHubTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RegionMapOptions options;
    options.stores = {StoreId(1)};
    options.raw_split_keys = {"b", "m"};
    regions_ = std::move(RegionMap::Bootstrap(options)).value();
    hub_ = std::make_unique<CdcHub>(options_, &store_, regions_.get(), &tso_);
    store_.AddObserver(hub_.get());
  }
  void TearDown() override { store_.RemoveObserver(hub_.get()); }

  RegionInfo Region(std::string_view raw_key) {
    return *regions_->RegionForKey(memcomparable::EncodeBytes(raw_key));
  }

  std::shared_ptr<const DownstreamSpec> Spec(const RegionInfo& region, uint64_t request_id,
                                             std::shared_ptr<StreamSink> sink) {
    auto spec = std::make_shared<DownstreamSpec>();
    spec->id = next_id_++;
    spec->conn_id = 1;
    spec->request_id = request_id;
    spec->region_id = region.id;
    spec->epoch = region.epoch;
    spec->start_key = region.start_key;
    spec->end_key = region.end_key;
    spec->sink = std::move(sink);
    return spec;
  }

  // Drains the sink into a flat list of events.
  static std::vector<cdcpb::Event> Drain(StreamSink& sink) {
    std::vector<cdcpb::Event> events;
    sink.Close();
    while (auto message = sink.NextMessage(CancelToken())) {
      for (const cdcpb::Event& event : message->events()) events.push_back(event);
    }
    return events;
  }

  void Write(const std::string& key, const std::string& value) {
    Result<Txn> txn = txn_.Begin();
    txn->Put(key, value);
    ASSERT_TRUE(txn_.Commit(*txn).ok());
  }

  CdcHubOptions options_{StoreId(1)};
  MvccStore store_;
  TsoAllocator tso_;
  std::unique_ptr<RegionMap> regions_;
  std::unique_ptr<CdcHub> hub_;
  TxnClient txn_{&store_, &tso_};
  uint64_t next_id_ = 1;
};

TEST_F(CdcHubTest, RegisterAfterAnUnreconciledSplitEndsTheStaleSubscription) {
  auto sink = std::make_shared<StreamSink>();
  RegionInfo old_region = Region("c");
  auto old_spec = Spec(old_region, 1, sink);
  ASSERT_TRUE(std::holds_alternative<ScanTask>(hub_->Register(old_spec)));
  hub_->FinishScan(*old_spec, store_.applied_index());
  ASSERT_TRUE(regions_->Split(old_region.id, "f").ok());  // No Reconcile().
  RegionInfo right = Region("g");
  auto right_spec = Spec(right, 2, sink);
  ASSERT_TRUE(std::holds_alternative<ScanTask>(hub_->Register(right_spec)));
  hub_->FinishScan(*right_spec, store_.applied_index());
  Write("g1", "v");
  std::vector<cdcpb::Event> events = Drain(*sink);
  ASSERT_GE(events.size(), 3u);
  EXPECT_TRUE(events[1].error().has_epoch_not_match());  // After old's INITIALIZED.
  EXPECT_EQ(events[1].request_id(), 1u);
  EXPECT_EQ(events.back().request_id(), 2u);  // The write reached the new region.
  EXPECT_EQ(events.back().entries().entries(0).key(), "g1");
  EXPECT_EQ(hub_->NumSubscriptions(), 1u);
}

TEST_F(CdcHubTest, RowsBufferedDuringTheScanAreSentAfterInitializedIfNewer) {
  auto sink = std::make_shared<StreamSink>();
  auto spec = Spec(Region("c"), 1, sink);
  ASSERT_TRUE(std::holds_alternative<ScanTask>(hub_->Register(spec)));
  Write("c1", "in the snapshot");
  uint64_t snapshot = store_.applied_index();
  Write("c2", "after the snapshot");
  hub_->FinishScan(*spec, snapshot);
  std::vector<cdcpb::Event> events = Drain(*sink);
  ASSERT_EQ(events.size(), 3u);  // INITIALIZED, c2's prewrite, c2's commit.
  EXPECT_EQ(events[0].entries().entries(0).type(), cdcpb::Event::INITIALIZED);
  EXPECT_EQ(events[1].entries().entries(0).key(), "c2");
  EXPECT_GT(events[1].index(), snapshot);
  EXPECT_EQ(events[2].entries().entries(0).type(), cdcpb::Event::COMMIT);
}

TEST_F(CdcHubTest, TooManyRowsBufferedDuringTheScanCongestTheSubscription) {
  options_.max_pending_bytes = 1024;
  store_.RemoveObserver(hub_.get());
  hub_ = std::make_unique<CdcHub>(options_, &store_, regions_.get(), &tso_);
  store_.AddObserver(hub_.get());
  auto sink = std::make_shared<StreamSink>();
  auto spec = Spec(Region("c"), 1, sink);
  ASSERT_TRUE(std::holds_alternative<ScanTask>(hub_->Register(spec)));
  Write("c1", std::string(2048, 'x'));
  EXPECT_EQ(hub_->NumSubscriptions(), 0u);
  hub_->FinishScan(*spec, 0);  // Too late: nothing more is sent.
  std::vector<cdcpb::Event> events = Drain(*sink);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_TRUE(events[0].error().has_congested());
}

}  // namespace
}  // namespace sluice::simkv
