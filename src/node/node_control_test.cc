// NodeControl's resend of pending block statuses: a dispatcher held at a
// barrier has its WAITING status sent to its owner again every
// block_resend_interval, so a status the maintainer dropped (sent before its
// bootstrap finished) still reaches it; nothing is resent when no
// dispatcher waits.
#include "node/node_control.h"

#include <gtest/gtest.h>

#include <chrono>
#include <vector>

#include "common/clock.h"
#include "dispatchermanager/test_fakes.h"
#include "messaging/message_center_impl.h"
#include "node/wire.h"

namespace sluice::node {
namespace {

namespace dm = dispatchermanager;

class NodeControlTest : public ::testing::Test {
 protected:
  void SetUp() override {
    messaging::MessageCenterOptions o;
    o.self = NodeId("n1");
    o.clock = &clock_;
    center_ = std::make_unique<messaging::MessageCenterImpl>(o);
    ASSERT_TRUE(center_->Start().ok());
    ASSERT_TRUE(center_
                    ->RegisterHandler(kMaintainerManagerTopic,
                                      [this](const messaging::TargetMessage& msg) {
                                        OnMessage(msg);
                                        return Status::Ok();
                                      })
                    .ok());
    NodeControlOptions c;
    c.center = center_.get();
    c.orchestrator = &orchestrator_;
    c.registry = &registry_;
    c.clock = &clock_;
    c.block_resend_interval = std::chrono::seconds(1);
    control_ = std::make_unique<NodeControl>(c);
    // The maintainer on n1 bootstraps the changefeed with its table trigger.
    auto resp = orchestrator_.HandleBootstrap(dm::testing::Boot("n1", 1, kTrigger));
    ASSERT_TRUE(resp.has_value() && resp->status.ok());
  }
  void TearDown() override { center_->Stop(); }

  void OnMessage(const messaging::TargetMessage& msg) {
    if (msg.type == messaging::MessageType::kHeartBeatRequest) {
      auto hb = FromProto(*msg.As<pb::HeartBeatRequest>());
      if (hb.ok() && hb->changefeed_id == "marker") {
        MutexLock lock(&mu_);
        ++markers_;
        cv_.SignalAll();
      }
      return;
    }
    if (msg.type != messaging::MessageType::kBlockStatusRequest) return;
    const auto* payload = msg.As<pb::BlockStatusRequest>();
    ASSERT_NE(payload, nullptr);
    auto batch = FromProto(*payload);
    ASSERT_TRUE(batch.ok()) << batch.status().ToString();
    MutexLock lock(&mu_);
    for (const maintainer::BlockReport& r : batch->reports) reports_.push_back(r);
    ++batches_;
    cv_.SignalAll();
  }
  // The block-status batches received once every message sent so far has
  // been handled (a heartbeat round sends its batch before its heartbeat,
  // and one topic's messages are handled in order).
  int BatchesAfterRound() {
    control_->SendHeartbeats();
    // A marker through the same topic: once it is handled, so is the round.
    maintainer::HeartbeatRequest marker;
    marker.changefeed_id = "marker";
    pb::HeartBeatRequest payload;
    ToProto(marker, &payload);
    EXPECT_TRUE(center_
                    ->SendCommand(messaging::MakeMessage(NodeId("n1"), kMaintainerManagerTopic,
                                                         std::move(payload)))
                    .ok());
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    MutexLock lock(&mu_);
    ++markers_sent_;
    while (markers_ < markers_sent_ && !cv_.WaitUntil(&mu_, deadline)) {
    }
    EXPECT_EQ(markers_, markers_sent_) << "the round was not handled in time";
    return batches_;
  }
  int Batches() {
    MutexLock lock(&mu_);
    return batches_;
  }
  dispatcher::BlockStatus Waiting(Ts ts) const {
    dispatcher::BlockStatus s;
    s.dispatcher_id = *kTrigger;
    s.block_ts = ts;
    s.stage = dispatcher::BlockStage::kWaiting;
    s.is_blocked = true;
    return s;
  }

  const std::optional<DispatcherId> kTrigger = DispatcherId{0, 1};
  ManualClock clock_;
  dm::testing::FakeProvider provider_;
  dm::DispatcherOrchestrator orchestrator_{&provider_};
  PathRegistry registry_{PathDeps{}};
  std::unique_ptr<messaging::MessageCenterImpl> center_;
  std::unique_ptr<NodeControl> control_;
  Mutex mu_;
  CondVar cv_;
  std::vector<maintainer::BlockReport> reports_ GUARDED_BY(mu_);
  int batches_ GUARDED_BY(mu_) = 0;
  int markers_ GUARDED_BY(mu_) = 0;
  int markers_sent_ GUARDED_BY(mu_) = 0;
};

TEST_F(NodeControlTest, ResendsTheWaitingStatusOfAHeldDispatcherEachInterval) {
  EXPECT_EQ(BatchesAfterRound(), 0);  // Nothing waits.
  provider_.world("cf")->SetPendingBlock(*kTrigger, Waiting(Ts(500)));
  clock_.Advance(std::chrono::seconds(1));
  const int first = BatchesAfterRound();
  EXPECT_EQ(first, 1);
  {
    MutexLock lock(&mu_);
    ASSERT_EQ(reports_.size(), 1u);
    EXPECT_EQ(reports_[0].dispatcher_id, *kTrigger);
    EXPECT_EQ(reports_[0].block_ts, Ts(500));
    EXPECT_EQ(reports_[0].stage, dispatcher::BlockStage::kWaiting);
  }
  // Not again within the interval, again after it.
  clock_.Advance(std::chrono::milliseconds(500));
  EXPECT_EQ(BatchesAfterRound(), 1);
  clock_.Advance(std::chrono::milliseconds(500));
  EXPECT_EQ(BatchesAfterRound(), 2);
  // Answered: nothing more.
  provider_.world("cf")->SetPendingBlock(*kTrigger, std::nullopt);
  clock_.Advance(std::chrono::seconds(5));
  EXPECT_EQ(BatchesAfterRound(), 2);
}

}  // namespace
}  // namespace sluice::node
