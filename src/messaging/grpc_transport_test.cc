// The gRPC transport over loopback: one stream per pair, order, reconnect
// after a peer restarts, bounded queues, peers that are not (or no longer)
// registered, spoofed identities and bad hellos, and two message centers
// exchanging commands over it.
#include "messaging/grpc_transport.h"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "common/test_util.h"
#include "messaging/message_center_impl.h"
#include "messaging/test_recorder.h"
#include "sluice_peer.grpc.pb.h"

namespace sluice::messaging {
namespace {

using heartbeatpb::MessageEnvelope;
using std::chrono::seconds;

const NodeId kA("node-a");  // Sorts first: dials B and C.
const NodeId kB("node-b");
const NodeId kC("node-c");

// Records what a transport receives.
class Inbox {
 public:
  Transport::Receiver AsReceiver() {
    return [this](MessageEnvelope e) {
      MutexLock lock(&mu_);
      got_.push_back(std::move(e));
      return Status::Ok();
    };
  }
  size_t size() const {
    MutexLock lock(&mu_);
    return got_.size();
  }
  bool WaitFor(size_t n, std::chrono::milliseconds timeout = seconds(10)) const {
    return PollUntil([&] { return size() >= n; }, timeout);
  }
  std::vector<MessageEnvelope> got() const {
    MutexLock lock(&mu_);
    return got_;
  }

 private:
  mutable Mutex mu_;
  std::vector<MessageEnvelope> got_ GUARDED_BY(mu_);
};

MessageEnvelope Envelope(const NodeId& from, const NodeId& to, uint64_t seq,
                         size_t payload_bytes = 8) {
  MessageEnvelope e;
  e.set_from(from.value());
  e.set_to(to.value());
  e.set_topic("t");
  e.set_type(1);
  e.set_seq(seq);
  e.set_payload(std::string(payload_bytes, 'x'));
  return e;
}

std::unique_ptr<GrpcTransport> StartTransport(const NodeId& self, std::string listen = "",
                                              size_t queue_messages = 4096) {
  GrpcTransportOptions o;
  o.self = self;
  if (!listen.empty()) o.listen = std::move(listen);
  o.queue_messages = queue_messages;
  Result<std::unique_ptr<GrpcTransport>> t = GrpcTransport::Start(o);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return t.ok() ? std::move(*t) : nullptr;
}

void Mesh(const std::vector<GrpcTransport*>& nodes) {
  std::vector<PeerAddress> peers;
  for (GrpcTransport* t : nodes) peers.push_back({t->self(), t->address()});
  for (GrpcTransport* t : nodes) t->SetPeers(peers);
}

std::vector<uint64_t> Seqs(const std::vector<MessageEnvelope>& got) {
  std::vector<uint64_t> out;
  for (const auto& e : got) out.push_back(e.seq());
  return out;
}

std::vector<uint64_t> Range(uint64_t n) {
  std::vector<uint64_t> out;
  for (uint64_t i = 0; i < n; ++i) out.push_back(i);
  return out;
}

TEST(GrpcTransportTest, BothDirectionsInOrderOnOneStreamPerPair) {
  auto a = StartTransport(kA);
  auto b = StartTransport(kB);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  Inbox at_a, at_b;
  a->SetReceiver(at_a.AsReceiver());
  b->SetReceiver(at_b.AsReceiver());
  Mesh({a.get(), b.get()});
  constexpr uint64_t kN = 500;
  for (uint64_t i = 0; i < kN; ++i) {
    ASSERT_TRUE(a->Send(Envelope(kA, kB, i)).ok());
    ASSERT_TRUE(b->Send(Envelope(kB, kA, i)).ok());
  }
  ASSERT_TRUE(at_b.WaitFor(kN));
  ASSERT_TRUE(at_a.WaitFor(kN));
  EXPECT_EQ(Seqs(at_b.got()), Range(kN));
  EXPECT_EQ(Seqs(at_a.got()), Range(kN));
  for (const auto& e : at_a.got()) ASSERT_EQ(e.from(), kB.value());
  // One stream: A dialed, B accepted; nothing was refused.
  EXPECT_EQ(a->stats().streams_opened, 1u);
  EXPECT_EQ(b->stats().streams_opened, 1u);
  EXPECT_EQ(b->stats().streams_refused, 0u);
  EXPECT_TRUE(a->Connected(kB));
  EXPECT_TRUE(b->Connected(kA));
}

TEST(GrpcTransportTest, SendToANodeThatIsNotRegisteredIsUnavailable) {
  auto a = StartTransport(kA);
  ASSERT_NE(a, nullptr);
  Status s = a->Send(Envelope(kA, kB, 0));
  EXPECT_EQ(s.code(), Code::kUnavailable) << s.ToString();
  EXPECT_EQ(a->stats().unknown_peer, 1u);
  EXPECT_EQ(a->Send(Envelope(kA, kA, 0)).code(), Code::kInvalidArgument);
}

TEST(GrpcTransportTest, QueueHoldsWhilePeerIsDownAndDrainsAfterItRestarts) {
  auto a = StartTransport(kA);
  auto b = StartTransport(kB);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  Inbox first;
  b->SetReceiver(first.AsReceiver());
  Mesh({a.get(), b.get()});
  ASSERT_TRUE(a->Send(Envelope(kA, kB, 0)).ok());
  ASSERT_TRUE(first.WaitFor(1));
  const std::string b_address = b->address();
  b.reset();  // B goes away; A keeps queueing.
  ASSERT_TRUE(PollUntil([&] { return !a->Connected(kB); }));
  for (uint64_t i = 1; i <= 20; ++i) ASSERT_TRUE(a->Send(Envelope(kA, kB, i)).ok());
  // B comes back at the same address; A reconnects and sends the rest.
  b = StartTransport(kB, b_address);
  ASSERT_NE(b, nullptr);
  Inbox second;
  b->SetReceiver(second.AsReceiver());
  Mesh({a.get(), b.get()});
  ASSERT_TRUE(second.WaitFor(20));
  std::vector<uint64_t> seqs = Seqs(second.got());
  // In order; the envelope in flight when B went may come again.
  EXPECT_TRUE(std::is_sorted(seqs.begin(), seqs.end()));
  EXPECT_EQ(seqs.back(), 20u);
  EXPECT_GE(a->stats().streams_opened, 2u);
}

TEST(GrpcTransportTest, QueueToAnUnreachablePeerIsBounded) {
  auto a = StartTransport(kA, "", /*queue_messages=*/16);
  ASSERT_NE(a, nullptr);
  // B is registered but nothing listens at its address.
  auto gone = StartTransport(kB);
  ASSERT_NE(gone, nullptr);
  const std::string dead_address = gone->address();
  gone.reset();
  a->SetPeers({{kB, dead_address}});
  for (uint64_t i = 0; i < 16; ++i) ASSERT_TRUE(a->Send(Envelope(kA, kB, i)).ok());
  Status full = a->Send(Envelope(kA, kB, 16));
  EXPECT_EQ(full.code(), Code::kBusy) << full.ToString();
  EXPECT_TRUE(IsRetryable(full.code()));
  EXPECT_EQ(a->stats().queue_full, 1u);
  // Bytes bound too.
  GrpcTransportOptions o;
  o.self = kA;
  o.queue_bytes = 1000;
  auto small = GrpcTransport::Start(o);
  ASSERT_TRUE(small.ok());
  (*small)->SetPeers({{kB, dead_address}});
  ASSERT_TRUE((*small)->Send(Envelope(kA, kB, 0, 600)).ok());
  EXPECT_EQ((*small)->Send(Envelope(kA, kB, 1, 600)).code(), Code::kBusy);
  // Deregistering the peer drops its queue.
  a->SetPeers({});
  EXPECT_EQ(a->stats().dropped_on_remove, 16u);
  EXPECT_EQ(a->Send(Envelope(kA, kB, 0)).code(), Code::kUnavailable);
}

TEST(GrpcTransportTest, StreamFromANodeThatIsNotRegisteredIsRefused) {
  auto a = StartTransport(kA);
  auto b = StartTransport(kB);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  Inbox at_b;
  b->SetReceiver(at_b.AsReceiver());
  // A knows B, B does not know A: A's streams are refused.
  a->SetPeers({{kB, b->address()}});
  ASSERT_TRUE(a->Send(Envelope(kA, kB, 0)).ok());
  ASSERT_TRUE(PollUntil([&] { return b->stats().streams_refused >= 2; }, seconds(10)));
  EXPECT_EQ(at_b.size(), 0u);
  EXPECT_FALSE(a->Connected(kB));
  // Once B sees A registered, the queued envelope arrives.
  b->SetPeers({{kA, a->address()}});
  ASSERT_TRUE(at_b.WaitFor(1));
}

TEST(GrpcTransportTest, APeerThatIsDeregisteredIsCutOff) {
  auto a = StartTransport(kA);
  auto b = StartTransport(kB);
  auto c = StartTransport(kC);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  ASSERT_NE(c, nullptr);
  Inbox at_c;
  c->SetReceiver(at_c.AsReceiver());
  Mesh({a.get(), b.get(), c.get()});
  ASSERT_TRUE(a->Send(Envelope(kA, kC, 0)).ok());
  ASSERT_TRUE(b->Send(Envelope(kB, kC, 0)).ok());
  ASSERT_TRUE(at_c.WaitFor(2));
  // C learns that A is gone (its session expired): A's stream is cut and
  // A's later envelopes never reach C's receiver; B's still do.
  c->SetPeers({{kB, b->address()}, {kC, c->address()}});
  EXPECT_FALSE(c->Connected(kA));
  for (uint64_t i = 1; i <= 5; ++i) (void)a->Send(Envelope(kA, kC, i));
  ASSERT_TRUE(b->Send(Envelope(kB, kC, 1)).ok());
  ASSERT_TRUE(at_c.WaitFor(3));
  ASSERT_TRUE(PollUntil([&] { return c->stats().streams_refused >= 1; }, seconds(10)));
  for (const auto& e : at_c.got()) {
    if (e.from() == kA.value()) {
      EXPECT_EQ(e.seq(), 0u);
    }
  }
  EXPECT_EQ(at_c.size(), 3u);
}

// A raw client speaking the protocol, to send what a real node never would.
class RawPeer {
 public:
  explicit RawPeer(const std::string& address)
      : stub_(peerpb::PeerMessaging::NewStub(
            grpc::CreateChannel(address, grpc::InsecureChannelCredentials()))),
        rw_(stub_->Connect(&context_)) {}
  ~RawPeer() {
    if (finished_) return;
    context_.TryCancel();
    (void)rw_->Finish();
  }
  bool Write(const MessageEnvelope& e) { return rw_->Write(e); }
  bool Read(MessageEnvelope* e) { return rw_->Read(e); }
  grpc::Status Finish() {
    finished_ = true;
    return rw_->Finish();
  }

 private:
  std::unique_ptr<peerpb::PeerMessaging::Stub> stub_;
  grpc::ClientContext context_;
  std::unique_ptr<grpc::ClientReaderWriter<MessageEnvelope, MessageEnvelope>> rw_;
  bool finished_ = false;
};

MessageEnvelope Hello(const NodeId& from, const NodeId& to, const std::string& cluster) {
  MessageEnvelope h;
  h.set_from(from.value());
  h.set_to(to.value());
  h.set_payload(cluster);
  return h;
}

TEST(GrpcTransportTest, BadHellosAreRefusedWithAReason) {
  auto b = StartTransport(kB);
  ASSERT_NE(b, nullptr);
  b->SetPeers({{kA, "127.0.0.1:1"}, {kC, "127.0.0.1:1"}});
  struct Case {
    MessageEnvelope hello;
    const char* why;
  };
  MessageEnvelope not_hello = Envelope(kA, kB, 0);
  std::vector<Case> cases = {
      {Hello(kA, kC, "default"), "for node"},
      {Hello(kA, kB, "other"), "cluster"},
      {Hello(NodeId("node-x"), kB, "default"), "not a registered peer"},
      {Hello(kC, kB, "default"), "must wait"},  // C sorts after B: B dials.
      {not_hello, "not a hello"},
  };
  for (const Case& c : cases) {
    RawPeer raw(b->address());
    ASSERT_TRUE(raw.Write(c.hello));
    MessageEnvelope answer;
    EXPECT_FALSE(raw.Read(&answer));
    grpc::Status st = raw.Finish();
    EXPECT_EQ(st.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << c.why;
    EXPECT_NE(st.error_message().find(c.why), std::string::npos) << st.error_message();
  }
  EXPECT_EQ(b->stats().streams_refused, cases.size());
}

TEST(GrpcTransportTest, SpoofedSenderOnAnAcceptedStreamIsDropped) {
  auto b = StartTransport(kB);
  ASSERT_NE(b, nullptr);
  Inbox at_b;
  b->SetReceiver(at_b.AsReceiver());
  b->SetPeers({{kA, "127.0.0.1:1"}, {kC, "127.0.0.1:1"}});
  RawPeer raw(b->address());
  ASSERT_TRUE(raw.Write(Hello(kA, kB, "default")));
  MessageEnvelope answer;
  ASSERT_TRUE(raw.Read(&answer));
  EXPECT_EQ(answer.from(), kB.value());
  EXPECT_EQ(answer.to(), kA.value());
  ASSERT_TRUE(raw.Write(Envelope(kC, kB, 1)));            // Claims to be C.
  ASSERT_TRUE(raw.Write(Envelope(kA, NodeId("zz"), 2)));  // For another node.
  ASSERT_TRUE(raw.Write(Envelope(kA, kB, 3)));            // Fine.
  ASSERT_TRUE(at_b.WaitFor(1));
  EXPECT_EQ(Seqs(at_b.got()), std::vector<uint64_t>{3});
  EXPECT_EQ(b->stats().rejected, 2u);
}

TEST(GrpcTransportTest, SetReceiverWaitsForTheOldReceiver) {
  auto a = StartTransport(kA);
  auto b = StartTransport(kB);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  Notification entered;
  Notification release;
  std::atomic<int> old_calls{0};
  b->SetReceiver([&](MessageEnvelope) {
    old_calls.fetch_add(1);
    entered.Notify();
    EXPECT_TRUE(release.WaitFor(seconds(10)));
    return Status::Ok();
  });
  Mesh({a.get(), b.get()});
  ASSERT_TRUE(a->Send(Envelope(kA, kB, 0)).ok());
  ASSERT_TRUE(entered.WaitFor(seconds(10)));
  std::atomic<bool> replaced{false};
  std::thread setter([&] {
    b->SetReceiver(nullptr);
    replaced.store(true);
  });
  // SetReceiver is still waiting while the old receiver runs.
  EXPECT_FALSE(replaced.load());
  release.Notify();
  setter.join();
  EXPECT_TRUE(replaced.load());
  EXPECT_EQ(old_calls.load(), 1);
}

TEST(GrpcTransportTest, TwoMessageCentersExchangeCommands) {
  auto a = StartTransport(kA);
  auto b = StartTransport(kB);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  Mesh({a.get(), b.get()});
  MessageCenterOptions ao;
  ao.self = kA;
  ao.transport = a.get();
  MessageCenterOptions bo;
  bo.self = kB;
  bo.transport = b.get();
  MessageCenterImpl center_a(ao);
  MessageCenterImpl center_b(bo);
  ASSERT_TRUE(center_a.Start().ok());
  ASSERT_TRUE(center_b.Start().ok());
  Recorder at_b;
  ASSERT_TRUE(center_b.RegisterHandler(kDispatcherManagerTopic, at_b.AsHandler()).ok());
  heartbeatpb::MaintainerBootstrapRequest req;
  req.set_sender_node_id(kA.value());
  req.set_maintainer_epoch(9);
  req.mutable_changefeed_id()->set_name("cf");
  ASSERT_TRUE(center_a.SendCommand(MakeMessage(kB, kDispatcherManagerTopic, req)).ok());
  ASSERT_TRUE(at_b.WaitFor(1, seconds(10)));
  const TargetMessage got = at_b.messages().front();
  EXPECT_EQ(got.from, kA);
  EXPECT_EQ(got.epoch, MaintainerEpoch(9));
  const auto* decoded = got.As<heartbeatpb::MaintainerBootstrapRequest>();
  ASSERT_NE(decoded, nullptr);
  EXPECT_EQ(decoded->changefeed_id().name(), "cf");
  center_a.Stop();
  center_b.Stop();
}

}  // namespace
}  // namespace sluice::messaging
