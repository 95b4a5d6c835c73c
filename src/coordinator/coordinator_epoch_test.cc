// Epochs and progress: stale statuses dropped, checkpoints persisted and
// monotonic, GC safepoint, node moves, CAS conflicts, restart recovery.
#include "coordinator/coordinator_test_util.h"

namespace sluice::coordinator {
namespace {

using std::chrono::minutes;

TEST_F(CoordinatorTest, StaleEpochStatusIsDropped) {
  ASSERT_TRUE(coord_->CreateChangefeed(NewInfo("cf")).ok());
  const MaintainerStatus old_generation = Working("cf", 5000);
  ASSERT_TRUE(coord_->PauseChangefeed(Id("cf")).ok());
  ASSERT_TRUE(coord_->ResumeChangefeed(Id("cf"), std::nullopt).ok());

  coord_->OnMaintainerStatus(NodeId("node-a"), old_generation);
  MaintainerStatus wrong_node = Working("cf", 6000);
  coord_->OnMaintainerStatus(NodeId("node-x"), wrong_node);
  MaintainerStatus unknown = Working("cf", 6000);
  unknown.id = Id("other");
  coord_->OnMaintainerStatus(NodeId("node-a"), unknown);

  EXPECT_EQ(coord_->Stats().stale_statuses_dropped, 2u);
  EXPECT_EQ(coord_->Stats().unknown_statuses_dropped, 1u);
  EXPECT_EQ(StoredCheckpoint("cf"), Ts(1000));
  coord_->OnMaintainerStatus(NodeId("node-a"), Working("cf", 6000));
  EXPECT_EQ(StoredCheckpoint("cf"), Ts(6000));
}

TEST_F(CoordinatorTest, CheckpointIsPersistedAndNeverGoesBack) {
  ASSERT_TRUE(coord_->CreateChangefeed(NewInfo("cf")).ok());
  coord_->OnMaintainerStatus(NodeId("node-a"), Working("cf", 2000));
  EXPECT_EQ(StoredCheckpoint("cf"), Ts(2000));
  coord_->OnMaintainerStatus(NodeId("node-a"), Working("cf", 1500));
  EXPECT_EQ(StoredCheckpoint("cf"), Ts(2000));
  EXPECT_EQ(coord_->GetChangefeed(Id("cf"))->status.checkpoint_ts, Ts(2000));
  coord_->OnMaintainerStatus(NodeId("node-a"), Working("cf", 3000));
  EXPECT_EQ(StoredCheckpoint("cf"), Ts(3000));
}

TEST_F(CoordinatorTest, GcSafepointFollowsMinCheckpointAndSurvivesFailures) {
  ASSERT_TRUE(coord_->CreateChangefeed(NewInfo("a", 1000)).ok());
  ASSERT_TRUE(coord_->CreateChangefeed(NewInfo("b", 2000)).ok());
  EXPECT_EQ(gc_.service_safepoint, Ts(999));
  EXPECT_EQ(gc_.last_service, "ticdc-default-7");
  EXPECT_EQ(gc_.last_ttl, 86400);

  coord_->OnMaintainerStatus(NodeId("node-a"), Working("a", 5000));
  coord_->Tick();  // Not due yet (interval 1 min).
  EXPECT_EQ(gc_.service_safepoint, Ts(999));
  clock_.Advance(minutes(1));
  coord_->Tick();
  EXPECT_EQ(gc_.service_safepoint, Ts(1999));

  gc_.fail = true;
  coord_->OnMaintainerStatus(NodeId("node-a"), Working("b", 7000));
  clock_.Advance(minutes(1));
  coord_->Tick();
  CoordinatorStats stats = coord_->Stats();
  EXPECT_EQ(stats.gc_failures, 1u);
  EXPECT_EQ(stats.last_gc_error.code(), Code::kUnavailable);
  EXPECT_EQ(coord_->GetChangefeed(Id("b"))->info.state, meta::FeedState::kNormal);
  gc_.fail = false;
  coord_->Tick();  // A failed update is retried on the next tick.
  EXPECT_EQ(gc_.service_safepoint, Ts(4999));
  EXPECT_TRUE(coord_->Stats().last_gc_error.ok());
}

TEST_F(CoordinatorTest, NodeRemovalMovesMaintainerWithNewEpoch) {
  nodes_.alive = {NodeId("node-a"), NodeId("node-b")};
  ASSERT_TRUE(coord_->CreateChangefeed(NewInfo("one")).ok());
  ASSERT_TRUE(coord_->CreateChangefeed(NewInfo("two")).ok());
  EXPECT_NE(NodeOf("one"), NodeOf("two"));  // Least-loaded placement.
  const NodeId gone = NodeOf("one");
  const MaintainerStatus old_status = Working("one", 4000);

  nodes_.alive = {NodeOf("two")};
  coord_->OnNodeRemoved(gone);
  EXPECT_EQ(NodeOf("one"), NodeOf("two"));
  EXPECT_GT(StoredEpoch("one"), old_status.epoch);
  EXPECT_EQ(maintainers_->adds.back().request.epoch, StoredEpoch("one"));
  EXPECT_EQ(maintainers_->adds.back().stored_epoch, StoredEpoch("one"));
  coord_->OnMaintainerStatus(gone, old_status);
  EXPECT_EQ(coord_->Stats().stale_statuses_dropped, 1u);

  // A node that vanished without a callback is noticed by Tick().
  nodes_.alive = {NodeId("node-c")};
  coord_->Tick();
  EXPECT_EQ(NodeOf("one"), NodeId("node-c"));
  EXPECT_EQ(NodeOf("two"), NodeId("node-c"));
}

TEST_F(CoordinatorTest, ConcurrentWriterMakesCasFailWithoutOverwrite) {
  ASSERT_TRUE(coord_->CreateChangefeed(NewInfo("cf")).ok());
  meta::MetaClient other(store_.get(), meta::KeyLayout("default"));
  Result<meta::Versioned<meta::ChangefeedInfo>> v = other.GetChangefeedInfo(Id("cf"));
  ASSERT_TRUE(v.ok());
  meta::ChangefeedInfo changed = v->value;
  changed.sink_uri = "file:///elsewhere";
  ASSERT_TRUE(other.UpdateChangefeedInfo(changed, v->mod_revision).ok());

  Status paused = coord_->PauseChangefeed(Id("cf"));
  EXPECT_EQ(paused.code(), Code::kAborted);
  EXPECT_TRUE(paused.retryable());
  EXPECT_EQ(coord_->Stats().cas_conflicts, 1u);
  EXPECT_EQ(StoredInfo("cf").sink_uri, "file:///elsewhere");
  EXPECT_EQ(StoredInfo("cf").state, meta::FeedState::kNormal);
  // The coordinator re-read the key; deciding again now works.
  ASSERT_TRUE(coord_->PauseChangefeed(Id("cf")).ok());
  EXPECT_EQ(StoredInfo("cf").sink_uri, "file:///elsewhere");
  EXPECT_EQ(StoredInfo("cf").state, meta::FeedState::kStopped);
}

TEST_F(CoordinatorTest, RestartRecoversChangefeedsWithNewEpochs) {
  ASSERT_TRUE(coord_->CreateChangefeed(NewInfo("run")).ok());
  ASSERT_TRUE(coord_->CreateChangefeed(NewInfo("stop")).ok());
  coord_->OnMaintainerStatus(NodeId("node-a"), Working("run", 4000));
  ASSERT_TRUE(coord_->PauseChangefeed(Id("stop")).ok());
  const MaintainerEpoch run_epoch = StoredEpoch("run");
  const MaintainerEpoch stop_epoch = StoredEpoch("stop");

  maintainers_->adds.clear();
  ASSERT_TRUE(OpenCoordinator().ok());
  ASSERT_EQ(coord_->ListChangefeeds().size(), 2u);
  EXPECT_EQ(coord_->GetChangefeed(Id("run"))->status.checkpoint_ts, Ts(4000));
  EXPECT_TRUE(maintainers_->adds.empty());
  coord_->Tick();
  ASSERT_EQ(maintainers_->adds.size(), 1u);
  const SentAdd& add = maintainers_->adds[0];
  EXPECT_EQ(add.request.id, Id("run"));
  EXPECT_GT(add.request.epoch, run_epoch);
  EXPECT_EQ(add.stored_epoch, add.request.epoch);
  EXPECT_EQ(add.request.checkpoint_ts, Ts(4000));
  EXPECT_EQ(StoredEpoch("stop"), stop_epoch);
  EXPECT_EQ(coord_->GetChangefeed(Id("stop"))->info.state, meta::FeedState::kStopped);
}

}  // namespace
}  // namespace sluice::coordinator
