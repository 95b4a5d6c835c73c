// The log puller feeding the RocksDB event store, against simkv under the
// seeded workload and fault schedule: for every reader, a scan of (start,
// resolved] returns exactly simkv's ground truth, in commit-ts order; the
// resolved ts notified never goes back; GC removes what every reader has
// passed; unregistering the last reader closes the puller subscription.
#include <gtest/gtest.h>

#include <filesystem>

#include "codec/tablecodec.h"
#include "common/test_util.h"
#include "eventstore/event_store.h"
#include "logpuller/puller_test_util.h"
#include "logpuller/puller_workload.h"

namespace sluice {
namespace {

using logpuller::testing::PullerEnv;

constexpr auto kWait = std::chrono::seconds(60);
const logpuller::testing::ScenarioShape kShape{3, 300, 300};

// The resolved ts notified to one reader, with a check that it only grows.
struct Watermark {
  Mutex mu;
  CondVar cv;
  Ts resolved GUARDED_BY(mu);
  int went_back GUARDED_BY(mu) = 0;

  void Notify(Ts ts) {
    MutexLock lock(&mu);
    if (ts < resolved) ++went_back;
    if (ts > resolved) resolved = ts;
    cv.SignalAll();
  }
  bool WaitFor(Ts ts) {
    auto deadline = std::chrono::steady_clock::now() + kWait;
    MutexLock lock(&mu);
    while (resolved < ts) {
      if (cv.WaitUntil(&mu, deadline)) return resolved >= ts;
    }
    return true;
  }
  Ts Get() {
    MutexLock lock(&mu);
    return resolved;
  }
};

Result<std::vector<RawKvEntry>> ScanAll(eventstore::EventStore& store, DispatcherId id, Ts from,
                                        Ts to, int* order_errors) {
  ASSIGN_OR_RETURN(auto it, store.GetIterator(id, from, to));
  std::vector<RawKvEntry> out;
  RawKvEntry entry;
  bool new_txn = false;
  while (it->Next(&entry, &new_txn)) {
    if (!out.empty() && entry.commit_ts < out.back().commit_ts) ++*order_errors;
    out.push_back(entry);
  }
  RETURN_IF_ERROR(it->status());
  return out;
}

void RunSeed(uint64_t seed) {
  SCOPED_TRACE("seed " + std::to_string(seed));
  logpuller::testing::PullerEnvOptions options;
  for (int t = 0; t < kShape.tables; ++t) {
    options.raw_split_keys.push_back(codec::EncodeRowKey(kShape.TableAt(t), 100 + 50 * t));
  }
  options.client.pipeline.quota_bytes = 256 << 10;
  auto env_or = PullerEnv::Start(options);
  ASSERT_TRUE(env_or.ok()) << env_or.status().ToString();
  std::unique_ptr<PullerEnv> env = std::move(env_or).value();

  std::string dir = ::testing::TempDir() + "/puller_eventstore_" + std::to_string(seed) +
                    logpuller::testing::ScenarioTagSuffix();
  eventstore::EventStoreOptions store_options;
  store_options.data_dir = dir;
  store_options.gc_interval = std::chrono::milliseconds(20);
  auto store_or = eventstore::EventStore::Open(store_options, env->client.get());
  ASSERT_TRUE(store_or.ok()) << store_or.status().ToString();
  std::unique_ptr<eventstore::EventStore> store = std::move(store_or).value();

  auto start = env->pd->GetTs();
  ASSERT_TRUE(start.ok());
  std::vector<std::unique_ptr<Watermark>> marks;
  for (int t = 0; t < kShape.tables; ++t) {
    marks.push_back(std::make_unique<Watermark>());
    Watermark* mark = marks.back().get();
    ASSERT_TRUE(store
                    ->RegisterDispatcher(DispatcherId{0, static_cast<uint64_t>(t + 1)},
                                         kShape.TableAt(t),
                                         codec::ComparableTableRecordSpan(kShape.TableAt(t)),
                                         start.value(), [mark](Ts ts, Ts) { mark->Notify(ts); })
                    .ok());
  }
  logpuller::testing::Progress progress;
  {
    OwnedThread faults;
    faults.Start("faults", [&](StopToken) {
      logpuller::testing::RunFaults(*env->cluster, kShape, seed, progress);
    });
    ThreadGroup writers;
    for (int w = 0; w < 2; ++w) {
      writers.Start("writer", [&, w](StopToken) {
        logpuller::testing::RunWriter(*env->cluster, kShape, seed * 10 + w, 300, progress);
      });
    }
    writers.Join();
    progress.Done();
    faults.Join();
  }
  ASSERT_TRUE(logpuller::testing::HealCluster(*env->cluster).ok());
  Ts last;
  for (int t = 0; t < kShape.tables; ++t) {
    auto ts =
        logpuller::testing::WriteRows(*env->cluster, kShape.TableAt(t), {kShape.handles}, "final");
    ASSERT_TRUE(ts.ok());
    last = ts.value();
  }
  for (int t = 0; t < kShape.tables; ++t) {
    DispatcherId id{0, static_cast<uint64_t>(t + 1)};
    Watermark& mark = *marks[static_cast<size_t>(t)];
    ASSERT_TRUE(mark.WaitFor(last)) << "table " << t;
    Ts resolved = mark.Get();
    int order_errors = 0;
    auto got = ScanAll(*store, id, start.value(), resolved, &order_errors);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_EQ(order_errors, 0);
    auto want =
        logpuller::testing::ExpectedChanges(env->truth, kShape.TableAt(t), start.value(), resolved);
    EXPECT_EQ(logpuller::testing::DiffChanges(
                  want, logpuller::testing::Deduplicate(got.value(), start.value(), resolved)),
              "")
        << "table " << t;
    EXPECT_EQ(got.value().size(), want.size()) << "the store keeps one copy of each change";
    MutexLock lock(&mark.mu);
    EXPECT_EQ(mark.went_back, 0);
  }
  // GC: a reader past the middle of the history lets the store drop the rest.
  DispatcherId first{0, 1};
  auto before = store->CountKeysForTesting(first);
  ASSERT_TRUE(before.ok());
  Ts mid = marks[0]->Get();
  store->UpdateDispatcherCheckpoint(first, mid);
  ASSERT_TRUE(PollUntil(
      [&] {
        auto n = store->CountKeysForTesting(first);
        return n.ok() && n.value() < before.value();
      },
      kWait));
  EXPECT_EQ(store->GetIterator(first, Ts(mid.value() - 1), mid).status().code(),
            Code::kInvalidArgument);
  size_t subs = env->client->stats().subscriptions;
  store->UnregisterDispatcher(first);
  ASSERT_TRUE(PollUntil([&] { return env->client->stats().subscriptions == subs - 1; }, kWait));
  store->Stop();
  env->client->Stop();
  EXPECT_EQ(env->client->pipeline().QuotaInFlight(), 0u);
  store.reset();
  std::filesystem::remove_all(dir);
}

TEST(PullerEventStoreTest, ReadersSeeExactlyTheTruthInOrder) {
  for (uint64_t seed : logpuller::testing::ScenarioSeeds()) RunSeed(seed);
}

}  // namespace
}  // namespace sluice
