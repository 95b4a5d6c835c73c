#include "logpuller/matcher.h"

#include <gtest/gtest.h>

#include <string>

namespace sluice::logpuller {
namespace {

using Row = cdcpb::Event_Row;

constexpr RegionId kRegion{7};
constexpr Ts kStartTs{100};

Row MakeRow(cdcpb::Event_LogType type, uint64_t start_ts, uint64_t commit_ts, std::string key,
            std::string value = "", std::string old_value = "", Row::OpType op = Row::PUT) {
  Row row;
  row.set_type(type);
  row.set_start_ts(start_ts);
  row.set_commit_ts(commit_ts);
  row.set_key(std::move(key));
  row.set_value(std::move(value));
  row.set_old_value(std::move(old_value));
  row.set_op_type(op);
  return row;
}

Row Prewrite(uint64_t start_ts, std::string key, std::string value, std::string old_value = "",
             Row::OpType op = Row::PUT) {
  return MakeRow(cdcpb::Event::PREWRITE, start_ts, 0, std::move(key), std::move(value),
                 std::move(old_value), op);
}
Row Commit(uint64_t start_ts, uint64_t commit_ts, std::string key, Row::OpType op = Row::PUT) {
  return MakeRow(cdcpb::Event::COMMIT, start_ts, commit_ts, std::move(key), "", "", op);
}
Row Committed(uint64_t start_ts, uint64_t commit_ts, std::string key, std::string value,
              Row::OpType op = Row::PUT) {
  return MakeRow(cdcpb::Event::COMMITTED, start_ts, commit_ts, std::move(key), std::move(value), "",
                 op);
}
Row Rollback(uint64_t start_ts, std::string key) {
  return MakeRow(cdcpb::Event::ROLLBACK, start_ts, 0, std::move(key), "", "", Row::UNKNOWN);
}
Row Initialized() { return MakeRow(cdcpb::Event::INITIALIZED, 0, 0, ""); }

// Feeds one row as the view a region worker decodes.
Status Feed(RegionMatcher& m, const Row& row, KvBatch* out) { return m.Handle(ViewOf(row), out); }

void Init(RegionMatcher& m) {
  KvBatch out;
  ASSERT_TRUE(Feed(m, Initialized(), &out).ok());
}

TEST(RegionMatcherTest, PairsPrewriteWithCommit) {
  RegionMatcher m(kRegion, kStartTs);
  Init(m);
  KvBatch out;
  ASSERT_TRUE(Feed(m, Prewrite(110, "k1", "v1", "old1"), &out).ok());
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(m.num_pending_prewrites(), 1u);
  ASSERT_TRUE(Feed(m, Commit(110, 120, "k1"), &out).ok());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0], (RawKvEntry{KvOp::kPut, "k1", "v1", "old1", Ts(110), Ts(120), kRegion}));
  EXPECT_EQ(m.num_pending_prewrites(), 0u);
}

TEST(RegionMatcherTest, SameKeyDifferentStartTsAreDistinct) {
  RegionMatcher m(kRegion, kStartTs);
  Init(m);
  KvBatch out;
  ASSERT_TRUE(Feed(m, Prewrite(110, "k", "a"), &out).ok());
  ASSERT_TRUE(Feed(m, Prewrite(111, "k", "b"), &out).ok());
  ASSERT_TRUE(Feed(m, Commit(111, 130, "k"), &out).ok());
  ASSERT_TRUE(Feed(m, Commit(110, 131, "k"), &out).ok());
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].value, "b");
  EXPECT_EQ(out[1].value, "a");
}

TEST(RegionMatcherTest, DeleteProducesDeleteOp) {
  RegionMatcher m(kRegion, kStartTs);
  Init(m);
  KvBatch out;
  ASSERT_TRUE(Feed(m, Prewrite(110, "k", "", "old", Row::DELETE), &out).ok());
  ASSERT_TRUE(Feed(m, Commit(110, 120, "k", Row::DELETE), &out).ok());
  ASSERT_TRUE(Feed(m, Committed(111, 121, "j", "", Row::DELETE), &out).ok());
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].op, KvOp::kDelete);
  EXPECT_EQ(out[0].old_value, "old");
  EXPECT_TRUE(out[0].value.empty());
  EXPECT_EQ(out[0].dml_order(), DmlOrder::kDelete);
  EXPECT_EQ(out[1].op, KvOp::kDelete);
}

TEST(RegionMatcherTest, CommitWithoutPrewriteAfterInitIsAnError) {
  RegionMatcher m(kRegion, kStartTs);
  Init(m);
  KvBatch out;
  Status s = Feed(m, Commit(110, 120, "secret-key"), &out);
  EXPECT_EQ(s.code(), Code::kProtocolViolation);
  EXPECT_NE(s.message().find("commit without prewrite"), std::string_view::npos);
  EXPECT_EQ(s.message().find("secret-key"), std::string_view::npos) << "key must be redacted";
  EXPECT_TRUE(out.empty());
}

TEST(RegionMatcherTest, CommitBeforePrewriteIsCachedUntilInitialized) {
  RegionMatcher m(kRegion, kStartTs);
  KvBatch out;
  ASSERT_TRUE(Feed(m, Commit(110, 120, "k1"), &out).ok());
  ASSERT_TRUE(Feed(m, Commit(111, 121, "k2"), &out).ok());  // Never gets its prewrite.
  EXPECT_EQ(m.num_cached_commits(), 2u);
  ASSERT_TRUE(Feed(m, Prewrite(110, "k1", "v1", "o1"), &out).ok());
  EXPECT_TRUE(out.empty());
  ASSERT_TRUE(Feed(m, Initialized(), &out).ok());
  EXPECT_TRUE(m.initialized());
  EXPECT_EQ(m.num_cached_commits(), 0u);
  ASSERT_EQ(out.size(), 1u);  // k2 is dropped: a COMMITTED row covered it.
  EXPECT_EQ(out[0], (RawKvEntry{KvOp::kPut, "k1", "v1", "o1", Ts(110), Ts(120), kRegion}));
  EXPECT_EQ(m.num_pending_prewrites(), 0u);
}

TEST(RegionMatcherTest, BeforeInitEmptyValuePrewriteDoesNotMatch) {
  RegionMatcher m(kRegion, kStartTs);
  KvBatch out;
  // An empty-value prewrite may be a heartbeat that overtook the real one.
  ASSERT_TRUE(Feed(m, Prewrite(110, "k", ""), &out).ok());
  ASSERT_TRUE(Feed(m, Commit(110, 120, "k"), &out).ok());
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(m.num_cached_commits(), 1u);
  ASSERT_TRUE(Feed(m, Prewrite(110, "k", "real"), &out).ok());
  ASSERT_TRUE(Feed(m, Initialized(), &out).ok());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].value, "real");
}

TEST(RegionMatcherTest, FakeHeartbeatPrewriteKeepsOriginal) {
  RegionMatcher m(kRegion, kStartTs);
  Init(m);
  KvBatch out;
  ASSERT_TRUE(Feed(m, Prewrite(110, "k", "v", "old"), &out).ok());
  ASSERT_TRUE(Feed(m, Prewrite(110, "k", "", "old"), &out).ok());
  EXPECT_EQ(m.num_pending_prewrites(), 1u);
  ASSERT_TRUE(Feed(m, Commit(110, 120, "k"), &out).ok());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].value, "v");
  EXPECT_EQ(out[0].old_value, "old");
}

TEST(RegionMatcherTest, PipelinedPrewriteKeepsHighestGeneration) {
  RegionMatcher m(kRegion, kStartTs);
  Init(m);
  KvBatch out;
  Row g2 = Prewrite(110, "k", "gen2");
  g2.set_generation(2);
  Row g1 = Prewrite(110, "k", "gen1");
  g1.set_generation(1);
  ASSERT_TRUE(m.Handle(ViewOf(g2), &out).ok());
  ASSERT_TRUE(m.Handle(ViewOf(g1), &out).ok());
  ASSERT_TRUE(Feed(m, Commit(110, 120, "k"), &out).ok());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].value, "gen2");
}

TEST(RegionMatcherTest, BeforeInitPipelinedPrewriteDoesNotMatch) {
  RegionMatcher m(kRegion, kStartTs);
  KvBatch out;
  Row flushed = Prewrite(110, "k", "v");
  flushed.set_generation(1);
  ASSERT_TRUE(m.Handle(ViewOf(flushed), &out).ok());
  ASSERT_TRUE(Feed(m, Commit(110, 120, "k"), &out).ok());
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(m.num_cached_commits(), 1u);
  ASSERT_TRUE(Feed(m, Initialized(), &out).ok());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].value, "v");
}

TEST(RegionMatcherTest, RollbackAfterInitDropsPrewrite) {
  RegionMatcher m(kRegion, kStartTs);
  Init(m);
  KvBatch out;
  ASSERT_TRUE(Feed(m, Prewrite(110, "k", "v"), &out).ok());
  ASSERT_TRUE(Feed(m, Rollback(110, "k"), &out).ok());
  EXPECT_EQ(m.num_pending_prewrites(), 0u);
  EXPECT_EQ(Feed(m, Commit(110, 120, "k"), &out).code(), Code::kProtocolViolation);
  EXPECT_TRUE(out.empty());
  // A rollback of an unknown prewrite is harmless.
  EXPECT_TRUE(Feed(m, Rollback(999, "x"), &out).ok());
}

TEST(RegionMatcherTest, RollbackBeforeInitIsAppliedAtInitialized) {
  RegionMatcher m(kRegion, kStartTs);
  KvBatch out;
  ASSERT_TRUE(Feed(m, Rollback(110, "k"), &out).ok());  // Overtakes its prewrite.
  ASSERT_TRUE(Feed(m, Prewrite(110, "k", "v"), &out).ok());
  ASSERT_TRUE(Feed(m, Prewrite(111, "j", "w"), &out).ok());
  EXPECT_EQ(m.num_pending_prewrites(), 2u);
  ASSERT_TRUE(Feed(m, Initialized(), &out).ok());
  EXPECT_EQ(m.num_pending_prewrites(), 1u);
  EXPECT_EQ(Feed(m, Commit(110, 120, "k"), &out).code(), Code::kProtocolViolation);
  EXPECT_TRUE(Feed(m, Commit(111, 121, "j"), &out).ok());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].key, "j");
}

TEST(RegionMatcherTest, StaleCommitsAreDroppedSilently) {
  RegionMatcher m(kRegion, kStartTs);
  KvBatch out;
  ASSERT_TRUE(Feed(m, Committed(90, 100, "a", "v"), &out).ok());  // commit ts == start ts.
  ASSERT_TRUE(Feed(m, Committed(90, 95, "b", "v"), &out).ok());
  ASSERT_TRUE(Feed(m, Initialized(), &out).ok());
  ASSERT_TRUE(Feed(m, Prewrite(90, "c", "v"), &out).ok());
  ASSERT_TRUE(Feed(m, Commit(90, 99, "c"), &out).ok());
  EXPECT_TRUE(out.empty());
  // The stale commit still consumed its prewrite.
  EXPECT_EQ(m.num_pending_prewrites(), 0u);
}

TEST(RegionMatcherTest, StaleCachedCommitIsDroppedAtInitialized) {
  RegionMatcher m(kRegion, kStartTs);
  KvBatch out;
  ASSERT_TRUE(Feed(m, Commit(90, 99, "c"), &out).ok());
  ASSERT_TRUE(Feed(m, Prewrite(90, "c", "v"), &out).ok());
  ASSERT_TRUE(Feed(m, Initialized(), &out).ok());
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(m.num_pending_prewrites(), 0u);
}

TEST(RegionMatcherTest, CommitAtOrBelowResolvedTsIsAnError) {
  RegionMatcher m(kRegion, kStartTs);
  Init(m);
  ASSERT_TRUE(m.AdvanceResolvedTs(Ts(200)));
  KvBatch out;
  ASSERT_TRUE(Feed(m, Prewrite(150, "k", "v"), &out).ok());
  EXPECT_EQ(Feed(m, Commit(150, 200, "k"), &out).code(), Code::kProtocolViolation);
  ASSERT_TRUE(Feed(m, Prewrite(150, "j", "v"), &out).ok());
  EXPECT_TRUE(Feed(m, Commit(150, 201, "j"), &out).ok());
  EXPECT_EQ(out.size(), 1u);
}

TEST(RegionMatcherTest, CommittedAfterInitChecksResolvedTs) {
  RegionMatcher m(kRegion, kStartTs);
  Init(m);
  ASSERT_TRUE(m.AdvanceResolvedTs(Ts(200)));
  KvBatch out;
  EXPECT_EQ(Feed(m, Committed(150, 180, "k", "v"), &out).code(), Code::kProtocolViolation);
  EXPECT_TRUE(Feed(m, Committed(150, 210, "k", "v"), &out).ok());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0], (RawKvEntry{KvOp::kPut, "k", "v", "", Ts(150), Ts(210), kRegion}));
}

TEST(RegionMatcherTest, CommitTsBelowStartTsIsAnError) {
  RegionMatcher m(kRegion, kStartTs);
  Init(m);
  KvBatch out;
  ASSERT_TRUE(Feed(m, Prewrite(150, "k", "v"), &out).ok());
  EXPECT_EQ(Feed(m, Commit(150, 140, "k"), &out).code(), Code::kProtocolViolation);
  EXPECT_EQ(Feed(m, Committed(150, 140, "k", "v"), &out).code(), Code::kProtocolViolation);
  EXPECT_TRUE(out.empty());
}

TEST(RegionMatcherTest, UnknownLogTypeIsAnError) {
  RegionMatcher m(kRegion, kStartTs);
  KvBatch out;
  EXPECT_EQ(Feed(m, MakeRow(cdcpb::Event::UNKNOWN, 110, 0, "k"), &out).code(),
            Code::kProtocolViolation);
  Status s = Feed(m, MakeRow(static_cast<cdcpb::Event_LogType>(42), 110, 0, "k"), &out);
  EXPECT_EQ(s.code(), Code::kProtocolViolation);
  EXPECT_NE(s.message().find("42"), std::string_view::npos);
}

TEST(RegionMatcherTest, ChangeWithoutPutOrDeleteOpIsAnError) {
  RegionMatcher m(kRegion, kStartTs);
  Init(m);
  KvBatch out;
  EXPECT_EQ(Feed(m, Committed(110, 120, "k", "v", Row::UNKNOWN), &out).code(),
            Code::kProtocolViolation);
  EXPECT_EQ(Feed(m, Committed(110, 120, "k", "v", static_cast<Row::OpType>(3)), &out).code(),
            Code::kProtocolViolation);
  ASSERT_TRUE(Feed(m, Prewrite(110, "k", "v"), &out).ok());
  EXPECT_EQ(Feed(m, Commit(110, 120, "k", Row::UNKNOWN), &out).code(), Code::kProtocolViolation);
  EXPECT_TRUE(out.empty());
  // A stale row is dropped before its op is looked at.
  EXPECT_TRUE(Feed(m, Committed(90, 95, "k", "v", Row::UNKNOWN), &out).ok());
}

TEST(RegionMatcherTest, InitializedTwiceIsAnError) {
  RegionMatcher m(kRegion, kStartTs);
  Init(m);
  KvBatch out;
  EXPECT_EQ(Feed(m, Initialized(), &out).code(), Code::kProtocolViolation);
}

TEST(RegionMatcherTest, ResolvedTsIgnoredBeforeInitAndMonotonicAfter) {
  RegionMatcher m(kRegion, kStartTs);
  EXPECT_EQ(m.resolved_ts(), kStartTs);
  EXPECT_FALSE(m.AdvanceResolvedTs(Ts(150)));
  EXPECT_EQ(m.resolved_ts(), kStartTs);
  Init(m);
  EXPECT_FALSE(m.AdvanceResolvedTs(kStartTs));
  EXPECT_TRUE(m.AdvanceResolvedTs(Ts(150)));
  EXPECT_FALSE(m.AdvanceResolvedTs(Ts(140)));
  EXPECT_FALSE(m.AdvanceResolvedTs(Ts(150)));
  EXPECT_EQ(m.resolved_ts(), Ts(150));
  EXPECT_TRUE(m.AdvanceResolvedTs(Ts(151)));
  EXPECT_EQ(m.resolved_ts(), Ts(151));
}

TEST(RegionMatcherTest, ShrinkKeepsPendingPrewrites) {
  RegionMatcher m(kRegion, kStartTs);
  Init(m);
  KvBatch out;
  ASSERT_TRUE(Feed(m, Prewrite(110, "k", "v"), &out).ok());
  m.Shrink();
  EXPECT_EQ(m.num_pending_prewrites(), 1u);
  ASSERT_TRUE(Feed(m, Commit(110, 120, "k"), &out).ok());
  m.Shrink();
  EXPECT_EQ(m.num_pending_prewrites(), 0u);
  ASSERT_TRUE(Feed(m, Prewrite(111, "k", "w"), &out).ok());
  ASSERT_TRUE(Feed(m, Commit(111, 121, "k"), &out).ok());
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[1].value, "w");
}

TEST(RegionMatcherTest, ShrinkReleasesTheSlotsOfALargeMatchedTransaction) {
  RegionMatcher m(kRegion, kStartTs);
  Init(m);
  KvBatch out;
  ASSERT_TRUE(Feed(m, Prewrite(105, "long-lived", "v"), &out).ok());
  auto key = [](int i) { return std::string("k").append(std::to_string(i)); };
  for (int i = 0; i < 5000; ++i) {
    ASSERT_TRUE(Feed(m, Prewrite(110, key(i), "v"), &out).ok());
  }
  for (int i = 0; i < 5000; ++i) {
    ASSERT_TRUE(Feed(m, Commit(110, 120, key(i)), &out).ok());
  }
  const size_t peak = m.prewrite_capacity();
  ASSERT_GE(peak, 5000u);
  m.Shrink();
  EXPECT_EQ(m.num_pending_prewrites(), 1u);
  EXPECT_LT(m.prewrite_capacity(), 64u) << "from " << peak;
  ASSERT_TRUE(Feed(m, Commit(105, 121, "long-lived"), &out).ok());
  EXPECT_EQ(out.size(), 5001u);
}

// Rows are views into a message's bytes, which are freed after the event is
// handled: whatever the matcher keeps or emits must own its bytes.
TEST(RegionMatcherTest, KeptAndEmittedBytesOutliveTheRows) {
  RegionMatcher m(kRegion, kStartTs);
  KvBatch out;
  auto feed_and_wipe = [&](Row row) {
    Status status = Feed(m, row, &out);
    row.mutable_key()->assign(row.key().size(), '#');
    row.mutable_value()->assign(row.value().size(), '#');
    row.mutable_old_value()->assign(row.old_value().size(), '#');
    return status;
  };
  const std::string big(1000, 'x');
  ASSERT_TRUE(feed_and_wipe(Prewrite(105, "held", big + "1")).ok());
  ASSERT_TRUE(feed_and_wipe(Commit(105, 115, "held")).ok());  // Cached until INITIALIZED.
  ASSERT_TRUE(feed_and_wipe(Prewrite(106, "gone", "rolled back")).ok());
  ASSERT_TRUE(feed_and_wipe(Rollback(106, "gone")).ok());  // Cached until INITIALIZED.
  ASSERT_TRUE(feed_and_wipe(Initialized()).ok());
  EXPECT_EQ(m.num_pending_prewrites(), 0u);  // The cached rollback found its prewrite.
  ASSERT_TRUE(feed_and_wipe(Committed(110, 120, "scanned", big, Row::PUT)).ok());
  ASSERT_TRUE(feed_and_wipe(Prewrite(130, "live", big + "2", "old")).ok());
  ASSERT_TRUE(feed_and_wipe(Commit(130, 140, "live")).ok());
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].key, "held");
  EXPECT_EQ(out[0].value, big + "1");
  EXPECT_EQ(out[1].key, "scanned");
  EXPECT_EQ(out[1].value, big);
  EXPECT_EQ(out[2].key, "live");
  EXPECT_EQ(out[2].value, big + "2");
  EXPECT_EQ(out[2].old_value, "old");
}

}  // namespace
}  // namespace sluice::logpuller
