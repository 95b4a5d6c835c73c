// Randomized scenario: several tables subscribed through the log puller while
// concurrent transactions (some holding their locks for a while) run and a
// seeded fault schedule splits, merges, moves leaders, restarts stores, makes
// them busy, breaks streams and bumps epochs. For every subscription it
// checks the delivered changes against simkv's ground truth and the puller's
// promises (see RecordingConsumer). Seeds: SLUICE_SCENARIO_SEEDS ("1,2,3").
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <atomic>
#include <random>
#include <sstream>

#include "codec/tablecodec.h"
#include "common/test_util.h"
#include "logpuller/puller_test_util.h"

namespace sluice::logpuller {
namespace {

using testing::PullerEnv;
using testing::RecordingConsumer;

constexpr int kTables = 4;
constexpr int64_t kHandles = 400;
constexpr auto kWait = std::chrono::seconds(60);

TableId TableAt(int i) { return TableId(200 + i); }

std::vector<uint64_t> Seeds() {
  const char* env = std::getenv("SLUICE_SCENARIO_SEEDS");
  std::string text = env != nullptr ? env : "1,2,3";
  std::vector<uint64_t> seeds;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    size_t dash = item.find('-');
    if (dash == std::string::npos) {
      seeds.push_back(std::stoull(item));
    } else {
      for (uint64_t s = std::stoull(item.substr(0, dash)); s <= std::stoull(item.substr(dash + 1));
           ++s) {
        seeds.push_back(s);
      }
    }
  }
  return seeds;
}

// Counts committed transactions so that faults can be paced by the workload.
struct Progress {
  Mutex mu;
  CondVar cv;
  int64_t commits GUARDED_BY(mu) = 0;
  bool writers_done GUARDED_BY(mu) = false;

  void Add() {
    MutexLock lock(&mu);
    ++commits;
    cv.SignalAll();
  }
  // Waits until `target` commits happened or the writers are done.
  bool WaitFor(int64_t target) {
    MutexLock lock(&mu);
    while (commits < target && !writers_done) cv.Wait(&mu);
    return commits >= target;
  }
};

void Writer(simkv::SimCluster& cluster, uint64_t seed, int txns, Progress& progress) {
  std::mt19937_64 rng(seed);
  std::optional<simkv::Txn> held;  // A transaction holding its locks for a while.
  int held_for = 0;
  for (int i = 0; i < txns; ++i) {
    auto txn = cluster.txn().Begin();
    if (!txn.ok()) continue;
    int rows = 1 + static_cast<int>(rng() % 5);
    for (int r = 0; r < rows; ++r) {
      TableId table = TableAt(static_cast<int>(rng() % kTables));
      std::string key = codec::EncodeRowKey(table, static_cast<int64_t>(rng() % kHandles));
      if (rng() % 5 == 0) {
        txn.value().Delete(std::move(key));
      } else {
        txn.value().Put(std::move(key), fmt::format("v{}-{}", seed, i));
      }
    }
    if (!held.has_value() && rng() % 10 == 0) {
      if (cluster.txn().Prewrite(txn.value()).ok()) {
        held = std::move(txn).value();
        held_for = 5 + static_cast<int>(rng() % 20);
      }
      continue;
    }
    if (cluster.txn().Commit(txn.value()).ok()) progress.Add();
    if (held.has_value() && --held_for <= 0) {
      if (rng() % 4 == 0) {
        cluster.txn().Rollback(*held).IgnoreError();
      } else if (cluster.txn().Commit(*held).ok()) {
        progress.Add();
      }
      held.reset();
    }
  }
  if (held.has_value()) cluster.txn().Commit(*held).status().IgnoreError();
}

void Faults(simkv::SimCluster& cluster, uint64_t seed, Progress& progress) {
  std::mt19937_64 rng(seed * 7919);
  int64_t target = 0;
  auto region_at = [&](TableId table, int64_t handle) {
    std::string key = ToComparable(Span{codec::EncodeRowKey(table, handle), ""}).start;
    return cluster.regions().RegionForKey(key);
  };
  while (true) {
    target += 3 + static_cast<int64_t>(rng() % 6);
    if (!progress.WaitFor(target)) break;
    TableId table = TableAt(static_cast<int>(rng() % kTables));
    int64_t handle = 1 + static_cast<int64_t>(rng() % (kHandles - 1));
    auto region = region_at(table, handle);
    if (!region.ok()) continue;
    StoreId store(1 + rng() % 3);
    switch (rng() % 8) {
      case 0:
      case 1:
        cluster.Split(region.value().id, codec::EncodeRowKey(table, handle)).status().IgnoreError();
        break;
      case 2:
        if (!region.value().end_key.empty()) {
          auto right = cluster.regions().RegionForKey(region.value().end_key);
          if (right.ok()) cluster.Merge(region.value().id, right.value().id).status().IgnoreError();
        }
        break;
      case 3:
        cluster.TransferLeader(region.value().id, store).status().IgnoreError();
        break;
      case 4:
        cluster.StoreDown(store).IgnoreError();
        progress.WaitFor(target + 2);
        cluster.StoreRestart(store).IgnoreError();
        break;
      case 5:
        cluster.SetStoreBusy(store, "scenario", 10 + rng() % 40).IgnoreError();
        cluster.DropStreams(store).IgnoreError();
        progress.WaitFor(target + 2);
        cluster.ClearStoreBusy(store).IgnoreError();
        break;
      case 6:
        cluster.DropStreams(store).IgnoreError();
        break;
      case 7:
        if (rng() % 2 == 0) {
          cluster.BumpEpoch(region.value().id).status().IgnoreError();
        } else {
          cluster.Congest(store).IgnoreError();
        }
        break;
    }
  }
}

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

  Progress progress;
  {
    OwnedThread faults;
    faults.Start("faults", [&](StopToken) { Faults(*env->cluster, seed, progress); });
    ThreadGroup writers;
    for (int w = 0; w < 2; ++w) {
      writers.Start("writer",
                    [&, w](StopToken) { Writer(*env->cluster, seed * 10 + w, 400, progress); });
    }
    writers.Join();
    {
      MutexLock lock(&progress.mu);
      progress.writers_done = true;
      progress.cv.SignalAll();
    }
    faults.Join();
  }
  for (StoreId store : env->cluster->store_ids()) {
    if (!env->cluster->StoreIsUp(store)) {
      ASSERT_TRUE(env->cluster->StoreRestart(store).ok());
    }
    env->cluster->ClearStoreBusy(store).IgnoreError();
  }
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
  for (uint64_t seed : Seeds()) RunSeed(seed);
}

}  // namespace
}  // namespace sluice::logpuller
