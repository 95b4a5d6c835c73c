// MessageCenterImpl on one node: ordering, back-pressure, unknown topics,
// handler errors, deregistration and Stop() with messages in flight, and
// bad envelopes from a transport.
#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>

#include <atomic>
#include <sstream>

#include "common/lifecycle.h"
#include "common/logging.h"
#include "common/test_util.h"
#include "messaging/message_center_impl.h"
#include "messaging/test_recorder.h"

namespace sluice::messaging {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

const NodeId kSelf("node-1");
constexpr std::string_view kTopic = "dispatcher-manager";

// A heartbeat whose watermark seq tells messages apart.
TargetMessage Heartbeat(uint64_t n, std::string_view topic = kTopic) {
  heartbeatpb::HeartBeatRequest req;
  req.mutable_watermark()->set_seq(n);
  req.mutable_watermark()->set_checkpoint_ts(1000 + n);
  return MakeMessage(kSelf, topic, req);
}

uint64_t WatermarkSeq(const TargetMessage& msg) {
  const auto* req = msg.As<heartbeatpb::HeartBeatRequest>();
  return req == nullptr ? 0 : req->watermark().seq();
}

std::vector<uint64_t> Seqs(const Recorder& recorder) {
  std::vector<uint64_t> out;
  for (const TargetMessage& msg : recorder.messages()) out.push_back(WatermarkSeq(msg));
  return out;
}

class MessageCenterTest : public ::testing::Test {
 protected:
  MessageCenterOptions Options(size_t capacity = 1024) {
    MessageCenterOptions options;
    options.self = kSelf;
    options.queue_capacity = capacity;
    options.command_timeout = seconds(2);
    options.clock = &clock_;
    return options;
  }

  // A handler that blocks on `gate_` for the first message, then records.
  Handler GatedHandler() {
    return [this](const TargetMessage& msg) {
      if (first_.exchange(false)) gate_.Pass();
      recorder_.Record(msg);
      return Status::Ok();
    };
  }

  ManualClock clock_;
  Recorder recorder_;
  Gate gate_;
  std::atomic<bool> first_{true};
};

TEST_F(MessageCenterTest, OneSenderToOneTopicIsHandledInOrder) {
  MessageCenterImpl center(Options(64));
  ASSERT_TRUE(center.Start().ok());
  Recorder other;
  ASSERT_TRUE(center.RegisterHandler(kTopic, recorder_.AsHandler()).ok());
  ASSERT_TRUE(center.RegisterHandler(kHeartbeatCollectorTopic, other.AsHandler()).ok());

  constexpr uint64_t kCount = 500;
  OwnedThread second_sender;
  second_sender.Start("sender-2", [&](StopToken) {
    for (uint64_t i = 1; i <= kCount; ++i) {
      ASSERT_TRUE(center.SendCommand(Heartbeat(i, kHeartbeatCollectorTopic)).ok());
    }
  });
  for (uint64_t i = 1; i <= kCount; ++i) ASSERT_TRUE(center.SendCommand(Heartbeat(i)).ok());
  second_sender.Join();

  ASSERT_TRUE(recorder_.WaitFor(kCount));
  ASSERT_TRUE(other.WaitFor(kCount));
  std::vector<uint64_t> expected;
  for (uint64_t i = 1; i <= kCount; ++i) expected.push_back(i);
  EXPECT_EQ(Seqs(recorder_), expected);
  EXPECT_EQ(Seqs(other), expected);
  // The envelope seq grows with every message to the node.
  uint64_t last = 0;
  for (const TargetMessage& msg : recorder_.messages()) {
    EXPECT_GT(msg.seq, last);
    last = msg.seq;
    EXPECT_EQ(msg.from, kSelf);
    EXPECT_EQ(msg.kind, DeliveryKind::kCommand);
  }
}

TEST_F(MessageCenterTest, FullQueueDropsEventsAndCountsThem) {
  MessageCenterImpl center(Options(2));
  ASSERT_TRUE(center.RegisterHandler(kTopic, GatedHandler()).ok());
  ASSERT_TRUE(center.SendEvent(Heartbeat(1)).ok());
  ASSERT_TRUE(gate_.entered.WaitFor());  // Message 1 is in the handler.
  ASSERT_TRUE(center.SendEvent(Heartbeat(2)).ok());
  ASSERT_TRUE(center.SendEvent(Heartbeat(3)).ok());

  Status dropped = center.SendEvent(Heartbeat(4));
  EXPECT_EQ(dropped.code(), Code::kBusy);
  EXPECT_TRUE(dropped.retryable());
  EXPECT_EQ(center.stats().events_dropped, 1u);
  EXPECT_EQ(center.QueuedFor(kTopic), 2u);

  gate_.open.Notify();
  ASSERT_TRUE(recorder_.WaitFor(3));
  EXPECT_EQ(Seqs(recorder_), (std::vector<uint64_t>{1, 2, 3}));
  ASSERT_TRUE(center.SendEvent(Heartbeat(5)).ok());
  ASSERT_TRUE(recorder_.WaitFor(4));
  EXPECT_EQ(Seqs(recorder_).back(), 5u);
}

TEST_F(MessageCenterTest, FullQueueMakesACommandWaitForSpace) {
  MessageCenterImpl center(Options(1));
  ASSERT_TRUE(center.RegisterHandler(kTopic, GatedHandler()).ok());
  ASSERT_TRUE(center.SendCommand(Heartbeat(1)).ok());
  ASSERT_TRUE(gate_.entered.WaitFor());
  ASSERT_TRUE(center.SendCommand(Heartbeat(2)).ok());  // Fills the queue.

  Status blocked_result = Internal("not set");
  OwnedThread sender;
  sender.Start("sender", [&](StopToken) { blocked_result = center.SendCommand(Heartbeat(3)); });
  ASSERT_TRUE(clock_.AwaitWaiters(1));  // The command waits for space.
  EXPECT_EQ(center.stats().events_dropped, 0u);

  gate_.open.Notify();  // The handler drains; the command gets in.
  sender.Join();
  EXPECT_TRUE(blocked_result.ok()) << blocked_result.ToString();
  ASSERT_TRUE(recorder_.WaitFor(3));
  EXPECT_EQ(Seqs(recorder_), (std::vector<uint64_t>{1, 2, 3}));
  EXPECT_EQ(center.stats().commands_timed_out, 0u);
}

TEST_F(MessageCenterTest, CommandWaitingPastItsDeadlineIsBusy) {
  MessageCenterImpl center(Options(1));
  ASSERT_TRUE(center.RegisterHandler(kTopic, GatedHandler()).ok());
  ASSERT_TRUE(center.SendCommand(Heartbeat(1)).ok());
  ASSERT_TRUE(gate_.entered.WaitFor());
  ASSERT_TRUE(center.SendCommand(Heartbeat(2)).ok());

  Status blocked_result;
  OwnedThread sender;
  sender.Start("sender", [&](StopToken) { blocked_result = center.SendCommand(Heartbeat(3)); });
  ASSERT_TRUE(clock_.AwaitWaiters(1));
  clock_.Advance(seconds(1));  // Not yet.
  EXPECT_EQ(center.stats().commands_timed_out, 0u);
  clock_.Advance(seconds(1));
  sender.Join();
  EXPECT_EQ(blocked_result.code(), Code::kBusy);
  EXPECT_TRUE(blocked_result.retryable());
  EXPECT_EQ(center.stats().commands_timed_out, 1u);

  gate_.open.Notify();
  ASSERT_TRUE(recorder_.WaitFor(2));
  EXPECT_EQ(Seqs(recorder_), (std::vector<uint64_t>{1, 2}));
}

TEST_F(MessageCenterTest, UnknownTopicIsATypedErrorAndCounted) {
  MessageCenterImpl center(Options());
  Status st = center.SendCommand(Heartbeat(1, "no-such-topic"));
  EXPECT_EQ(st.code(), Code::kNotFound);
  EXPECT_EQ(center.SendEvent(Heartbeat(2, "no-such-topic")).code(), Code::kNotFound);
  EXPECT_EQ(center.stats().unknown_topic, 2u);
}

TEST_F(MessageCenterTest, RegisteringATopicTwiceFails) {
  MessageCenterImpl center(Options());
  ASSERT_TRUE(center.RegisterHandler(kTopic, recorder_.AsHandler()).ok());
  EXPECT_EQ(center.RegisterHandler(kTopic, recorder_.AsHandler()).code(), Code::kAlreadyExists);
  EXPECT_EQ(center.RegisterHandler("", recorder_.AsHandler()).code(), Code::kInvalidArgument);
  EXPECT_EQ(center.RegisterHandler("x", nullptr).code(), Code::kInvalidArgument);
}

TEST_F(MessageCenterTest, HandlerErrorIsLoggedWithFieldsAndDeliveryGoesOn) {
  std::ostringstream log;
  logging::SetSink(std::make_shared<spdlog::sinks::ostream_sink_mt>(log), logging::Level::kInfo);
  {
    MessageCenterImpl center(Options());
    ASSERT_TRUE(center
                    .RegisterHandler(kTopic,
                                     [&](const TargetMessage& msg) {
                                       recorder_.Record(msg);
                                       return WatermarkSeq(msg) == 1
                                                  ? EpochMismatch("stale maintainer")
                                                  : Status::Ok();
                                     })
                    .ok());
    ASSERT_TRUE(center.SendCommand(Heartbeat(1)).ok());
    ASSERT_TRUE(center.SendCommand(Heartbeat(2)).ok());
    ASSERT_TRUE(recorder_.WaitFor(2));
    ASSERT_TRUE(PollUntil([&] { return center.stats().handled == 2; }));
    EXPECT_EQ(center.stats().handler_errors, 1u);
  }
  logging::Flush();
  std::string out = log.str();
  ASSERT_TRUE(logging::Init(logging::Level::kInfo).ok());
  EXPECT_NE(out.find("message handler failed"), std::string::npos) << out;
  EXPECT_NE(out.find("topic=dispatcher-manager type=HeartBeatRequest from=node-1"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("error=epoch_mismatch: stale maintainer"), std::string::npos) << out;
}

TEST_F(MessageCenterTest, DeregisterWaitsForTheRunningHandlerAndDropsTheQueue) {
  MessageCenterImpl center(Options());
  ASSERT_TRUE(center.RegisterHandler(kTopic, GatedHandler()).ok());
  ASSERT_TRUE(center.SendCommand(Heartbeat(1)).ok());
  ASSERT_TRUE(gate_.entered.WaitFor());
  for (uint64_t i = 2; i <= 4; ++i) ASSERT_TRUE(center.SendCommand(Heartbeat(i)).ok());

  Notification deregistered;
  OwnedThread deregister;
  deregister.Start("deregister", [&](StopToken) {
    center.DeregisterHandler(kTopic);
    deregistered.Notify();
  });
  // The queue is dropped at once; the call returns only after the handler.
  ASSERT_TRUE(PollUntil([&] { return center.stats().dropped_on_deregister == 3; }));
  EXPECT_EQ(center.SendCommand(Heartbeat(5)).code(), Code::kNotFound);
  EXPECT_FALSE(deregistered.HasBeenNotified());
  gate_.open.Notify();
  ASSERT_TRUE(deregistered.WaitFor());
  deregister.Join();

  EXPECT_EQ(Seqs(recorder_), (std::vector<uint64_t>{1}));
  EXPECT_EQ(center.stats().handled, 1u);
  // The topic can be registered again.
  Recorder again;
  ASSERT_TRUE(center.RegisterHandler(kTopic, again.AsHandler()).ok());
  ASSERT_TRUE(center.SendCommand(Heartbeat(6)).ok());
  ASSERT_TRUE(again.WaitFor(1));
  EXPECT_EQ(Seqs(again), (std::vector<uint64_t>{6}));
}

TEST_F(MessageCenterTest, HandlerMayDeregisterItsOwnTopic) {
  MessageCenterImpl center(Options());
  ASSERT_TRUE(center
                  .RegisterHandler(kTopic,
                                   [&](const TargetMessage& msg) {
                                     recorder_.Record(msg);
                                     center.DeregisterHandler(kTopic);
                                     return Status::Ok();
                                   })
                  .ok());
  ASSERT_TRUE(center.SendCommand(Heartbeat(1)).ok());
  ASSERT_TRUE(recorder_.WaitFor(1));
  ASSERT_TRUE(
      PollUntil([&] { return center.SendCommand(Heartbeat(2)).code() == Code::kNotFound; }));
  center.Stop();  // Joins the retired thread.
  EXPECT_EQ(recorder_.size(), 1u);
}

TEST_F(MessageCenterTest, StopJoinsEverythingWithMessagesQueued) {
  MessageCenterImpl center(Options());
  Recorder other;
  ASSERT_TRUE(center.RegisterHandler(kTopic, GatedHandler()).ok());
  ASSERT_TRUE(center.RegisterHandler(kCoordinatorTopic, other.AsHandler()).ok());
  ASSERT_TRUE(center.SendCommand(Heartbeat(1)).ok());
  ASSERT_TRUE(gate_.entered.WaitFor());
  for (uint64_t i = 2; i <= 6; ++i) ASSERT_TRUE(center.SendEvent(Heartbeat(i)).ok());

  OwnedThread stopper;
  Notification stopped;
  stopper.Start("stopper", [&](StopToken) {
    center.Stop();
    stopped.Notify();
  });
  ASSERT_TRUE(PollUntil([&] { return center.stats().dropped_on_stop == 5; }));
  EXPECT_EQ(center.SendCommand(Heartbeat(7)).code(), Code::kCancelled);
  EXPECT_EQ(center.RegisterHandler("late", other.AsHandler()).code(), Code::kCancelled);
  EXPECT_FALSE(stopped.HasBeenNotified());  // Waits for the running handler.
  gate_.open.Notify();
  ASSERT_TRUE(stopped.WaitFor());
  stopper.Join();
  EXPECT_EQ(Seqs(recorder_), (std::vector<uint64_t>{1}));
  center.Stop();  // Idempotent.
}

TEST_F(MessageCenterTest, StopWakesACommandWaitingForSpace) {
  MessageCenterImpl center(Options(1));
  ASSERT_TRUE(center.RegisterHandler(kTopic, GatedHandler()).ok());
  ASSERT_TRUE(center.SendCommand(Heartbeat(1)).ok());
  ASSERT_TRUE(gate_.entered.WaitFor());
  ASSERT_TRUE(center.SendCommand(Heartbeat(2)).ok());
  Status blocked_result;
  OwnedThread sender;
  sender.Start("sender", [&](StopToken) { blocked_result = center.SendCommand(Heartbeat(3)); });
  ASSERT_TRUE(clock_.AwaitWaiters(1));

  OwnedThread stopper;
  stopper.Start("stopper", [&](StopToken) { center.Stop(); });
  sender.Join();  // Woken by Stop() without any time passing.
  EXPECT_EQ(blocked_result.code(), Code::kCancelled);
  gate_.open.Notify();
  stopper.Join();
}

TEST_F(MessageCenterTest, SendChecksThatHeaderAndPayloadAgree) {
  MessageCenterImpl center(Options());
  ASSERT_TRUE(center.RegisterHandler(kTopic, recorder_.AsHandler()).ok());

  heartbeatpb::MaintainerBootstrapRequest req;
  req.set_sender_node_id("node-9");  // Not this node.
  req.set_maintainer_epoch(4);
  EXPECT_EQ(center.SendCommand(MakeMessage(kSelf, kTopic, req)).code(), Code::kInvalidArgument);

  req.set_sender_node_id(kSelf.value());
  TargetMessage wrong_epoch = MakeMessage(kSelf, kTopic, req);
  wrong_epoch.epoch = MaintainerEpoch(3);
  EXPECT_EQ(center.SendCommand(wrong_epoch).code(), Code::kInvalidArgument);

  TargetMessage wrong_type = MakeMessage(kSelf, kTopic, req);
  wrong_type.type = MessageType::kHeartBeatRequest;
  EXPECT_EQ(center.SendCommand(wrong_type).code(), Code::kInvalidArgument);

  TargetMessage no_payload = MakeMessage(kSelf, kTopic, req);
  no_payload.payload = nullptr;
  EXPECT_EQ(center.SendCommand(no_payload).code(), Code::kInvalidArgument);
  EXPECT_EQ(center.stats().rejected, 4u);

  ASSERT_TRUE(center.SendCommand(MakeMessage(kSelf, kTopic, req)).ok());
  ASSERT_TRUE(recorder_.WaitFor(1));
  const TargetMessage got = recorder_.messages()[0];
  EXPECT_EQ(got.from, kSelf);
  EXPECT_EQ(got.epoch, MaintainerEpoch(4));
  ASSERT_NE(got.As<heartbeatpb::MaintainerBootstrapRequest>(), nullptr);
}

TEST_F(MessageCenterTest, OtherNodesNeedATransport) {
  MessageCenterImpl center(Options());
  EXPECT_EQ(
      center.SendCommand(MakeMessage(NodeId("node-2"), kTopic, heartbeatpb::HeartBeatRequest()))
          .code(),
      Code::kUnavailable);
}

// Envelopes a transport hands in: bad ones are typed errors, counted, and
// never reach a handler; good ones still do.
TEST_F(MessageCenterTest, BadEnvelopesFromATransportAreTypedErrors) {
  MessageCenterImpl center(Options());
  ASSERT_TRUE(center.RegisterHandler(kTopic, recorder_.AsHandler()).ok());
  auto envelope = [](std::string_view to, std::string_view topic) {
    heartbeatpb::HeartBeatResponse resp;
    resp.set_sender_node_id("node-2");
    resp.set_maintainer_epoch(8);
    TargetMessage msg = MakeMessage(NodeId(std::string(to)), topic, resp);
    msg.from = NodeId("node-2");
    return EncodeEnvelope(msg).value();
  };

  heartbeatpb::MessageEnvelope garbage = envelope("node-1", kTopic);
  garbage.set_payload("\x0a\xff\xff\xff");
  EXPECT_EQ(center.Receive(garbage).code(), Code::kCorruption);
  heartbeatpb::MessageEnvelope unknown_type = envelope("node-1", kTopic);
  unknown_type.set_type(999);
  EXPECT_EQ(center.Receive(unknown_type).code(), Code::kCorruption);
  heartbeatpb::MessageEnvelope spoofed = envelope("node-1", kTopic);
  spoofed.set_from("node-3");
  EXPECT_EQ(center.Receive(spoofed).code(), Code::kProtocolViolation);
  EXPECT_EQ(center.Receive(envelope("node-5", kTopic)).code(), Code::kProtocolViolation);
  EXPECT_EQ(center.Receive(envelope("node-1", "no-such-topic")).code(), Code::kNotFound);

  MessageCenterStats stats = center.stats();
  EXPECT_EQ(stats.received_remote, 5u);
  EXPECT_EQ(stats.undecodable, 2u);
  EXPECT_EQ(stats.rejected, 2u);
  EXPECT_EQ(stats.unknown_topic, 1u);

  ASSERT_TRUE(center.Receive(envelope("node-1", kTopic)).ok());
  ASSERT_TRUE(recorder_.WaitFor(1));
  EXPECT_EQ(recorder_.messages()[0].from, NodeId("node-2"));
  EXPECT_EQ(recorder_.messages()[0].epoch, MaintainerEpoch(8));
  EXPECT_EQ(recorder_.size(), 1u);
}

}  // namespace
}  // namespace sluice::messaging
