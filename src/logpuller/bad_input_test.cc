// Bad input from TiKV, fed by a scripted fake store: a protocol violation
// restarts the affected subscription from its last published resolved ts,
// an incompatibility fails it for good, input for nobody is ignored, and a
// broken stream only retries its regions. Every test also checks that a
// second subscription on another region keeps advancing, that no consumer
// saw a broken promise, and that the client stops cleanly with no quota held.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "codec/tablecodec.h"
#include "common/test_util.h"
#include "logpuller/fake_store.h"
#include "logpuller/fake_store_fixture.h"
#include "logpuller/puller_test_util.h"
#include "logpuller/subscription_client.h"

namespace sluice::logpuller {
namespace {

using testing::CommitRow;
using testing::CommittedRow;
using testing::FakeRegister;
using testing::FakeStep;
using testing::FakeStore;
using testing::InitializedRow;
using ::testing::IsEmpty;
using testing::KeyA;
using testing::PrewriteRow;
using testing::PullerEnv;
using testing::Put;
using testing::RecordingConsumer;

using testing::kTableA;
using testing::kTableB;
using testing::kTableC;
using testing::StartOptions;
using testing::Sub;

constexpr auto kWait = testing::kFakeWait;

cdcpb::Error CompatibilityError() {
  cdcpb::Error error;
  error.mutable_compatibility()->set_required_version("9.9.9");
  return error;
}

class BadInputTest : public testing::FakeStoreClientTest {};

TEST_F(BadInputTest, CommitWithoutPrewriteRestartsFromCheckpoint) {
  ASSERT_NO_FATAL_FAILURE(Start());
  fake_->Script(region_a_, 1, {FakeStep::Initialized(), FakeStep::Resolved(Ts(2000))});
  // The retry's scan finds the transaction committed, then a live one follows.
  fake_->Script(region_a_, 2,
                {FakeStep::Rows({CommittedRow(KeyA(1), "v1", Ts(2100), Ts(2200))}),
                 FakeStep::Initialized(), FakeStep::Rows({PrewriteRow(KeyA(2), "v2", Ts(2300))}),
                 FakeStep::Rows({CommitRow(KeyA(2), Ts(2300), Ts(2400))})});
  Sub a = Subscribe(kTableA);
  Sub b = Subscribe(kTableB);
  ASSERT_TRUE(a->WaitResolved(Ts(2000), kWait));
  ASSERT_TRUE(WaitRegistered(region_b_, 1));
  fake_->Tick(Ts(1500));
  ASSERT_TRUE(b->WaitResolved(Ts(1500), kWait));

  ASSERT_TRUE(
      fake_->Push(region_a_, {FakeStep::Rows({CommitRow(KeyA(1), Ts(2100), Ts(2200))})}).ok());
  ASSERT_TRUE(PollUntil([&] { return stats().restarts >= 1; }, kWait));
  fake_->Tick(Ts(2500));  // B keeps going while A restarts.
  ASSERT_TRUE(b->WaitResolved(Ts(2500), kWait));

  ASSERT_TRUE(WaitRegistered(region_a_, 2));
  FakeRegister first = Register(region_a_, 1);
  FakeRegister second = Register(region_a_, 2);
  EXPECT_EQ(second.checkpoint, Ts(2000));  // The last published resolved ts.
  EXPECT_NE(second.request_id, first.request_id);
  EXPECT_TRUE(PollUntil([&] { return fake_->NumDeregisters() >= 1; }, kWait));
  fake_->Tick(Ts(3000));
  ASSERT_TRUE(a->WaitResolved(Ts(3000), kWait));
  ASSERT_TRUE(b->WaitResolved(Ts(3000), kWait));
  std::vector<RawKvEntry> want = {Put(KeyA(1), "v1", Ts(2100), Ts(2200)),
                                  Put(KeyA(2), "v2", Ts(2300), Ts(2400))};
  EXPECT_EQ(testing::DiffChanges(want, Delivered(a)), "");
  EXPECT_THAT(b->persisted(), IsEmpty());
  EXPECT_EQ(stats().restarts, 1u);
  EXPECT_EQ(stats().fatal, 0u);
  EXPECT_EQ(stats().subscriptions, 2u);
}

TEST_F(BadInputTest, CommitAtOrBelowRegionResolvedTsRestarts) {
  ASSERT_NO_FATAL_FAILURE(Start());
  fake_->Script(region_a_, 1, {FakeStep::Initialized(), FakeStep::Resolved(Ts(2000))});
  fake_->Script(region_a_, 2, {FakeStep::Initialized(), FakeStep::Resolved(Ts(2600))});
  Sub a = Subscribe(kTableA);
  Sub b = Subscribe(kTableB);
  ASSERT_TRUE(a->WaitResolved(Ts(2000), kWait));
  // A scanned row below the region's resolved ts.
  ASSERT_TRUE(
      fake_->Push(region_a_, {FakeStep::Rows({CommittedRow(KeyA(1), "old", Ts(1500), Ts(1900))})})
          .ok());
  ASSERT_TRUE(WaitRegistered(region_a_, 2));
  ASSERT_TRUE(a->WaitResolved(Ts(2600), kWait));
  EXPECT_EQ(Register(region_a_, 2).checkpoint, Ts(2000));
  // A live commit exactly at the region's resolved ts.
  ASSERT_TRUE(fake_
                  ->Push(region_a_, {FakeStep::Rows({PrewriteRow(KeyA(2), "late", Ts(2500))}),
                                     FakeStep::Rows({CommitRow(KeyA(2), Ts(2500), Ts(2600))})})
                  .ok());
  ASSERT_TRUE(WaitRegistered(region_a_, 3));
  EXPECT_EQ(Register(region_a_, 3).checkpoint, Ts(2600));
  fake_->Tick(Ts(3000));
  ASSERT_TRUE(a->WaitResolved(Ts(3000), kWait));
  ASSERT_TRUE(b->WaitResolved(Ts(3000), kWait));
  EXPECT_THAT(a->persisted(), IsEmpty());
  EXPECT_EQ(stats().restarts, 2u);
  EXPECT_EQ(stats().fatal, 0u);
}

TEST_F(BadInputTest, UnknownLogTypeOrOpTypeRestarts) {
  ASSERT_NO_FATAL_FAILURE(Start());
  cdcpb::Event_Row unknown_type = CommittedRow(KeyA(1), "x", Ts(2000), Ts(2100));
  unknown_type.set_type(static_cast<cdcpb::Event::LogType>(42));
  cdcpb::Event_Row unknown_op = CommittedRow(KeyA(1), "x", Ts(2000), Ts(2100));
  unknown_op.set_op_type(static_cast<cdcpb::Event_Row::OpType>(7));
  cdcpb::Event_Row commit_no_op = CommitRow(KeyA(1), Ts(2000), Ts(2100));
  commit_no_op.set_op_type(cdcpb::Event_Row::UNKNOWN);  // Neither put nor delete (a lock).
  fake_->Script(region_a_, 1, {FakeStep::Initialized(), FakeStep::Rows({unknown_type})});
  fake_->Script(region_a_, 2, {FakeStep::Rows({unknown_op})});  // During the scan.
  fake_->Script(region_a_, 3,
                {FakeStep::Initialized(),
                 FakeStep::Rows({PrewriteRow(KeyA(1), "x", Ts(2000)), commit_no_op})});
  fake_->Script(
      region_a_, 4,
      {FakeStep::Rows({CommittedRow(KeyA(1), "x", Ts(2000), Ts(2100))}), FakeStep::Initialized()});
  Sub a = Subscribe(kTableA);
  Sub b = Subscribe(kTableB);
  ASSERT_TRUE(WaitRegistered(region_b_, 1));
  fake_->Tick(Ts(1500));
  ASSERT_TRUE(b->WaitResolved(Ts(1500), kWait));
  ASSERT_TRUE(WaitRegistered(region_a_, 4));
  fake_->Tick(Ts(3000));
  ASSERT_TRUE(a->WaitResolved(Ts(3000), kWait));
  ASSERT_TRUE(b->WaitResolved(Ts(3000), kWait));
  EXPECT_EQ(testing::DiffChanges({Put(KeyA(1), "x", Ts(2000), Ts(2100))}, Delivered(a)), "");
  EXPECT_EQ(stats().restarts, 3u);
  EXPECT_EQ(stats().fatal, 0u);
}

TEST_F(BadInputTest, InitializedTwiceRestarts) {
  ASSERT_NO_FATAL_FAILURE(Start());
  fake_->Script(region_a_, 1, {FakeStep::Initialized(), FakeStep::Initialized()});
  fake_->Script(
      region_a_, 2,
      {FakeStep::Rows({CommittedRow(KeyA(3), "y", Ts(1100), Ts(1200))}), FakeStep::Initialized()});
  Sub a = Subscribe(kTableA);
  Sub b = Subscribe(kTableB);
  ASSERT_TRUE(WaitRegistered(region_a_, 2));
  ASSERT_TRUE(WaitRegistered(region_b_, 1));
  fake_->Tick(Ts(2000));
  ASSERT_TRUE(a->WaitResolved(Ts(2000), kWait));
  ASSERT_TRUE(b->WaitResolved(Ts(2000), kWait));
  EXPECT_EQ(testing::DiffChanges({Put(KeyA(3), "y", Ts(1100), Ts(1200))}, Delivered(a)), "");
  EXPECT_EQ(stats().restarts, 1u);
}

TEST_F(BadInputTest, InputForNobodyIsIgnored) {
  // One worker: everything the stream carries is handled in order, so once
  // the final tick is published every earlier message was handled.
  ASSERT_NO_FATAL_FAILURE(Start({.region_workers = 1}));
  Sub a = Subscribe(kTableA);
  Sub b = Subscribe(kTableB);
  ASSERT_TRUE(WaitRegistered(region_a_, 1));
  ASSERT_TRUE(WaitRegistered(region_b_, 1));
  fake_->Tick(Ts(1500));
  ASSERT_TRUE(a->WaitResolved(Ts(1500), kWait));
  ASSERT_TRUE(b->WaitResolved(Ts(1500), kWait));
  const uint64_t kUnknownRegion = 999999;
  const uint64_t kUnknownRequest = 0xdeadbeef;
  auto row = [] { return FakeStep::Rows({CommittedRow(KeyA(1), "ghost", Ts(1600), Ts(1700))}); };
  cdcpb::ChangeDataEvent nothing;
  cdcpb::ChangeDataEvent unknown_regions;
  unknown_regions.mutable_resolved_ts()->add_regions(kUnknownRegion);
  unknown_regions.mutable_resolved_ts()->add_regions(kUnknownRegion + 1);
  unknown_regions.mutable_resolved_ts()->set_ts(5000);
  ASSERT_TRUE(
      fake_
          ->Push(region_a_, {row().ForRegion(kUnknownRegion), row().ForRequest(kUnknownRequest),
                             row().ForRegion(region_b_.value()),  // B's region, A's request id.
                             FakeStep::Error(CompatibilityError()).ForRegion(kUnknownRegion),
                             FakeStep::Error(CompatibilityError()).ForRequest(kUnknownRequest),
                             FakeStep::Empty(), FakeStep::LegacyResolved(Ts(0)),
                             FakeStep::Resolved(Ts(5000)).ForRegion(kUnknownRegion),
                             FakeStep::Resolved(Ts(5000)).ForRequest(kUnknownRequest),
                             FakeStep::Resolved(Ts(0)), FakeStep::Raw(unknown_regions),
                             FakeStep::Raw(nothing)})
          .ok());
  fake_->Tick(Ts(2000));
  ASSERT_TRUE(a->WaitResolved(Ts(2000), kWait));
  ASSERT_TRUE(b->WaitResolved(Ts(2000), kWait));
  EXPECT_EQ(a->resolved(), Ts(2000));
  EXPECT_EQ(b->resolved(), Ts(2000));
  EXPECT_THAT(a->persisted(), IsEmpty());
  EXPECT_THAT(b->persisted(), IsEmpty());
  EXPECT_FALSE(a->error().has_value());
  SubscriptionClient::Stats s = stats();
  EXPECT_EQ(s.restarts, 0u);
  EXPECT_EQ(s.fatal, 0u);
  EXPECT_EQ(s.region_errors, 0u);
  EXPECT_EQ(fake_->NumRegisters(region_a_), 1);
}

TEST_F(BadInputTest, DuplicateRequestRestarts) {
  ASSERT_NO_FATAL_FAILURE(Start());
  fake_->Script(region_a_, 1, {FakeStep::Initialized(), FakeStep::Resolved(Ts(1500))});
  fake_->Script(
      region_a_, 2,
      {FakeStep::Rows({CommittedRow(KeyA(4), "z", Ts(1600), Ts(1700))}), FakeStep::Initialized()});
  Sub a = Subscribe(kTableA);
  Sub b = Subscribe(kTableB);
  ASSERT_TRUE(a->WaitResolved(Ts(1500), kWait));
  cdcpb::Error duplicate;
  duplicate.mutable_duplicate_request()->set_region_id(region_a_.value());
  ASSERT_TRUE(fake_->Push(region_a_, {FakeStep::Error(duplicate)}).ok());
  ASSERT_TRUE(WaitRegistered(region_a_, 2));
  EXPECT_EQ(Register(region_a_, 2).checkpoint, Ts(1500));
  EXPECT_NE(Register(region_a_, 2).request_id, Register(region_a_, 1).request_id);
  ASSERT_TRUE(WaitRegistered(region_b_, 1));
  fake_->Tick(Ts(2000));
  ASSERT_TRUE(a->WaitResolved(Ts(2000), kWait));
  ASSERT_TRUE(b->WaitResolved(Ts(2000), kWait));
  EXPECT_EQ(testing::DiffChanges({Put(KeyA(4), "z", Ts(1600), Ts(1700))}, Delivered(a)), "");
  EXPECT_EQ(stats().restarts, 1u);
  EXPECT_EQ(stats().fatal, 0u);
  EXPECT_FALSE(a->error().has_value());
}

class IncompatibleTest : public BadInputTest {
 protected:
  // A gets `error` (after INITIALIZED if `initialized`); it must fail for
  // good while B keeps advancing.
  void ExpectFailsForGood(const cdcpb::Error& error, bool initialized) {
    if (initialized) {
      fake_->Script(region_a_, 1, {FakeStep::Initialized(), FakeStep::Resolved(Ts(1500))});
    } else {
      fake_->Script(region_a_, 1, {FakeStep::Error(error)});
    }
    Sub a = Subscribe(kTableA);
    Sub b = Subscribe(kTableB);
    ASSERT_TRUE(WaitRegistered(region_b_, 1));
    if (initialized) {
      ASSERT_TRUE(a->WaitResolved(Ts(1500), kWait));
      ASSERT_TRUE(fake_->Push(region_a_, {FakeStep::Error(error)}).ok());
    }
    ASSERT_TRUE(PollUntil([&] { return a->error().has_value(); }, kWait));
    EXPECT_EQ(a->error()->code(), Code::kIncompatible) << a->error()->ToString();
    size_t calls = a->num_resolved_calls();
    fake_->Tick(Ts(2000));
    ASSERT_TRUE(b->WaitResolved(Ts(2000), kWait));
    fake_->Tick(Ts(3000));
    ASSERT_TRUE(b->WaitResolved(Ts(3000), kWait));
    EXPECT_TRUE(PollUntil([&] { return !fake_->Live(region_a_).has_value(); }, kWait));
    EXPECT_EQ(a->num_resolved_calls(), calls);
    EXPECT_LT(a->resolved(), Ts(2000));
    EXPECT_EQ(fake_->NumRegisters(region_a_), 1);
    SubscriptionClient::Stats s = stats();
    EXPECT_EQ(s.fatal, 1u);
    EXPECT_EQ(s.restarts, 0u);
    EXPECT_EQ(s.subscriptions, 1u);
    env_->client->Unsubscribe(a.id);  // Already gone: a no-op.
  }
};

TEST_F(IncompatibleTest, CompatibilityErrorFailsForGood) {
  ASSERT_NO_FATAL_FAILURE(Start());
  ExpectFailsForGood(CompatibilityError(), /*initialized=*/true);
}

TEST_F(IncompatibleTest, ClusterIdMismatchFailsForGood) {
  ASSERT_NO_FATAL_FAILURE(Start());
  cdcpb::Error error;
  error.mutable_cluster_id_mismatch()->set_current(1);
  error.mutable_cluster_id_mismatch()->set_request(env_->cluster->cluster_id());
  ExpectFailsForGood(error, /*initialized=*/false);
}

TEST_F(BadInputTest, StreamBrokenByServerRetriesRegions) {
  ASSERT_NO_FATAL_FAILURE(Start());
  // A scans one row, then a transaction is prewritten when the stream breaks.
  fake_->Script(
      region_a_, 1,
      {FakeStep::Rows({CommittedRow(KeyA(1), "v1", Ts(1100), Ts(1200))}), FakeStep::Initialized(),
       FakeStep::Resolved(Ts(1500)), FakeStep::Rows({PrewriteRow(KeyA(2), "v2", Ts(1600))})});
  // After the break the scan from the region's resolved ts finds it committed.
  fake_->Script(
      region_a_, 2,
      {FakeStep::Rows({CommittedRow(KeyA(2), "v2", Ts(1600), Ts(1700))}), FakeStep::Initialized()});
  // C's register makes the store end the stream mid-flight.
  fake_->Script(region_c_, 1,
                {FakeStep::Break(grpc::Status(grpc::StatusCode::UNAVAILABLE, "injected"))});
  Sub a = Subscribe(kTableA);
  Sub b = Subscribe(kTableB);
  ASSERT_TRUE(a->WaitResolved(Ts(1500), kWait));
  ASSERT_TRUE(WaitRegistered(region_b_, 1));
  fake_->Tick(Ts(1500));
  ASSERT_TRUE(b->WaitResolved(Ts(1500), kWait));
  Sub c = Subscribe(kTableC);
  ASSERT_TRUE(WaitRegistered(region_a_, 2));
  ASSERT_TRUE(WaitRegistered(region_b_, 2));
  ASSERT_TRUE(WaitRegistered(region_c_, 2));
  FakeRegister first = Register(region_a_, 1);
  FakeRegister second = Register(region_a_, 2);
  EXPECT_EQ(second.request_id, first.request_id);  // The same run: no restart.
  EXPECT_EQ(second.checkpoint, Ts(1500));          // From the region's resolved ts.
  EXPECT_NE(second.stream_id, first.stream_id);
  fake_->Tick(Ts(2000));
  ASSERT_TRUE(a->WaitResolved(Ts(2000), kWait));
  ASSERT_TRUE(b->WaitResolved(Ts(2000), kWait));
  ASSERT_TRUE(c->WaitResolved(Ts(2000), kWait));
  std::vector<RawKvEntry> want = {Put(KeyA(1), "v1", Ts(1100), Ts(1200)),
                                  Put(KeyA(2), "v2", Ts(1600), Ts(1700))};
  EXPECT_EQ(testing::DiffChanges(want, Delivered(a)), "");
  SubscriptionClient::Stats s = stats();
  EXPECT_GE(s.stream_errors, 3u);
  EXPECT_EQ(s.restarts, 0u);
  EXPECT_EQ(s.fatal, 0u);
  EXPECT_EQ(s.region_errors, 0u);
  EXPECT_GE(fake_->NumStreams(), 2u);
  EXPECT_EQ(fake_->NumMultiplexedStreams(), fake_->NumStreams());
  EXPECT_TRUE(Register(region_a_, 1).old_value);
}

TEST_F(BadInputTest, ViolationDuringScanReleasesScanSlot) {
  // One unfinished scan per store: a run dropped during its scan must give
  // its slot back, or no region of that store is ever requested again.
  ASSERT_NO_FATAL_FAILURE(Start({.scan_window = 1}));
  cdcpb::Event_Row unknown_op = CommittedRow(KeyA(1), "x", Ts(2000), Ts(2100));
  unknown_op.set_op_type(static_cast<cdcpb::Event_Row::OpType>(7));
  fake_->Script(region_a_, 1, {FakeStep::Rows({unknown_op})});
  Sub a = Subscribe(kTableA);
  ASSERT_TRUE(PollUntil([&] { return stats().restarts >= 1; }, kWait));
  ASSERT_TRUE(WaitRegistered(region_a_, 2));
  Sub b = Subscribe(kTableB);
  ASSERT_TRUE(WaitRegistered(region_b_, 1));
  fake_->Tick(Ts(2000));
  ASSERT_TRUE(a->WaitResolved(Ts(2000), kWait));
  ASSERT_TRUE(b->WaitResolved(Ts(2000), kWait));
}

// Bytes put into `message` as an unknown field with the number of a known
// one: it serializes, but the receiver cannot decode that field.
void AddUndecodable(google::protobuf::Message* message, int field) {
  message->GetReflection()->MutableUnknownFields(message)->AddLengthDelimited(
      field, std::string("\x08", 1));  // A varint's tag without the varint.
}

TEST_F(BadInputTest, UndecodableRowsRestartTheSubscription) {
  ASSERT_NO_FATAL_FAILURE(Start());
  fake_->Script(region_a_, 1, {FakeStep::Initialized(), FakeStep::Resolved(Ts(1500))});
  fake_->Script(region_a_, 2,
                {FakeStep::Rows({CommittedRow(KeyA(2), "kept", Ts(2000), Ts(2100))}),
                 FakeStep::Initialized()});
  Sub a = Subscribe(kTableA);
  Sub b = Subscribe(kTableB);
  ASSERT_TRUE(a->WaitResolved(Ts(1500), kWait));
  // A good row, then one that does not decode, in one event.
  FakeStep bad = FakeStep::Rows({CommittedRow(KeyA(1), "lost", Ts(2000), Ts(2100))});
  AddUndecodable(bad.event.mutable_entries(), 1);
  ASSERT_TRUE(fake_->Push(region_a_, {bad}).ok());
  ASSERT_TRUE(WaitRegistered(region_a_, 2));
  ASSERT_TRUE(WaitRegistered(region_b_, 1));
  EXPECT_EQ(Register(region_a_, 2).checkpoint, Ts(1500));
  EXPECT_NE(Register(region_a_, 2).request_id, Register(region_a_, 1).request_id);
  fake_->Tick(Ts(3000));
  ASSERT_TRUE(a->WaitResolved(Ts(3000), kWait));
  ASSERT_TRUE(b->WaitResolved(Ts(3000), kWait));
  EXPECT_EQ(testing::DiffChanges({Put(KeyA(2), "kept", Ts(2000), Ts(2100))}, Delivered(a)), "");
  EXPECT_EQ(stats().restarts, 1u);
  EXPECT_EQ(stats().fatal, 0u);
}

TEST_F(BadInputTest, UndecodableMessageBreaksTheStreamAndItsRegionsRetry) {
  ASSERT_NO_FATAL_FAILURE(Start());
  fake_->Script(region_a_, 1, {FakeStep::Initialized(), FakeStep::Resolved(Ts(1500))});
  fake_->Script(region_a_, 2, {FakeStep::Initialized()});
  Sub a = Subscribe(kTableA);
  Sub b = Subscribe(kTableB);
  ASSERT_TRUE(a->WaitResolved(Ts(1500), kWait));
  ASSERT_TRUE(WaitRegistered(region_b_, 1));
  cdcpb::ChangeDataEvent garbage;
  AddUndecodable(&garbage, 1);  // An event that does not decode.
  ASSERT_TRUE(fake_->Push(region_a_, {FakeStep::Raw(garbage)}).ok());
  // Every region of the stream is asked for again, on a new stream, in the
  // same run.
  ASSERT_TRUE(WaitRegistered(region_a_, 2));
  ASSERT_TRUE(WaitRegistered(region_b_, 2));
  EXPECT_EQ(Register(region_a_, 2).request_id, Register(region_a_, 1).request_id);
  EXPECT_NE(Register(region_a_, 2).stream_id, Register(region_a_, 1).stream_id);
  EXPECT_EQ(Register(region_a_, 2).checkpoint, Ts(1500));
  fake_->Tick(Ts(2000));
  ASSERT_TRUE(a->WaitResolved(Ts(2000), kWait));
  ASSERT_TRUE(b->WaitResolved(Ts(2000), kWait));
  SubscriptionClient::Stats s = stats();
  EXPECT_GE(s.stream_errors, 2u);
  EXPECT_EQ(s.restarts, 0u);
  EXPECT_EQ(s.fatal, 0u);
}

}  // namespace
}  // namespace sluice::logpuller
