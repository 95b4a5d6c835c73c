#include "meta/meta_client.h"

#include <thread>

#include "common/test_util.h"
#include "meta/meta_test_util.h"

namespace sluice::meta {
namespace {

using std::chrono::seconds;

class MetaClientTest : public MetaBackendTest {
 protected:
  void SetUp() override {
    MetaBackendTest::SetUp();
    client_ = std::make_unique<MetaClient>(store_, KeyLayout("default"));
  }
  void TearDown() override {
    client_.reset();
    MetaBackendTest::TearDown();
  }

  static ChangefeedInfo Info(const std::string& name) {
    ChangefeedInfo info;
    info.id = ChangefeedId{"default", name};
    info.sink_uri = "blackhole://";
    info.start_ts = Ts(100);
    return info;
  }

  static ChangefeedStatus Checkpoint(uint64_t ts) {
    ChangefeedStatus status;
    status.checkpoint_ts = Ts(ts);
    return status;
  }

  std::unique_ptr<MetaClient> client_;
};

SLUICE_META_BACKENDS(MetaClientTest);

TEST_P(MetaClientTest, CreateGetAndList) {
  ASSERT_TRUE(client_->CreateChangefeed(Info("a"), Checkpoint(100)).ok());
  ASSERT_TRUE(client_->CreateChangefeed(Info("b"), Checkpoint(100)).ok());
  EXPECT_EQ(client_->CreateChangefeed(Info("a"), ChangefeedStatus{}).status().code(),
            Code::kAlreadyExists);
  EXPECT_EQ(client_->CreateChangefeed(Info("bad/name"), ChangefeedStatus{}).status().code(),
            Code::kInvalidArgument);
  Result<Versioned<ChangefeedInfo>> a = client_->GetChangefeedInfo(ChangefeedId{"default", "a"});
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->value, Info("a"));
  EXPECT_EQ(client_->GetChangefeedStatus(a->value.id)->value.checkpoint_ts, Ts(100));
  EXPECT_EQ(client_->GetChangefeedInfo(ChangefeedId{"default", "zz"}).status().code(),
            Code::kNotFound);

  // A corrupt value fails only its own changefeed.
  ASSERT_TRUE(
      store_->Put(client_->layout().ChangefeedInfoKey(ChangefeedId{"other", "c"}), "{oops").ok());
  Result<ChangefeedList> list = client_->ListChangefeeds();
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->feeds.size(), 2u);
  EXPECT_EQ(list->feeds[0].value.id.name, "a");
  ASSERT_EQ(list->bad.size(), 1u);
  EXPECT_EQ(list->bad[0].error.code(), Code::kCorruption);
  EXPECT_EQ(client_->GetChangefeedInfo(ChangefeedId{"other", "c"}).status().code(),
            Code::kCorruption);
}

TEST_P(MetaClientTest, BumpMaintainerEpochIsCompareAndSwap) {
  ASSERT_TRUE(client_->CreateChangefeed(Info("cf"), ChangefeedStatus{}).ok());
  const ChangefeedId id{"default", "cf"};
  const Revision rev = client_->GetChangefeedInfo(id)->mod_revision;

  Result<EpochBump> first = client_->BumpMaintainerEpoch(id, rev);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->epoch, MaintainerEpoch(1));
  // The old revision lost: typed, retryable, nothing written.
  Result<EpochBump> stale = client_->BumpMaintainerEpoch(id, rev);
  EXPECT_EQ(stale.status().code(), Code::kAborted);
  EXPECT_TRUE(stale.status().retryable());
  // A TSO candidate above the current epoch is taken as is; one below is not.
  Result<EpochBump> tso = client_->BumpMaintainerEpoch(id, first->revision, MaintainerEpoch(500));
  EXPECT_EQ(tso->epoch, MaintainerEpoch(500));
  Result<EpochBump> low = client_->BumpMaintainerEpoch(id, tso->revision, MaintainerEpoch(7));
  EXPECT_EQ(low->epoch, MaintainerEpoch(501));
  EXPECT_EQ(client_->GetChangefeedInfo(id)->value.epoch, MaintainerEpoch(501));
  ASSERT_TRUE(Reopen().ok());
  client_ = std::make_unique<MetaClient>(store_, KeyLayout("default"));
  EXPECT_EQ(client_->GetChangefeedInfo(id)->value.epoch, MaintainerEpoch(501));
}

TEST_P(MetaClientTest, RacingCoordinatorsOneEpochWins) {
  ASSERT_TRUE(client_->CreateChangefeed(Info("cf"), ChangefeedStatus{}).ok());
  const ChangefeedId id{"default", "cf"};
  const Revision rev = client_->GetChangefeedInfo(id)->mod_revision;
  constexpr int kRacers = 8;
  std::vector<Status> results(kRacers);
  std::vector<std::thread> racers;
  for (int i = 0; i < kRacers; ++i) {
    racers.emplace_back([&, i] { results[i] = client_->BumpMaintainerEpoch(id, rev).status(); });
  }
  for (std::thread& t : racers) t.join();
  int won = 0;
  for (const Status& st : results) {
    if (st.ok())
      ++won;
    else
      EXPECT_EQ(st.code(), Code::kAborted);
  }
  EXPECT_EQ(won, 1);
  EXPECT_EQ(client_->GetChangefeedInfo(id)->value.epoch, MaintainerEpoch(1));
}

TEST_P(MetaClientTest, StatusUpdatesAndRemove) {
  ASSERT_TRUE(client_->CreateChangefeed(Info("cf"), Checkpoint(100)).ok());
  const ChangefeedId id{"default", "cf"};
  const Revision rev = client_->GetChangefeedStatus(id)->mod_revision;
  ChangefeedStatus next = Checkpoint(200);
  next.min_table_barrier_ts = Ts(150);
  Result<Revision> moved = client_->UpdateChangefeedStatus(id, next, rev);
  ASSERT_TRUE(moved.ok());
  EXPECT_EQ(client_->UpdateChangefeedStatus(id, next, rev).status().code(), Code::kAborted);
  EXPECT_TRUE(client_->UpdateChangefeedStatus(id, next, std::nullopt).ok());
  EXPECT_EQ(client_->GetChangefeedStatus(id)->value, next);

  const Revision info_rev = client_->GetChangefeedInfo(id)->mod_revision;
  ChangefeedInfo info = Info("cf");
  info.state = FeedState::kStopped;
  info.admin_job_type = AdminJobType::kStop;
  ASSERT_TRUE(client_->UpdateChangefeedInfo(info, info_rev).ok());
  EXPECT_EQ(client_->UpdateChangefeedInfo(info, info_rev).status().code(), Code::kAborted);
  EXPECT_EQ(client_->RemoveChangefeed(id, info_rev).status().code(), Code::kAborted);
  ASSERT_TRUE(client_->RemoveChangefeed(id, std::nullopt).ok());
  EXPECT_EQ(client_->RemoveChangefeed(id, std::nullopt).status().code(), Code::kNotFound);
  EXPECT_EQ(client_->GetChangefeedStatus(id).status().code(), Code::kNotFound);
}

TEST_P(MetaClientTest, CapturesLiveOnTheirLease) {
  LeaseGrant l1 = *store_->GrantLease(seconds(1));
  LeaseGrant l2 = *store_->GrantLease(seconds(30));
  CaptureInfo n1{NodeId("n1"), "10.0.0.1:8300", "v0.1.0", "", "", 0, ""};
  CaptureInfo n2{NodeId("n2"), "10.0.0.2:8300", "v0.1.0", "", "", 0, ""};
  ASSERT_TRUE(client_->RegisterCapture(n1, l1.id).ok());
  ASSERT_TRUE(client_->RegisterCapture(n2, l2.id).ok());
  EXPECT_EQ(client_->ListCaptures()->captures.size(), 2u);
  ASSERT_TRUE(store_->KeepAlive(l2.id).ok());
  // n1's lease is not kept alive: its registration goes with it.
  ASSERT_TRUE(
      PollUntil([&] { return client_->ListCaptures()->captures.size() == 1; }, seconds(15)));
  Result<CaptureList> alive = client_->ListCaptures();
  ASSERT_EQ(alive->captures.size(), 1u);
  EXPECT_EQ(alive->captures[0].value, n2);
  ASSERT_TRUE(client_->DeregisterCapture(n2.id).ok());
  EXPECT_TRUE(client_->ListCaptures()->captures.empty());
}

}  // namespace
}  // namespace sluice::meta
