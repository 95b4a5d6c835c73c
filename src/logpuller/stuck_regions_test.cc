// The resolve-lock checker's decisions, on times chosen by the test.
#include "logpuller/stuck_regions.h"

#include <gtest/gtest.h>

#include <vector>

#include "common/tso.h"

namespace sluice::logpuller {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr int64_t kMs = 1'700'000'000'000;
Ts At(int64_t ms) { return tso::Compose(kMs + ms, 0); }

class StuckRegionsTest : public ::testing::Test {
 protected:
  StuckRegionsTest() : stuck_(Options()) {}
  static StuckRegionOptions Options() {
    StuckRegionOptions o;
    o.resolve_lock_after = seconds(4);
    o.resolve_lock_interval = seconds(10);
    o.reconnect_after = seconds(60);
    return o;
  }
  // Span 1 (request 7): region 10 at `slow`, region 11 at `fast`; the span
  // resolved ts is the smaller.
  static std::vector<SpanProgress> Spans(Ts slow, Ts fast, bool initialized = true) {
    SpanProgress span;
    span.id = SubscriptionId(1);
    span.request_id = 7;
    span.resolved_ts = std::min(slow, fast);
    span.initialized = initialized;
    span.regions = {{RegionId(10), "a", slow, initialized}, {RegionId(11), "m", fast, true}};
    return {span};
  }
  // One check at local time `t_ms` with PD's clock at `pd_ms`.
  void Check(const std::vector<SpanProgress>& spans, int64_t pd_ms, int64_t t_ms) {
    resolve_.clear();
    reconnect_.clear();
    stuck_.Check(spans, At(pd_ms), Clock::TimePoint(milliseconds(t_ms)), &resolve_, &reconnect_);
  }

  StuckRegions stuck_;
  std::vector<ResolveLockTask> resolve_;
  std::vector<ReconnectTask> reconnect_;
};

TEST_F(StuckRegionsTest, ResolvesTheRegionsBehindOnceTheSpanIsStuckLongEnough) {
  // Lagging PD by 10 s but just seen: not yet (it may move).
  Check(Spans(At(0), At(9'000)), 10'000, 0);
  EXPECT_TRUE(resolve_.empty());
  Check(Spans(At(0), At(12'000)), 13'000, 3'999);
  EXPECT_TRUE(resolve_.empty());
  // Unmoved for 4 s and lagging: the slow region only, up to ts + 4 s.
  Check(Spans(At(0), At(13'000)), 14'000, 4'000);
  ASSERT_EQ(resolve_.size(), 1u);
  EXPECT_EQ(resolve_[0].region, RegionId(10));
  EXPECT_EQ(resolve_[0].key, "a");
  EXPECT_EQ(resolve_[0].max_version, At(4'000));
  // While it runs, and for 10 s after it ended, not again.
  Check(Spans(At(0), At(13'000)), 15'000, 5'000);
  EXPECT_TRUE(resolve_.empty());
  stuck_.Resolved(RegionId(10), Clock::TimePoint(milliseconds(6'000)));
  Check(Spans(At(0), At(13'000)), 20'000, 15'999);
  EXPECT_TRUE(resolve_.empty());
  Check(Spans(At(0), At(13'000)), 20'000, 16'000);
  ASSERT_EQ(resolve_.size(), 1u);
}

TEST_F(StuckRegionsTest, TheTargetIsCappedAtTheCurrentTs) {
  Check(Spans(At(0), At(5'000)), 5'000, 0);
  Check(Spans(At(0), At(5'000)), 5'000, 4'000);
  ASSERT_EQ(resolve_.size(), 1u);
  EXPECT_EQ(resolve_[0].max_version, At(4'000));
  StuckRegions other(Options());
  std::vector<ResolveLockTask> r;
  std::vector<ReconnectTask> c;
  // Lag under the fence by PD's clock: nothing, however long unmoved.
  other.Check(Spans(At(0), At(1)), At(3'999), Clock::TimePoint(seconds(0)), &r, &c);
  other.Check(Spans(At(0), At(1)), At(3'999), Clock::TimePoint(seconds(30)), &r, &c);
  EXPECT_TRUE(r.empty());
}

TEST_F(StuckRegionsTest, ASpanThatMovesOrIsNotInitializedIsLeftAlone) {
  Check(Spans(At(0), At(1'000), /*initialized=*/false), 20'000, 0);
  Check(Spans(At(0), At(1'000), /*initialized=*/false), 20'000, 10'000);
  EXPECT_TRUE(resolve_.empty());
  for (int64_t t = 2'000; t <= 20'000; t += 2'000) {
    Check(Spans(At(t / 2), At(20'000)), 20'000 + t, 20'000 + t);
    EXPECT_TRUE(resolve_.empty()) << t;
  }
}

TEST_F(StuckRegionsTest, AnUnmovedRegionIsReconnectedOncePerInterval) {
  Check(Spans(At(0), At(1'000)), 1'000, 0);
  Check(Spans(At(0), At(60'000)), 60'000, 59'999);
  EXPECT_TRUE(reconnect_.empty());
  Check(Spans(At(0), At(60'000)), 60'000, 60'000);
  ASSERT_EQ(reconnect_.size(), 1u);
  EXPECT_EQ(reconnect_[0].region, RegionId(10));
  EXPECT_EQ(reconnect_[0].request_id, 7u);
  EXPECT_EQ(reconnect_[0].id, SubscriptionId(1));
  Check(Spans(At(0), At(61'000)), 61'000, 61'000);
  EXPECT_TRUE(reconnect_.empty());
  Check(Spans(At(0), At(120'000)), 120'000, 120'000);
  EXPECT_EQ(reconnect_.size(), 1u);
}

}  // namespace
}  // namespace sluice::logpuller
