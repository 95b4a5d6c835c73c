// Error states: warning with backoff and retry, failure after the bound,
// fatal errors, recovery on progress, resume clearing the error.
#include "coordinator/coordinator_test_util.h"

namespace sluice::coordinator {
namespace {

using std::chrono::seconds;

class CoordinatorErrorTest : public CoordinatorTest {
 protected:
  void SetUp() override {
    backoff_initial_ = seconds(10);
    backoff_max_ = seconds(40);
    error_bound_ = seconds(120);
    CoordinatorTest::SetUp();
    ASSERT_TRUE(coord_->CreateChangefeed(NewInfo("cf")).ok());
  }

  void ReportError(Status error) {
    MaintainerStatus s = Working("cf", 1000);
    s.error = std::move(error);
    coord_->OnMaintainerStatus(NodeOf("cf"), s);
  }
  meta::FeedState State() { return StoredInfo("cf").state; }
};

TEST_F(CoordinatorErrorTest, RetryableErrorsBackOffThenFail) {
  const std::vector<int> expected_backoffs = {10, 20, 40, 40};
  int elapsed = 0;
  for (int backoff : expected_backoffs) {
    const size_t adds = maintainers_->adds.size();
    const MaintainerEpoch before = StoredEpoch("cf");
    ReportError(Unavailable("sink down"));
    ASSERT_EQ(State(), meta::FeedState::kWarning);
    EXPECT_EQ(StoredInfo("cf").warning->code, "unavailable");
    EXPECT_GT(StoredEpoch("cf"), before);  // The old generation is closed.
    EXPECT_EQ(maintainers_->removes.back().request.epoch, before);
    clock_.Advance(seconds(backoff - 1));
    coord_->Tick();
    EXPECT_EQ(maintainers_->adds.size(), adds) << "retried before the backoff";
    clock_.Advance(seconds(1));
    coord_->Tick();
    ASSERT_EQ(maintainers_->adds.size(), adds + 1);
    EXPECT_EQ(maintainers_->adds.back().stored_epoch, maintainers_->adds.back().request.epoch);
    elapsed += backoff;
  }
  ASSERT_GE(elapsed, 110);
  clock_.Advance(seconds(10));  // 120 s since the first error.
  ReportError(Unavailable("sink still down"));
  meta::ChangefeedInfo failed = StoredInfo("cf");
  EXPECT_EQ(failed.state, meta::FeedState::kFailed);
  ASSERT_TRUE(failed.error.has_value());
  EXPECT_EQ(failed.error->message, "sink still down");
  EXPECT_EQ(failed.error->addr, "127.0.0.1:8300");
  const size_t adds = maintainers_->adds.size();
  clock_.Advance(seconds(600));
  coord_->Tick();
  EXPECT_EQ(maintainers_->adds.size(), adds);  // Failed stays stopped.

  ASSERT_TRUE(coord_->ResumeChangefeed(Id("cf"), std::nullopt).ok());
  EXPECT_EQ(State(), meta::FeedState::kNormal);
  EXPECT_FALSE(StoredInfo("cf").error.has_value());
  EXPECT_EQ(maintainers_->adds.size(), adds + 1);
}

// A changefeed's changefeed-error-stuck-duration replaces the default bound.
TEST_F(CoordinatorErrorTest, EachChangefeedsOwnBoundDecidesWhenItFails) {
  error_bound_of_ = [](const meta::ChangefeedInfo& info) {
    return info.id.name == "cf" ? Clock::Duration(seconds(300)) : Clock::Duration::zero();
  };
  ASSERT_TRUE(OpenCoordinator().ok());
  coord_->Tick();  // The reopened coordinator places the changefeed again.
  ASSERT_TRUE(coord_->GetChangefeed(Id("cf"))->node.has_value());
  ReportError(Unavailable("sink down"));
  ASSERT_EQ(State(), meta::FeedState::kWarning);
  clock_.Advance(seconds(200));  // Past the default 120 s, within its own 300 s.
  coord_->Tick();
  ASSERT_TRUE(coord_->GetChangefeed(Id("cf"))->node.has_value());
  ReportError(Unavailable("sink down"));
  EXPECT_EQ(State(), meta::FeedState::kWarning);
  clock_.Advance(seconds(100));
  coord_->Tick();
  ASSERT_TRUE(coord_->GetChangefeed(Id("cf"))->node.has_value());
  ReportError(Unavailable("sink still down"));
  EXPECT_EQ(State(), meta::FeedState::kFailed);
}

TEST_F(CoordinatorErrorTest, FatalErrorFailsAtOnce) {
  ReportError(InvalidArgument("sink uri scheme unknown"));
  EXPECT_EQ(State(), meta::FeedState::kFailed);
  EXPECT_EQ(StoredInfo("cf").error->code, "invalid_argument");
  EXPECT_FALSE(coord_->GetChangefeed(Id("cf"))->node.has_value());
  // A failed changefeed may be updated, then resumed.
  ChangefeedUpdate update;
  update.sink_uri = "blackhole://fixed";
  ASSERT_TRUE(coord_->UpdateChangefeed(Id("cf"), update).ok());
  ASSERT_TRUE(coord_->ResumeChangefeed(Id("cf"), std::nullopt).ok());
  EXPECT_EQ(maintainers_->adds.back().request.info.sink_uri, "blackhole://fixed");
}

TEST_F(CoordinatorErrorTest, WarningClearsWhenProgressResumes) {
  ReportError(Unavailable("blip"));
  clock_.Advance(seconds(10));
  coord_->Tick();
  coord_->OnMaintainerStatus(NodeOf("cf"), Working("cf", 1500));
  EXPECT_EQ(State(), meta::FeedState::kNormal);
  EXPECT_FALSE(StoredInfo("cf").warning.has_value());
  // The error streak restarted: the next backoff is the initial one again.
  ReportError(Unavailable("blip again"));
  clock_.Advance(seconds(10));
  const size_t adds = maintainers_->adds.size();
  coord_->Tick();
  EXPECT_EQ(maintainers_->adds.size(), adds + 1);
}

TEST_F(CoordinatorErrorTest, FailedSendIsRetriedWithANewEpoch) {
  ASSERT_TRUE(coord_->PauseChangefeed(Id("cf")).ok());
  maintainers_->fail_adds = true;
  ASSERT_TRUE(coord_->ResumeChangefeed(Id("cf"), std::nullopt).ok());
  EXPECT_FALSE(coord_->GetChangefeed(Id("cf"))->node.has_value());
  const MaintainerEpoch first = maintainers_->adds.back().request.epoch;
  maintainers_->fail_adds = false;
  clock_.Advance(seconds(1));
  coord_->Tick();
  EXPECT_GT(maintainers_->adds.back().request.epoch, first);
  EXPECT_TRUE(coord_->GetChangefeed(Id("cf"))->node.has_value());
}

}  // namespace
}  // namespace sluice::coordinator
