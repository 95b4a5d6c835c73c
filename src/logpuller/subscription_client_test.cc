#include "logpuller/subscription_client.h"

#include <gtest/gtest.h>

#include <thread>

#include "codec/tablecodec.h"
#include "common/test_util.h"
#include "logpuller/puller_test_util.h"

namespace sluice::logpuller {
namespace {

using testing::HoldingConsumer;
using testing::PullerEnv;
using testing::RecordingConsumer;
using testing::WriteRows;

constexpr auto kWait = std::chrono::seconds(20);
const TableId kTable(101);

std::vector<int64_t> Handles(int64_t from, int64_t count) {
  std::vector<int64_t> out;
  for (int64_t i = 0; i < count; ++i) out.push_back(from + i);
  return out;
}

class SubscriptionClientTest : public ::testing::Test {
 protected:
  void SetUp() override { StartEnv(SubscriptionClientOptions{}); }
  void StartEnv(SubscriptionClientOptions client) {
    testing::PullerEnvOptions options;
    options.client = std::move(client);
    options.raw_split_keys = {codec::EncodeRowKey(kTable, 100), codec::EncodeRowKey(kTable, 200)};
    auto env = PullerEnv::Start(options);
    ASSERT_TRUE(env.ok()) << env.status().ToString();
    env_ = std::move(env).value();
  }
  void TearDown() override {
    env_->client->Stop();
    persister_.Stop();
  }

  Ts Now() {
    auto ts = env_->pd->GetTs();
    EXPECT_TRUE(ts.ok()) << ts.status().ToString();
    return ts.ok() ? ts.value() : Ts();
  }

  std::pair<SubscriptionId, std::shared_ptr<RecordingConsumer>> Subscribe(TableId table, Ts start) {
    auto consumer = std::make_shared<RecordingConsumer>(&persister_);
    auto id = env_->client->Subscribe(codec::ComparableTableRecordSpan(table), start, consumer,
                                      SubscribeOptions{});
    EXPECT_TRUE(id.ok()) << id.status().ToString();
    return {id.ok() ? id.value() : SubscriptionId(), consumer};
  }

  Ts Write(TableId table, int64_t from, int64_t count, const std::string& tag) {
    auto ts = WriteRows(*env_->cluster, table, Handles(from, count), tag);
    EXPECT_TRUE(ts.ok()) << ts.status().ToString();
    return ts.ok() ? ts.value() : Ts();
  }

  void ExpectMatchesTruth(RecordingConsumer& consumer, TableId table, Ts start) {
    Ts resolved = consumer.resolved();
    auto want = testing::ExpectedChanges(env_->truth, table, start, resolved);
    auto got = testing::Deduplicate(consumer.persisted(), start, resolved);
    EXPECT_EQ(testing::DiffChanges(want, got), "");
    EXPECT_TRUE(consumer.violations().empty()) << consumer.violations().front();
  }

  testing::Persister persister_{42};
  std::unique_ptr<PullerEnv> env_;
};

TEST_F(SubscriptionClientTest, ScanThenLiveChangesMatchTruth) {
  Write(kTable, 0, 10, "before");  // Below the start ts: never delivered.
  Ts start = Now();
  Write(kTable, 50, 200, "scan");  // Spans all three regions.
  auto consumer_sub = Subscribe(kTable, start);
  std::shared_ptr<RecordingConsumer> consumer = consumer_sub.second;
  Ts last = Write(kTable, 90, 30, "live");
  ASSERT_TRUE(consumer->WaitResolved(last, kWait));
  ExpectMatchesTruth(*consumer, kTable, start);
  for (const RawKvEntry& e : consumer->persisted()) EXPECT_GT(e.commit_ts, start);
  EXPECT_GE(env_->client->stats().region_states, 3u);
  // Updates carry the old value (ReadOldValue is on by default).
  bool saw_update = false;
  for (const RawKvEntry& e : consumer->persisted()) saw_update |= !e.old_value.empty();
  EXPECT_TRUE(saw_update);
}

TEST_F(SubscriptionClientTest, OpenLockHoldsBackResolvedTs) {
  Ts start = Now();
  auto consumer_sub = Subscribe(kTable, start);
  std::shared_ptr<RecordingConsumer> consumer = consumer_sub.second;
  ASSERT_TRUE(consumer->WaitResolved(start, kWait));
  auto txn = env_->cluster->txn().Begin();
  ASSERT_TRUE(txn.ok());
  txn.value().Put(codec::EncodeRowKey(kTable, 5), "locked");
  ASSERT_TRUE(env_->cluster->txn().Prewrite(txn.value()).ok());
  Ts after_lock = Write(kTable, 150, 1, "other");
  // Other changes flow, but the span cannot resolve past the open lock.
  ASSERT_TRUE(PollUntil([&] { return consumer->persisted().size() >= 1; }, kWait));
  EXPECT_LT(consumer->resolved(), txn.value().start_ts());
  auto commit = env_->cluster->txn().Commit(txn.value());
  ASSERT_TRUE(commit.ok());
  ASSERT_TRUE(consumer->WaitResolved(std::max(commit.value(), after_lock), kWait));
  ExpectMatchesTruth(*consumer, kTable, start);
}

// Locks left by writers that went away are resolved once the span is
// stuck: one transaction rolled back (its primary's TTL ran out), one whose
// primary committed has its secondary committed; the span resolves past both
// and what was delivered matches the store.
class StuckLockTest : public SubscriptionClientTest {
 protected:
  void SetUp() override {
    SubscriptionClientOptions client;
    client.resolve_lock_check_interval = std::chrono::milliseconds(50);
    client.stuck.resolve_lock_after = std::chrono::milliseconds(300);
    client.stuck.resolve_lock_interval = std::chrono::milliseconds(300);
    StartEnv(client);
  }
  // Locks rows `handles` of kTable for a new transaction (the first is the
  // primary) with a 100 ms TTL; returns its start ts.
  Ts Orphan(const std::vector<int64_t>& handles) {
    std::vector<simkv::Mutation> mutations;
    for (int64_t h : handles) {
      mutations.push_back(simkv::Mutation::Put(codec::EncodeRowKey(kTable, h), "orphan"));
    }
    Ts start = Now();
    simkv::TxnStatus status =
        env_->cluster->mvcc().Prewrite(mutations, mutations[0].key, start, /*ttl_ms=*/100);
    EXPECT_TRUE(status.ok()) << status.error().ToString();
    return start;
  }
};

TEST_F(StuckLockTest, OrphanLocksAreResolvedAndReplicationResumes) {
  Ts start = Now();
  auto [id, consumer] = Subscribe(kTable, start);
  ASSERT_TRUE(consumer->WaitResolved(start, kWait));
  const Ts dead = Orphan({5, 150});
  const Ts half = Orphan({6, 160});
  const std::vector<std::string> primary{codec::EncodeRowKey(kTable, 6)};
  ASSERT_TRUE(env_->cluster->mvcc().Commit(primary, half, Now()).ok());
  Ts last = Write(kTable, 50, 1, "after");
  ASSERT_TRUE(consumer->WaitResolved(last, kWait))
      << "resolved " << consumer->resolved().value() << ", locks at " << dead.value();
  // A region's locks are gone (and its resolved ts moves) before its
  // resolution round ends and is counted: wait for the count.
  const auto deadline = std::chrono::steady_clock::now() + kWait;
  SubscriptionClient::Stats stats = env_->client->stats();
  while (stats.txns_resolved < 2 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    stats = env_->client->stats();
  }
  EXPECT_GE(stats.txns_resolved, 2u);
  EXPECT_EQ(stats.lock_resolution_errors, 0u);
  EXPECT_EQ(env_->cluster->mvcc().Stats().locks, 0u);
  ExpectMatchesTruth(*consumer, kTable, start);
  // The committed secondary reached the consumer; the rolled-back rows did not.
  bool saw_secondary = false;
  for (const RawKvEntry& e : consumer->persisted()) {
    EXPECT_NE(e.start_ts, dead);
    if (e.key == codec::EncodeRowKey(kTable, 160) && e.start_ts == half) saw_secondary = true;
  }
  EXPECT_TRUE(saw_secondary);
}

TEST_F(StuckLockTest, ARegionStuckPastReconnectAfterRestartsItsSubscription) {
  env_->Stop();
  SubscriptionClientOptions client;
  client.resolve_lock_check_interval = std::chrono::milliseconds(50);
  client.stuck.reconnect_after = std::chrono::milliseconds(300);
  StartEnv(client);
  Ts start = Now();
  auto [id, consumer] = Subscribe(kTable, start);
  ASSERT_TRUE(consumer->WaitResolved(start, kWait));
  // A live lock (long TTL): nothing resolves it, the region stays behind.
  std::vector<simkv::Mutation> m{simkv::Mutation::Put(codec::EncodeRowKey(kTable, 7), "x")};
  ASSERT_TRUE(env_->cluster->mvcc().Prewrite(m, m[0].key, Now(), 600'000).ok());
  ASSERT_TRUE(PollUntil(
      [&] {
        SubscriptionClient::Stats s = env_->client->stats();
        return s.stuck_reconnects >= 1 && s.restarts >= 1;
      },
      kWait));
  EXPECT_EQ(env_->client->stats().txns_resolved, 0u);
}

TEST_F(SubscriptionClientTest, SurvivesRegionOperationsAndStoreFaults) {
  Ts start = Now();
  auto consumer_sub = Subscribe(kTable, start);
  std::shared_ptr<RecordingConsumer> consumer = consumer_sub.second;
  simkv::SimCluster& cluster = *env_->cluster;
  int64_t next = 0;
  auto write_and_wait = [&](const std::string& what) {
    Ts ts = Write(kTable, next, 20, what);
    next += 37;
    ASSERT_TRUE(consumer->WaitResolved(ts, kWait)) << "stuck after " << what;
  };
  write_and_wait("initial");
  auto region_of = [&](int64_t handle) {
    auto r = cluster.regions().RegionForKey(
        ToComparable(Span{codec::EncodeRowKey(kTable, handle), ""}).start);
    EXPECT_TRUE(r.ok());
    return r.value();
  };
  auto split = cluster.Split(region_of(150).id, codec::EncodeRowKey(kTable, 150));
  ASSERT_TRUE(split.ok()) << split.status().ToString();
  write_and_wait("split");
  simkv::RegionInfo moved = region_of(150);
  StoreId other(moved.leader.value() % 3 + 1);
  ASSERT_TRUE(cluster.TransferLeader(moved.id, other).ok());
  write_and_wait("transfer");
  ASSERT_TRUE(cluster.Merge(region_of(120).id, region_of(150).id).ok());
  write_and_wait("merge");
  ASSERT_TRUE(cluster.BumpEpoch(region_of(10).id).ok());
  write_and_wait("bump");
  ASSERT_TRUE(cluster.DropStreams(StoreId(1)).ok());
  write_and_wait("drop streams");
  ASSERT_TRUE(cluster.Congest(StoreId(2)).ok());
  write_and_wait("congest");
  ASSERT_TRUE(cluster.StoreDown(StoreId(3)).ok());
  Ts during = Write(kTable, 300, 5, "down");
  ASSERT_TRUE(cluster.StoreRestart(StoreId(3)).ok());
  ASSERT_TRUE(consumer->WaitResolved(during, kWait));
  ASSERT_TRUE(cluster.SetStoreBusy(StoreId(1), "busy", 20).ok());
  ASSERT_TRUE(cluster.DropStreams(StoreId(1)).ok());
  Ts busy = Write(kTable, 400, 5, "busy");
  ASSERT_TRUE(cluster.ClearStoreBusy(StoreId(1)).ok());
  ASSERT_TRUE(consumer->WaitResolved(busy, kWait));
  ExpectMatchesTruth(*consumer, kTable, start);
  auto stats = env_->client->stats();
  EXPECT_GT(stats.region_errors, 0u);
  EXPECT_GT(stats.stream_errors, 0u);
  EXPECT_EQ(stats.restarts, 0u);
}

TEST_F(SubscriptionClientTest, UnsubscribeStopsDeliveryAndDropsState) {
  const TableId other(102);
  Ts start = Now();
  auto a_sub = Subscribe(kTable, start);
  std::shared_ptr<RecordingConsumer> a = a_sub.second;
  SubscriptionId id_a = a_sub.first;
  auto b_sub = Subscribe(other, start);
  std::shared_ptr<RecordingConsumer> b = b_sub.second;
  Ts first = Write(kTable, 0, 5, "a1");
  ASSERT_TRUE(a->WaitResolved(first, kWait));
  ASSERT_TRUE(b->WaitResolved(first, kWait));
  size_t states_before = env_->client->stats().region_states;
  env_->client->Unsubscribe(id_a);
  ASSERT_TRUE(
      PollUntil([&] { return env_->client->stats().region_states < states_before; }, kWait));
  size_t seen = a->persisted().size();
  Ts later = Write(kTable, 10, 5, "a2");
  Ts marker = Write(other, 0, 1, "b");
  ASSERT_TRUE(b->WaitResolved(std::max(later, marker), kWait));
  EXPECT_EQ(a->persisted().size(), seen);
  EXPECT_LT(a->resolved(), later);
  EXPECT_EQ(env_->client->stats().subscriptions, 1u);
  env_->client->Unsubscribe(id_a);  // Unknown now: a no-op.
}

TEST_F(SubscriptionClientTest, RejectsBadArguments) {
  auto consumer = std::make_shared<RecordingConsumer>(&persister_);
  EXPECT_EQ(env_->client->Subscribe(Span{"b", "a"}, Ts(1), consumer, {}).status().code(),
            Code::kInvalidArgument);
  EXPECT_EQ(env_->client->Subscribe(codec::ComparableTableRecordSpan(kTable), Ts(1), nullptr, {})
                .status()
                .code(),
            Code::kInvalidArgument);
}

TEST_F(SubscriptionClientTest, QuotaReturnsToZero) {
  Ts start = Now();
  auto consumer_sub = Subscribe(kTable, start);
  std::shared_ptr<RecordingConsumer> consumer = consumer_sub.second;
  Ts last = Write(kTable, 0, 300, "bulk");
  ASSERT_TRUE(consumer->WaitResolved(last, kWait));
  ASSERT_TRUE(PollUntil([&] { return env_->client->pipeline().QuotaInFlight() == 0; }, kWait));
}

TEST_F(SubscriptionClientTest, TheConsumerIsUrgentWhileAResolvedTsWaitsForItsBatches) {
  Ts start = Now();
  Ts scanned = Write(kTable, 50, 200, "scan");
  auto consumer = std::make_shared<HoldingConsumer>();
  ASSERT_TRUE(
      env_->client
          ->Subscribe(codec::ComparableTableRecordSpan(kTable), start, consumer, SubscribeOptions{})
          .ok());
  // The scanned rows are held unpersisted, so the resolved ts past them
  // waits: the consumer hears that it is urgent, and nothing is published.
  ASSERT_TRUE(PollUntil([&] { return !consumer->urgent().empty(); }, kWait));
  EXPECT_EQ(consumer->urgent().front(), true);
  EXPECT_GT(consumer->batches(), 0u);
  EXPECT_LT(consumer->resolved(), scanned);
  consumer->Release();
  Ts last = Write(kTable, 90, 10, "live");
  ASSERT_TRUE(PollUntil([&] { return consumer->resolved() >= last; }, kWait));
  // Once nothing waits any more, it is told so; the calls alternate.
  ASSERT_TRUE(PollUntil([&] { return consumer->urgent().back() == false; }, kWait));
  std::vector<bool> calls = consumer->urgent();
  for (size_t i = 0; i < calls.size(); ++i) EXPECT_EQ(calls[i], i % 2 == 0) << i;
}

}  // namespace
}  // namespace sluice::logpuller
