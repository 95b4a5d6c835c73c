// Randomized scenario: several tables subscribed through the log puller while
// concurrent transactions (some holding their locks for a while) run and a
// seeded fault schedule splits, merges, moves leaders, restarts stores, makes
// them busy, breaks streams and bumps epochs. For every subscription it
// checks the delivered changes against simkv's ground truth and the puller's
// promises (see RecordingConsumer). Seeds: SLUICE_SCENARIO_SEEDS ("1,2,3").
#include <gtest/gtest.h>

#include <atomic>
#include <random>
#include <sstream>

#include "codec/tablecodec.h"
#include "common/test_util.h"
#include "logpuller/puller_test_util.h"
#include "logpuller/puller_workload.h"

namespace sluice::logpuller {
namespace {

using testing::PullerEnv;
using testing::RecordingConsumer;

const testing::ScenarioShape kShape;
constexpr int kTables = 4;
constexpr int64_t kHandles = 400;
constexpr auto kWait = std::chrono::seconds(60);

TableId TableAt(int i) { return kShape.TableAt(i); }

void RunSeed(uint64_t seed) {
  SCOPED_TRACE("seed " + std::to_string(seed));
  testing::PullerEnvOptions options;
  std::mt19937_64 rng(seed);
  for (int t = 0; t < kTables; ++t) {
    for (int s = 0; s < 2; ++s) {
      options.raw_split_keys.push_back(
          codec::EncodeRowKey(TableAt(t), 1 + static_cast<int64_t>(rng() % (kHandles - 1))));
    }
  }
  std::sort(options.raw_split_keys.begin(), options.raw_split_keys.end());
  options.raw_split_keys.erase(
      std::unique(options.raw_split_keys.begin(), options.raw_split_keys.end()),
      options.raw_split_keys.end());
  options.client.pipeline.quota_bytes = 64 << 10;  // Small: exercise back-pressure.
  auto env_or = PullerEnv::Start(options);
  ASSERT_TRUE(env_or.ok()) << env_or.status().ToString();
  std::unique_ptr<PullerEnv> env = std::move(env_or).value();
  testing::Persister persister(seed);

  // Some history below the start ts, which must never be delivered.
  for (int t = 0; t < kTables; ++t) {
    ASSERT_TRUE(testing::WriteRows(*env->cluster, TableAt(t), {1, 2, 3}, "old").ok());
  }
  auto start = env->pd->GetTs();
  ASSERT_TRUE(start.ok());
  std::vector<std::shared_ptr<RecordingConsumer>> consumers;
  for (int t = 0; t < kTables; ++t) {
    auto consumer = std::make_shared<RecordingConsumer>(&persister);
    SubscribeOptions sub_options;
    sub_options.advance_interval = std::chrono::milliseconds(t % 2 == 0 ? 0 : 50);
    auto id = env->client->Subscribe(codec::ComparableTableRecordSpan(TableAt(t)), start.value(),
                                     consumer, sub_options);
    ASSERT_TRUE(id.ok());
    consumers.push_back(consumer);
  }

  testing::Progress progress;
  {
    OwnedThread faults;
    faults.Start("faults",
                 [&](StopToken) { testing::RunFaults(*env->cluster, kShape, seed, progress); });
    ThreadGroup writers;
    for (int w = 0; w < 2; ++w) {
      writers.Start("writer", [&, w](StopToken) {
        testing::RunWriter(*env->cluster, kShape, seed * 10 + w, 400, progress);
      });
    }
    writers.Join();
    progress.Done();
    faults.Join();
  }
  ASSERT_TRUE(testing::HealCluster(*env->cluster).ok());
  Ts last;
  for (int t = 0; t < kTables; ++t) {
    auto ts = testing::WriteRows(*env->cluster, TableAt(t), {kHandles + 1}, "final");
    ASSERT_TRUE(ts.ok()) << ts.status().ToString();
    last = ts.value();
  }
  for (int t = 0; t < kTables; ++t) {
    RecordingConsumer& consumer = *consumers[static_cast<size_t>(t)];
    ASSERT_TRUE(consumer.WaitResolved(last, kWait))
        << "table " << t << " stuck at " << consumer.resolved().value();
  }
  // The barrier: everything delivered up to the resolved ts matches the truth.
  for (int t = 0; t < kTables; ++t) {
    RecordingConsumer& consumer = *consumers[static_cast<size_t>(t)];
    Ts resolved = consumer.resolved();
    auto want = testing::ExpectedChanges(env->truth, TableAt(t), start.value(), resolved);
    auto got = testing::Deduplicate(consumer.persisted(), start.value(), resolved);
    EXPECT_EQ(testing::DiffChanges(want, got), "") << "table " << t;
    EXPECT_GT(want.size(), 0u);
    for (const std::string& v : consumer.violations()) {
      ADD_FAILURE() << "table " << t << ": " << v;
    }
    EXPECT_FALSE(consumer.error().has_value());
  }
  env->client->Stop();
  persister.Stop();
  EXPECT_EQ(env->client->pipeline().QuotaInFlight(), 0u);
  auto stats = env->client->stats();
  std::printf("seed %llu: region errors %llu, stream errors %llu, restarts %llu\n",
              static_cast<unsigned long long>(seed),
              static_cast<unsigned long long>(stats.region_errors),
              static_cast<unsigned long long>(stats.stream_errors),
              static_cast<unsigned long long>(stats.restarts));
}

TEST(PullerScenarioTest, RandomFaultsKeepEverySubscriptionExact) {
  for (uint64_t seed : testing::ScenarioSeeds()) RunSeed(seed);
}

}  // namespace
}  // namespace sluice::logpuller
