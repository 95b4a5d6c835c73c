// Lifecycle API: create/list/query, validation, GC check, pause/resume with
// epochs persisted before AddMaintainer, update, remove.
#include <string>
#include <thread>
#include <vector>

#include "coordinator/coordinator_test_util.h"

namespace sluice::coordinator {
namespace {

// Every AddMaintainer carried the epoch the store already held.
void ExpectEpochsPersistedFirst(const FakeMaintainers& m) {
  for (const SentAdd& add : m.adds) EXPECT_EQ(add.request.epoch, add.stored_epoch);
}

TEST_F(CoordinatorTest, CreateListAndQuery) {
  ASSERT_TRUE(coord_->CreateChangefeed(NewInfo("feed-a")).ok());
  meta::ChangefeedInfo b = NewInfo("feed-b", 0);  // Start ts = current TSO.
  ASSERT_TRUE(coord_->CreateChangefeed(b).ok());
  EXPECT_EQ(coord_->CreateChangefeed(NewInfo("feed-a")).code(), Code::kAlreadyExists);

  std::vector<ChangefeedView> list = coord_->ListChangefeeds();
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0].info.id.name, "feed-a");
  EXPECT_EQ(list[0].info.state, meta::FeedState::kNormal);
  EXPECT_EQ(list[0].status.checkpoint_ts, Ts(1000));
  EXPECT_GE(list[1].info.start_ts, Ts(1000000));
  EXPECT_EQ(StoredInfo("feed-b").start_ts, list[1].info.start_ts);

  Result<ChangefeedView> a = coord_->GetChangefeed(Id("feed-a"));
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->node, NodeId("node-a"));
  EXPECT_GT(a->info.epoch, MaintainerEpoch(0));
  EXPECT_EQ(a->info.epoch, StoredEpoch("feed-a"));
  EXPECT_EQ(coord_->GetChangefeed(Id("nope")).status().code(), Code::kNotFound);

  ASSERT_EQ(maintainers_->adds.size(), 2u);
  EXPECT_TRUE(maintainers_->adds[0].request.is_new_changefeed);
  EXPECT_EQ(maintainers_->adds[0].request.checkpoint_ts, Ts(1000));
  ExpectEpochsPersistedFirst(*maintainers_);
}

TEST_F(CoordinatorTest, CreateValidatesLikeTiCdc) {
  const std::vector<std::string> bad = {"", "bad_name", "-x", "x-", "a--b", std::string(129, 'a')};
  for (const std::string& name : bad) {
    EXPECT_EQ(coord_->CreateChangefeed(NewInfo(name)).code(), Code::kInvalidArgument) << name;
  }
  EXPECT_TRUE(coord_->CreateChangefeed(NewInfo(std::string(128, 'a'))).ok());
  meta::ChangefeedInfo no_sink = NewInfo("no-sink");
  no_sink.sink_uri.clear();
  EXPECT_EQ(coord_->CreateChangefeed(no_sink).code(), Code::kInvalidArgument);
  meta::ChangefeedInfo bad_target = NewInfo("bad-target");
  bad_target.target_ts = Ts(999);
  EXPECT_EQ(coord_->CreateChangefeed(bad_target).code(), Code::kInvalidArgument);
  EXPECT_EQ(coord_->CreateChangefeed(NewInfo("future", 1ull << 40)).code(), Code::kInvalidArgument);
  EXPECT_EQ(coord_->ListChangefeeds().size(), 1u);
}

TEST_F(CoordinatorTest, StartTsBelowGcSafepointIsRejected) {
  gc_.gc_safepoint = Ts(5000);
  EXPECT_EQ(coord_->CreateChangefeed(NewInfo("old", 4999)).code(), Code::kGcSafepointExceeded);
  EXPECT_EQ(meta_->GetChangefeedInfo(Id("old")).status().code(), Code::kNotFound);
  EXPECT_TRUE(maintainers_->adds.empty());
  EXPECT_TRUE(coord_->CreateChangefeed(NewInfo("ok", 5000)).ok());
}

TEST_F(CoordinatorTest, PauseAndResumeBumpPersistedEpochs) {
  ASSERT_TRUE(coord_->CreateChangefeed(NewInfo("cf")).ok());
  const MaintainerEpoch e1 = StoredEpoch("cf");

  ASSERT_TRUE(coord_->PauseChangefeed(Id("cf")).ok());
  meta::ChangefeedInfo paused = StoredInfo("cf");
  EXPECT_EQ(paused.state, meta::FeedState::kStopped);
  EXPECT_EQ(paused.admin_job_type, meta::AdminJobType::kStop);
  EXPECT_GT(paused.epoch, e1);
  ASSERT_EQ(maintainers_->removes.size(), 1u);
  EXPECT_EQ(maintainers_->removes[0].request.epoch, e1);  // Stopped with its own epoch.
  EXPECT_FALSE(maintainers_->removes[0].request.removed);
  EXPECT_FALSE(coord_->GetChangefeed(Id("cf"))->node.has_value());
  EXPECT_TRUE(coord_->PauseChangefeed(Id("cf")).ok());  // Idempotent.
  EXPECT_EQ(maintainers_->removes.size(), 1u);

  ASSERT_TRUE(coord_->ResumeChangefeed(Id("cf"), std::nullopt).ok());
  ASSERT_EQ(maintainers_->adds.size(), 2u);
  EXPECT_GT(maintainers_->adds[1].request.epoch, paused.epoch);
  EXPECT_FALSE(maintainers_->adds[1].request.is_new_changefeed);
  EXPECT_EQ(StoredInfo("cf").state, meta::FeedState::kNormal);
  EXPECT_EQ(coord_->ResumeChangefeed(Id("cf"), std::nullopt).code(), Code::kInvalidArgument);
  ExpectEpochsPersistedFirst(*maintainers_);
}

TEST_F(CoordinatorTest, ResumeWithCheckpointIsCheckedAndPersisted) {
  ASSERT_TRUE(coord_->CreateChangefeed(NewInfo("cf", 3000)).ok());
  ASSERT_TRUE(coord_->PauseChangefeed(Id("cf")).ok());
  gc_.gc_safepoint = Ts(2000);
  EXPECT_EQ(coord_->ResumeChangefeed(Id("cf"), Ts(1500)).code(), Code::kGcSafepointExceeded);
  EXPECT_EQ(StoredInfo("cf").state, meta::FeedState::kStopped);
  ASSERT_TRUE(coord_->ResumeChangefeed(Id("cf"), Ts(2500)).ok());
  EXPECT_EQ(StoredCheckpoint("cf"), Ts(2500));  // An explicit move back.
  EXPECT_EQ(maintainers_->adds.back().request.checkpoint_ts, Ts(2500));
}

TEST_F(CoordinatorTest, UpdateOnlyWhileStopped) {
  ASSERT_TRUE(coord_->CreateChangefeed(NewInfo("cf")).ok());
  ChangefeedUpdate update;
  update.sink_uri = "mysql://root@127.0.0.1:3306/";
  EXPECT_EQ(coord_->UpdateChangefeed(Id("cf"), update).code(), Code::kInvalidArgument);
  EXPECT_EQ(StoredInfo("cf").sink_uri, "blackhole://");

  ASSERT_TRUE(coord_->PauseChangefeed(Id("cf")).ok());
  ASSERT_TRUE(coord_->UpdateChangefeed(Id("cf"), update).ok());
  EXPECT_EQ(StoredInfo("cf").sink_uri, "mysql://root@127.0.0.1:3306/");
  EXPECT_EQ(StoredInfo("cf").state, meta::FeedState::kStopped);
  ChangefeedUpdate bad;
  bad.target_ts = Ts(10);
  EXPECT_EQ(coord_->UpdateChangefeed(Id("cf"), bad).code(), Code::kInvalidArgument);
  EXPECT_EQ(coord_->UpdateChangefeed(Id("nope"), update).code(), Code::kNotFound);
}

TEST_F(CoordinatorTest, RemoveDeletesAndStopsTheMaintainer) {
  ASSERT_TRUE(coord_->CreateChangefeed(NewInfo("cf")).ok());
  const MaintainerEpoch epoch = StoredEpoch("cf");
  ASSERT_TRUE(coord_->RemoveChangefeed(Id("cf")).ok());
  EXPECT_EQ(meta_->GetChangefeedInfo(Id("cf")).status().code(), Code::kNotFound);
  EXPECT_EQ(meta_->GetChangefeedStatus(Id("cf")).status().code(), Code::kNotFound);
  ASSERT_EQ(maintainers_->removes.size(), 1u);
  EXPECT_EQ(maintainers_->removes[0].request.epoch, epoch);
  EXPECT_TRUE(maintainers_->removes[0].request.cascade);
  EXPECT_TRUE(maintainers_->removes[0].request.removed);
  EXPECT_TRUE(coord_->ListChangefeeds().empty());
  EXPECT_EQ(coord_->RemoveChangefeed(Id("cf")).code(), Code::kNotFound);
  EXPECT_TRUE(coord_->CreateChangefeed(NewInfo("cf")).ok());  // The name is free again.
  EXPECT_GT(StoredEpoch("cf"), epoch);                        // TSO candidate: epochs still grow.
}

TEST_F(CoordinatorTest, ReachingTargetTsFinishes) {
  meta::ChangefeedInfo info = NewInfo("cf");
  info.target_ts = Ts(5000);
  ASSERT_TRUE(coord_->CreateChangefeed(info).ok());
  coord_->OnMaintainerStatus(NodeId("node-a"), Working("cf", 4000));
  EXPECT_EQ(StoredInfo("cf").state, meta::FeedState::kNormal);
  coord_->OnMaintainerStatus(NodeId("node-a"), Working("cf", 5000));
  EXPECT_EQ(StoredInfo("cf").state, meta::FeedState::kFinished);
  EXPECT_EQ(maintainers_->removes.size(), 1u);
  EXPECT_EQ(coord_->ResumeChangefeed(Id("cf"), std::nullopt).code(), Code::kInvalidArgument);
}

TEST_F(CoordinatorTest, ConcurrentCallersAreSerialized) {
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([this, t] {
      for (int i = 0; i < 5; ++i) {
        const std::string name = "t" + std::to_string(t) + "-" + std::to_string(i);
        EXPECT_TRUE(coord_->CreateChangefeed(NewInfo(name)).ok());
        EXPECT_TRUE(coord_->PauseChangefeed(Id(name)).ok());
        coord_->ListChangefeeds();
        coord_->Tick();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(coord_->ListChangefeeds().size(), 20u);
  EXPECT_EQ(meta_->ListChangefeeds()->feeds.size(), 20u);
  ExpectEpochsPersistedFirst(*maintainers_);
}

}  // namespace
}  // namespace sluice::coordinator
