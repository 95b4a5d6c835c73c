#include "simkv/fault_schedule.h"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "common/clock.h"

namespace sluice::simkv {
namespace {

using std::chrono::milliseconds;

class FaultScheduleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SimClusterOptions options;
    options.raw_split_keys = {"b", "m"};
    options.clock = &clock_;
    options.resolved_ts_interval = milliseconds(0);
    auto cluster = SimCluster::Start(options);
    ASSERT_TRUE(cluster.ok()) << cluster.status().ToString();
    cluster_ = std::move(cluster).value();
  }
  void TearDown() override { cluster_->Stop(); }

  FaultScheduleOptions Options(std::string_view spec, uint64_t seed) {
    FaultScheduleOptions base;
    base.seed = seed;
    base.clock = &clock_;
    auto options = ParseFaultSpec(spec, base);
    EXPECT_TRUE(options.ok()) << options.status().ToString();
    return *options;
  }

  ManualClock clock_;
  std::unique_ptr<SimCluster> cluster_;
};

TEST(FaultSpecTest, ParsesWeightsAndParameters) {
  auto o = ParseFaultSpec("split=3,merge=2,leader=2,restart=1,busy=1,drop=1;interval=500ms");
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_EQ(o->weights[static_cast<size_t>(FaultKind::kSplit)], 3);
  EXPECT_EQ(o->weights[static_cast<size_t>(FaultKind::kTransferLeader)], 2);
  EXPECT_EQ(o->weights[static_cast<size_t>(FaultKind::kCongest)], 0);
  EXPECT_EQ(o->interval, milliseconds(500));
  auto p = ParseFaultSpec("congest=1,epoch=4;down_for=2s,busy_for=1m,max_regions=9");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->down_for, std::chrono::seconds(2));
  EXPECT_EQ(p->busy_for, std::chrono::minutes(1));
  EXPECT_EQ(p->max_regions, 9u);
  EXPECT_TRUE(ParseFaultSpec("").ok());
}

TEST(FaultSpecTest, BadTokensAreNamed) {
  for (const char* bad : {"splt=1", "split=x", "split", "split=-1", "split=1;interval=5",
                          "split=1;speed=1s", "split=1;interval=0ms", "a;b;c"}) {
    auto o = ParseFaultSpec(bad);
    ASSERT_FALSE(o.ok()) << bad;
    EXPECT_EQ(o.status().code(), Code::kInvalidArgument);
    EXPECT_NE(o.status().message().find("bad token"), std::string_view::npos) << bad;
  }
  EXPECT_NE(ParseFaultSpec("split=1,bogus=2").status().message().find("'bogus=2'"),
            std::string_view::npos);
}

std::vector<std::string> RunSchedule(const std::string& spec, uint64_t seed) {
  ManualClock clock;
  SimClusterOptions options;
  options.raw_split_keys = {"b", "m"};
  options.clock = &clock;
  options.resolved_ts_interval = milliseconds(0);
  auto cluster = SimCluster::Start(options);
  EXPECT_TRUE(cluster.ok());
  FaultScheduleOptions base;
  base.seed = seed;
  base.clock = &clock;
  FaultSchedule schedule(cluster->get(), *ParseFaultSpec(spec, base));
  for (int i = 0; i < 40; ++i) {
    clock.Advance(milliseconds(100));
    schedule.Tick();
  }
  std::vector<std::string> out;
  for (const FaultRecord& r : schedule.records()) out.push_back(r.ToString());
  schedule.Stop();
  (*cluster)->Stop();
  return out;
}

TEST(FaultScheduleDeterminism, SameSeedSameFaults) {
  const std::string spec =
      "split=3,merge=2,leader=2,restart=1,busy=1,drop=1,congest=1,epoch=1;interval=200ms,"
      "down_for=300ms,busy_for=300ms";
  std::vector<std::string> a = RunSchedule(spec, 42);
  std::vector<std::string> b = RunSchedule(spec, 42);
  EXPECT_GE(a.size(), 15u);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, RunSchedule(spec, 43));
}

TEST_F(FaultScheduleTest, NoWeightsNoFaults) {
  FaultSchedule schedule(cluster_.get(), Options("", 1));
  clock_.Advance(std::chrono::seconds(10));
  EXPECT_EQ(schedule.Tick(), 0u);
}

TEST_F(FaultScheduleTest, SplitAndMergeChangeRegionCount) {
  FaultSchedule schedule(cluster_.get(), Options("", 1));
  ASSERT_EQ(cluster_->regions().size(), 3u);
  FaultRequest split;
  split.kind = FaultKind::kSplit;
  FaultRecord rec = schedule.Inject(split);
  ASSERT_TRUE(rec.status.ok()) << rec.ToString();
  EXPECT_EQ(cluster_->regions().size(), 4u);
  FaultRequest merge;
  merge.kind = FaultKind::kMerge;
  rec = schedule.Inject(merge);
  ASSERT_TRUE(rec.status.ok()) << rec.ToString();
  EXPECT_EQ(cluster_->regions().size(), 3u);
}

TEST_F(FaultScheduleTest, TransferLeaderAndBumpEpoch) {
  FaultSchedule schedule(cluster_.get(), Options("", 1));
  FaultRequest req;
  req.kind = FaultKind::kTransferLeader;
  FaultRecord rec = schedule.Inject(req);
  ASSERT_TRUE(rec.status.ok()) << rec.ToString();
  EXPECT_EQ(cluster_->regions().RegionById(rec.region)->leader, rec.store);
  req.kind = FaultKind::kBumpEpoch;
  req.region = rec.region;
  uint64_t conf_ver = cluster_->regions().RegionById(rec.region)->epoch.conf_ver;
  ASSERT_TRUE(schedule.Inject(req).status.ok());
  EXPECT_EQ(cluster_->regions().RegionById(rec.region)->epoch.conf_ver, conf_ver + 1);
}

TEST_F(FaultScheduleTest, StoreDownThenRestartAfterDelay) {
  FaultSchedule schedule(cluster_.get(), Options(";down_for=1s", 1));
  FaultRequest req;
  req.kind = FaultKind::kStoreRestart;
  req.store = StoreId(2);
  ASSERT_TRUE(schedule.Inject(req).status.ok());
  EXPECT_FALSE(cluster_->StoreIsUp(StoreId(2)));
  clock_.Advance(milliseconds(500));
  schedule.Tick();
  EXPECT_FALSE(cluster_->StoreIsUp(StoreId(2)));
  clock_.Advance(milliseconds(500));
  schedule.Tick();
  EXPECT_TRUE(cluster_->StoreIsUp(StoreId(2)));
  std::vector<FaultRecord> records = schedule.records();
  ASSERT_EQ(records.size(), 2u);
  EXPECT_TRUE(records[1].restore);
}

TEST_F(FaultScheduleTest, StoreFaultsOnUnknownStoreFail) {
  FaultSchedule schedule(cluster_.get(), Options("", 1));
  for (FaultKind kind : {FaultKind::kStoreRestart, FaultKind::kStoreBusy, FaultKind::kDropStreams,
                         FaultKind::kCongest}) {
    FaultRequest req;
    req.kind = kind;
    req.store = StoreId(99);
    EXPECT_FALSE(schedule.Inject(req).status.ok()) << FaultKindName(kind);
  }
  for (StoreId id : cluster_->store_ids()) EXPECT_TRUE(cluster_->StoreIsUp(id));
}

}  // namespace
}  // namespace sluice::simkv
