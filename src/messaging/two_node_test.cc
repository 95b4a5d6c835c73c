// Two nodes over the in-memory network: a maintainer bootstraps a
// dispatcher manager and they exchange heartbeats, with node id and epoch
// intact; then the network drops, delays, reorders and corrupts.
#include <gtest/gtest.h>

#include <memory>

#include "common/test_util.h"
#include "messaging/in_memory_transport.h"
#include "messaging/message_center_impl.h"
#include "messaging/test_recorder.h"

namespace sluice::messaging {
namespace {

using std::chrono::seconds;

const NodeId kMaintainerNode("node-maintainer");
const NodeId kDispatcherNode("node-dispatcher");
constexpr uint64_t kEpoch = 7;

heartbeatpb::ChangefeedID Changefeed() {
  heartbeatpb::ChangefeedID id;
  id.set_keyspace("default");
  id.set_name("cf-1");
  id.set_high(11);
  id.set_low(12);
  return id;
}

class TwoNodeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    maintainer_ = MakeCenter(kMaintainerNode);
    dispatcher_ = MakeCenter(kDispatcherNode);
  }

  std::unique_ptr<MessageCenterImpl> MakeCenter(const NodeId& node) {
    MessageCenterOptions options;
    options.self = node;
    options.clock = &clock_;
    options.transport = network_.AddNode(node);
    EXPECT_NE(options.transport, nullptr);
    auto center = std::make_unique<MessageCenterImpl>(options);
    EXPECT_TRUE(center->Start().ok());
    return center;
  }

  // A heartbeat event from the dispatcher manager, told apart by `n`.
  TargetMessage Heartbeat(uint64_t n) {
    heartbeatpb::HeartBeatRequest req;
    *req.mutable_changefeed_id() = Changefeed();
    req.mutable_watermark()->set_seq(n);
    req.mutable_watermark()->set_checkpoint_ts(400 + n);
    req.mutable_watermark()->set_resolved_ts(500 + n);
    return MakeMessage(kMaintainerNode, kMaintainerManagerTopic, req);
  }

  static std::vector<uint64_t> WatermarkSeqs(const Recorder& recorder) {
    std::vector<uint64_t> out;
    for (const TargetMessage& msg : recorder.messages()) {
      const auto* req = msg.As<heartbeatpb::HeartBeatRequest>();
      out.push_back(req == nullptr ? 0 : req->watermark().seq());
    }
    return out;
  }

  // Declared first: destroyed after the centers that use its transports.
  InMemoryNetwork network_;
  ManualClock clock_;
  std::unique_ptr<MessageCenterImpl> maintainer_;
  std::unique_ptr<MessageCenterImpl> dispatcher_;
};

TEST_F(TwoNodeTest, BootstrapAndHeartbeatsKeepNodeIdAndEpoch) {
  Recorder at_maintainer;
  Recorder at_dispatcher;
  ASSERT_TRUE(
      maintainer_->RegisterHandler(kMaintainerManagerTopic, at_maintainer.AsHandler()).ok());
  // The dispatcher manager answers a bootstrap with its spans, echoing the
  // epoch, and reports progress with a heartbeat event.
  ASSERT_TRUE(dispatcher_
                  ->RegisterHandler(kDispatcherManagerTopic,
                                    [&](const TargetMessage& msg) -> Status {
                                      at_dispatcher.Record(msg);
                                      const auto* req =
                                          msg.As<heartbeatpb::MaintainerBootstrapRequest>();
                                      if (req == nullptr) return Status::Ok();
                                      heartbeatpb::MaintainerBootstrapResponse resp;
                                      *resp.mutable_changefeed_id() = req->changefeed_id();
                                      resp.set_maintainer_epoch(req->maintainer_epoch());
                                      resp.set_checkpoint_ts(req->start_ts());
                                      heartbeatpb::BootstrapTableSpan* span = resp.add_spans();
                                      span->mutable_id()->set_high(21);
                                      span->mutable_id()->set_low(22);
                                      span->mutable_span()->set_table_id(108);
                                      span->set_checkpoint_ts(req->start_ts());
                                      span->mutable_block_state()->set_stage(heartbeatpb::WAITING);
                                      RETURN_IF_ERROR(dispatcher_->SendCommand(
                                          MakeMessage(msg.from, kMaintainerManagerTopic, resp)));
                                      return dispatcher_->SendEvent(Heartbeat(1));
                                    })
                  .ok());

  heartbeatpb::MaintainerBootstrapRequest bootstrap;
  *bootstrap.mutable_changefeed_id() = Changefeed();
  bootstrap.set_config("{\"sink-uri\":\"file:///out\"}");
  bootstrap.set_start_ts(445566);
  bootstrap.mutable_table_trigger_event_dispatcher_id()->set_high(1);
  bootstrap.mutable_table_trigger_event_dispatcher_id()->set_low(2);
  bootstrap.set_is_new_changefeed(true);
  bootstrap.set_sender_node_id(kMaintainerNode.value());
  bootstrap.set_maintainer_epoch(kEpoch);
  ASSERT_TRUE(
      maintainer_->SendCommand(MakeMessage(kDispatcherNode, kDispatcherManagerTopic, bootstrap))
          .ok());

  // The dispatcher manager saw the maintainer's node and epoch.
  ASSERT_TRUE(at_dispatcher.WaitFor(1));
  const TargetMessage got_bootstrap = at_dispatcher.messages()[0];
  EXPECT_EQ(got_bootstrap.from, kMaintainerNode);
  EXPECT_EQ(got_bootstrap.to, kDispatcherNode);
  EXPECT_EQ(got_bootstrap.epoch, MaintainerEpoch(kEpoch));
  EXPECT_EQ(got_bootstrap.kind, DeliveryKind::kCommand);
  const auto* req = got_bootstrap.As<heartbeatpb::MaintainerBootstrapRequest>();
  ASSERT_NE(req, nullptr);
  EXPECT_EQ(req->sender_node_id(), kMaintainerNode.value());
  EXPECT_EQ(req->maintainer_epoch(), kEpoch);
  EXPECT_EQ(req->changefeed_id().name(), "cf-1");
  EXPECT_EQ(req->start_ts(), 445566u);
  EXPECT_EQ(req->table_trigger_event_dispatcher_id().low(), 2u);
  EXPECT_TRUE(req->is_new_changefeed());

  // The maintainer got the response (same epoch), then the heartbeat.
  ASSERT_TRUE(at_maintainer.WaitFor(2));
  const std::vector<TargetMessage> got = at_maintainer.messages();
  const auto* resp = got[0].As<heartbeatpb::MaintainerBootstrapResponse>();
  ASSERT_NE(resp, nullptr);
  EXPECT_EQ(got[0].from, kDispatcherNode);
  EXPECT_EQ(got[0].epoch, MaintainerEpoch(kEpoch));
  EXPECT_EQ(resp->maintainer_epoch(), kEpoch);
  EXPECT_EQ(resp->checkpoint_ts(), 445566u);
  ASSERT_EQ(resp->spans_size(), 1);
  EXPECT_EQ(resp->spans(0).span().table_id(), 108);
  EXPECT_EQ(resp->spans(0).block_state().stage(), heartbeatpb::WAITING);
  const auto* heartbeat = got[1].As<heartbeatpb::HeartBeatRequest>();
  ASSERT_NE(heartbeat, nullptr);
  EXPECT_EQ(got[1].kind, DeliveryKind::kEvent);
  EXPECT_EQ(heartbeat->watermark().checkpoint_ts(), 401u);
  EXPECT_GT(got[1].seq, got[0].seq);  // Same sender, same target: in order.

  // The maintainer answers the heartbeat with a barrier action.
  heartbeatpb::HeartBeatResponse action;
  *action.mutable_changefeed_id() = Changefeed();
  heartbeatpb::DispatcherStatus* status = action.add_dispatcher_statuses();
  status->mutable_influenced_dispatchers()->set_influence_type(heartbeatpb::NORMAL);
  status->mutable_action()->set_action(heartbeatpb::PASS);
  status->mutable_action()->set_commit_ts(445570);
  action.set_sender_node_id(kMaintainerNode.value());
  action.set_maintainer_epoch(kEpoch);
  ASSERT_TRUE(
      maintainer_->SendCommand(MakeMessage(kDispatcherNode, kDispatcherManagerTopic, action)).ok());
  ASSERT_TRUE(at_dispatcher.WaitFor(2));
  const TargetMessage got_action = at_dispatcher.messages()[1];
  EXPECT_EQ(got_action.from, kMaintainerNode);
  EXPECT_EQ(got_action.epoch, MaintainerEpoch(kEpoch));
  const auto* decoded_action = got_action.As<heartbeatpb::HeartBeatResponse>();
  ASSERT_NE(decoded_action, nullptr);
  EXPECT_EQ(decoded_action->dispatcher_statuses(0).action().action(), heartbeatpb::PASS);
  EXPECT_EQ(decoded_action->dispatcher_statuses(0).action().commit_ts(), 445570u);

  EXPECT_EQ(maintainer_->stats().sent_remote, 2u);
  EXPECT_EQ(dispatcher_->stats().received_remote, 2u);
}

TEST_F(TwoNodeTest, DroppedEventsLeaveAGapAndLaterOnesArrive) {
  Recorder at_maintainer;
  ASSERT_TRUE(
      maintainer_->RegisterHandler(kMaintainerManagerTopic, at_maintainer.AsHandler()).ok());
  network_.DropNext(kDispatcherNode, kMaintainerNode, 2);
  for (uint64_t i = 1; i <= 4; ++i) ASSERT_TRUE(dispatcher_->SendEvent(Heartbeat(i)).ok());
  ASSERT_TRUE(at_maintainer.WaitFor(2));
  ASSERT_TRUE(network_.WaitIdle());
  EXPECT_EQ(WatermarkSeqs(at_maintainer), (std::vector<uint64_t>{3, 4}));
  EXPECT_EQ(network_.stats().dropped, 2u);
  // The envelope seq shows the gap.
  EXPECT_EQ(at_maintainer.messages()[0].seq, 3u);
}

TEST_F(TwoNodeTest, LinkDownFailsSendsWithARetryableError) {
  Recorder at_dispatcher;
  ASSERT_TRUE(
      dispatcher_->RegisterHandler(kDispatcherManagerTopic, at_dispatcher.AsHandler()).ok());
  heartbeatpb::MaintainerCloseRequest close;
  close.set_sender_node_id(kMaintainerNode.value());
  close.set_maintainer_epoch(kEpoch);
  close.set_removed(true);
  TargetMessage msg = MakeMessage(kDispatcherNode, kDispatcherManagerTopic, close);

  network_.SetLinkDown(kMaintainerNode, kDispatcherNode, true);
  Status st = maintainer_->SendCommand(msg);
  EXPECT_EQ(st.code(), Code::kUnavailable);
  EXPECT_TRUE(st.retryable());
  network_.SetLinkDown(kMaintainerNode, kDispatcherNode, false);
  ASSERT_TRUE(maintainer_->SendCommand(msg).ok());  // The protocol's resend.
  ASSERT_TRUE(at_dispatcher.WaitFor(1));
  const auto* got = at_dispatcher.messages()[0].As<heartbeatpb::MaintainerCloseRequest>();
  ASSERT_NE(got, nullptr);
  EXPECT_TRUE(got->removed());
  EXPECT_EQ(got->maintainer_epoch(), kEpoch);

  EXPECT_EQ(maintainer_
                ->SendCommand(MakeMessage(NodeId("node-gone"), kDispatcherManagerTopic,
                                          heartbeatpb::HeartBeatRequest()))
                .code(),
            Code::kUnavailable);
}

TEST_F(TwoNodeTest, HeldMessagesArriveLateOrReordered) {
  Recorder at_maintainer;
  ASSERT_TRUE(
      maintainer_->RegisterHandler(kMaintainerManagerTopic, at_maintainer.AsHandler()).ok());

  network_.Hold(kDispatcherNode, kMaintainerNode);
  for (uint64_t i = 1; i <= 3; ++i) ASSERT_TRUE(dispatcher_->SendEvent(Heartbeat(i)).ok());
  ASSERT_TRUE(network_.WaitIdle());
  EXPECT_EQ(at_maintainer.size(), 0u);  // Delayed.
  EXPECT_EQ(network_.HeldCount(kDispatcherNode, kMaintainerNode), 3u);
  EXPECT_EQ(network_.Release(kDispatcherNode, kMaintainerNode, ReleaseOrder::kReversed), 3u);
  ASSERT_TRUE(at_maintainer.WaitFor(3));
  EXPECT_EQ(WatermarkSeqs(at_maintainer), (std::vector<uint64_t>{3, 2, 1}));
  std::vector<uint64_t> envelope_seqs;
  for (const TargetMessage& msg : at_maintainer.messages()) envelope_seqs.push_back(msg.seq);
  EXPECT_EQ(envelope_seqs, (std::vector<uint64_t>{3, 2, 1}));  // Reorder is visible.

  network_.Hold(kDispatcherNode, kMaintainerNode);
  ASSERT_TRUE(dispatcher_->SendEvent(Heartbeat(4)).ok());
  ASSERT_TRUE(dispatcher_->SendEvent(Heartbeat(5)).ok());
  EXPECT_EQ(network_.Release(kDispatcherNode, kMaintainerNode, ReleaseOrder::kInOrder), 2u);
  ASSERT_TRUE(at_maintainer.WaitFor(5));
  EXPECT_EQ(WatermarkSeqs(at_maintainer), (std::vector<uint64_t>{3, 2, 1, 4, 5}));
}

TEST_F(TwoNodeTest, CorruptedPayloadIsCountedAndTheNextMessageArrives) {
  Recorder at_maintainer;
  ASSERT_TRUE(
      maintainer_->RegisterHandler(kMaintainerManagerTopic, at_maintainer.AsHandler()).ok());
  network_.CorruptNext(kDispatcherNode, kMaintainerNode, 1);
  ASSERT_TRUE(dispatcher_->SendEvent(Heartbeat(1)).ok());
  ASSERT_TRUE(dispatcher_->SendEvent(Heartbeat(2)).ok());
  ASSERT_TRUE(at_maintainer.WaitFor(1));
  ASSERT_TRUE(network_.WaitIdle());
  EXPECT_EQ(WatermarkSeqs(at_maintainer), (std::vector<uint64_t>{2}));
  EXPECT_EQ(maintainer_->stats().undecodable, 1u);
  EXPECT_EQ(network_.stats().corrupted, 1u);
  EXPECT_EQ(network_.stats().receiver_errors, 1u);
}

TEST_F(TwoNodeTest, UnknownTopicOnTheRemoteNodeIsCountedThere) {
  ASSERT_TRUE(dispatcher_->SendEvent(Heartbeat(1)).ok());  // Nobody listens yet.
  ASSERT_TRUE(network_.WaitIdle());
  EXPECT_EQ(maintainer_->stats().unknown_topic, 1u);
  EXPECT_EQ(network_.stats().receiver_errors, 1u);
}

// A flood of commands from a peer blocks that peer's delivery thread on the
// full queue until the command timeout, then fails with Busy.
TEST_F(TwoNodeTest, RemoteCommandsPushBackOnAFullQueue) {
  Gate gate;
  Recorder at_maintainer;
  std::atomic<bool> first{true};
  MessageCenterOptions options;
  options.self = NodeId("node-small");
  options.clock = &clock_;
  options.queue_capacity = 1;
  options.command_timeout = seconds(1);
  options.transport = network_.AddNode(options.self);
  MessageCenterImpl small(options);
  ASSERT_TRUE(small.Start().ok());
  ASSERT_TRUE(small
                  .RegisterHandler(kMaintainerManagerTopic,
                                   [&](const TargetMessage& msg) {
                                     if (first.exchange(false)) gate.Pass();
                                     at_maintainer.Record(msg);
                                     return Status::Ok();
                                   })
                  .ok());
  for (uint64_t i = 1; i <= 3; ++i) {
    TargetMessage msg = Heartbeat(i);
    msg.to = options.self;
    ASSERT_TRUE(dispatcher_->SendCommand(std::move(msg)).ok());  // The transport accepts.
  }
  ASSERT_TRUE(gate.entered.WaitFor());
  // Command 2 is queued and command 3 waits in the receiver (command 2 may
  // have waited too, before command 1 left the queue).
  ASSERT_TRUE(PollUntil(
      [&] { return small.QueuedFor(kMaintainerManagerTopic) == 1 && clock_.NumWaiters() == 1; }));
  clock_.Advance(seconds(1));
  ASSERT_TRUE(PollUntil([&] { return small.stats().commands_timed_out == 1; }));
  gate.open.Notify();
  ASSERT_TRUE(at_maintainer.WaitFor(2));
  ASSERT_TRUE(network_.WaitIdle());
  std::vector<uint64_t> seqs;
  for (const TargetMessage& msg : at_maintainer.messages()) {
    seqs.push_back(msg.As<heartbeatpb::HeartBeatRequest>()->watermark().seq());
  }
  EXPECT_EQ(seqs, (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(network_.stats().receiver_errors, 1u);
  small.Stop();
}

}  // namespace
}  // namespace sluice::messaging
