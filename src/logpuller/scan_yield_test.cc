// Scans yield to a first publish: while one subscription's first resolved ts
// waits for its scanned backlog to be persisted, the client holds the data of
// runs still scanning (bounded by scan_yield_max), and never holds the data
// of runs whose regions are all initialized. A scripted fake store decides
// when each table's scan ends; table A's consumer holds its batches.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <vector>

#include "codec/tablecodec.h"
#include "common/test_util.h"
#include "logpuller/fake_store.h"
#include "logpuller/fake_store_fixture.h"
#include "logpuller/puller_test_util.h"

namespace sluice::logpuller {
namespace {

using testing::CommitRow;
using testing::CommittedRow;
using testing::FakeStep;
using testing::HoldingConsumer;
using testing::kTableA;
using testing::kTableB;
using testing::PrewriteRow;
using testing::StartOptions;
using testing::Sub;

constexpr auto kWait = testing::kFakeWait;

std::string Key(TableId table, int64_t handle) { return codec::EncodeRowKey(table, handle); }

class ScanYieldTest : public testing::FakeStoreClientTest {
 protected:
  // Subscribes A, whose scan sends one row and ends, then a resolved ts of
  // 2000 that waits for that row: A's first publish is pending. Then
  // subscribes B, whose scan has not ended (`b_initialized` false) or has.
  void StartWithAWaiting(StartOptions options, bool b_initialized) {
    ASSERT_NO_FATAL_FAILURE(Start(options));
    fake_->Script(region_a_, 1,
                  {FakeStep::Rows({CommittedRow(Key(kTableA, 1), "a", Ts(1100), Ts(1200))}),
                   FakeStep::Initialized(), FakeStep::Resolved(Ts(2000))});
    std::vector<FakeStep> b_script;
    if (b_initialized) b_script.push_back(FakeStep::Initialized());
    fake_->Script(region_b_, 1, b_script);
    SubscribeWith(kTableA, a_);
    ASSERT_TRUE(
        PollUntil([&] { return env_->client->pipeline().FirstPublishesPending() == 1; }, kWait));
    b_ = Subscribe(kTableB);
    ASSERT_TRUE(WaitRegistered(region_b_, 1));
  }

  // B's row as its scan sends it, or as a live transaction.
  void PushB(bool live, Ts start = Ts(1100), Ts commit = Ts(1300)) {
    std::vector<FakeStep> steps;
    if (live) {
      steps = {FakeStep::Rows({PrewriteRow(Key(kTableB, 1), "b", start)}),
               FakeStep::Rows({CommitRow(Key(kTableB, 1), start, commit)})};
    } else {
      steps = {FakeStep::Rows({CommittedRow(Key(kTableB, 1), "b", start, commit)})};
    }
    ASSERT_TRUE(fake_->Push(region_b_, steps).ok());
  }

  // B finishes (if it has not) and resolves with its one row.
  void ExpectBCompletes(bool initialized) {
    if (!initialized) {
      ASSERT_TRUE(fake_->Push(region_b_, {FakeStep::Initialized()}).ok());
    }
    fake_->Tick(Ts(2500));
    ASSERT_TRUE(b_->WaitResolved(Ts(2500), kWait));
    ASSERT_EQ(Delivered(b_).size(), 1u);
    EXPECT_EQ(Delivered(b_)[0].key, Key(kTableB, 1));
  }

  // With scan_yield_max = `bound`, B's scanned row goes on while A waits,
  // after `yields` holds.
  void ExpectBScanGoesOnWithBound(std::chrono::milliseconds bound, uint64_t yields) {
    StartOptions options;
    options.scan_yield_max = bound;
    ASSERT_NO_FATAL_FAILURE(StartWithAWaiting(options, /*b_initialized=*/false));
    PushB(/*live=*/false);
    ExpectBWentOnWhileAWaits(yields, /*b_initialized=*/false);
  }

  // B's row reached its consumer while A still waits unpublished, after
  // `yields` held batches; then B completes and A is let go.
  void ExpectBWentOnWhileAWaits(uint64_t yields, bool b_initialized) {
    ASSERT_TRUE(PollUntil([&] { return b_->persisted().size() == 1; }, kWait));
    EXPECT_EQ(stats().scan_yields, yields);
    EXPECT_EQ(stats().scans_yielding, 0u);
    EXPECT_EQ(a_->resolved(), Ts());
    EXPECT_EQ(env_->client->pipeline().FirstPublishesPending(), 1u);
    ASSERT_NO_FATAL_FAILURE(ExpectBCompletes(b_initialized));
    a_->Release();
  }

  std::shared_ptr<HoldingConsumer> a_ = std::make_shared<HoldingConsumer>();
  Sub b_;
};

TEST_F(ScanYieldTest, AScanningTableWaitsUntilAnotherTablesFirstResolvedTsIsPublished) {
  StartOptions options;
  options.scan_yield_max = std::chrono::hours(1);  // Only A's publish can let B go.
  ASSERT_NO_FATAL_FAILURE(StartWithAWaiting(options, /*b_initialized=*/false));
  PushB(/*live=*/false);
  // B's batch waits in the client, before the pipeline: its consumer never
  // saw it.
  ASSERT_TRUE(PollUntil([&] { return stats().scans_yielding == 1; }, kWait));
  EXPECT_EQ(stats().scan_yields, 1u);
  EXPECT_TRUE(b_->persisted().empty());
  EXPECT_EQ(a_->resolved(), Ts());

  a_->Release();
  ASSERT_TRUE(PollUntil([&] { return a_->resolved() == Ts(2000); }, kWait));
  ASSERT_TRUE(PollUntil([&] { return b_->persisted().size() == 1; }, kWait));
  EXPECT_EQ(stats().scans_yielding, 0u);
  EXPECT_EQ(env_->client->pipeline().FirstPublishesPending(), 0u);
  ASSERT_NO_FATAL_FAILURE(ExpectBCompletes(/*initialized=*/false));
}

TEST_F(ScanYieldTest, TheWaitIsBounded) {
  // A stays unpublished; B's row goes on once the bound has passed.
  ExpectBScanGoesOnWithBound(std::chrono::milliseconds(50), /*yields=*/1);
}

TEST_F(ScanYieldTest, ZeroTurnsItOff) {
  ExpectBScanGoesOnWithBound(std::chrono::milliseconds(0), /*yields=*/0);
}

TEST_F(ScanYieldTest, LiveDataOfAnInitializedTableNeverWaits) {
  ASSERT_NO_FATAL_FAILURE(StartWithAWaiting(StartOptions{}, /*b_initialized=*/true));
  PushB(/*live=*/true);
  ExpectBWentOnWhileAWaits(/*yields=*/0, /*b_initialized=*/true);
}

// Once a subscription has a resolved ts, readers wait on it: a rescan of its
// region (after a region error) does not wait for A.
TEST_F(ScanYieldTest, ARescanOfAResolvedTableNeverWaits) {
  StartOptions options;
  options.scan_yield_max = std::chrono::hours(1);
  ASSERT_NO_FATAL_FAILURE(StartWithAWaiting(options, /*b_initialized=*/true));
  fake_->Tick(Ts(1500));
  ASSERT_TRUE(b_->WaitResolved(Ts(1500), kWait));
  cdcpb::Error epoch;
  epoch.mutable_epoch_not_match();
  fake_->Script(region_b_, 2, {});  // The retry's scan has not ended.
  ASSERT_TRUE(fake_->Push(region_b_, {FakeStep::Error(epoch)}).ok());
  ASSERT_TRUE(WaitRegistered(region_b_, 2));
  PushB(/*live=*/false, Ts(1550), Ts(1600));  // The rescan starts at 1500.
  ExpectBWentOnWhileAWaits(/*yields=*/0, /*b_initialized=*/false);
}

}  // namespace
}  // namespace sluice::logpuller
