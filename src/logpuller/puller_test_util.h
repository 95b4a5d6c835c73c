// Test support for the log puller: a recording consumer that persists
// batches out of order on a shared persister thread and checks the puller's
// promises as it goes, a consumer that holds every batch unpersisted until
// released, and an environment with a SimCluster, a PD client and
// a SubscriptionClient wired together over loopback gRPC.
#pragma once

#include <deque>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "common/kv_entry.h"
#include "common/lifecycle.h"
#include "common/thread_annotations.h"
#include "logpuller/consumer.h"
#include "logpuller/subscription_client.h"
#include "pd/pd_client.h"
#include "pd/region_cache.h"
#include "simkv/ground_truth.h"
#include "simkv/sim_cluster.h"

namespace sluice::logpuller::testing {

class RecordingConsumer;

// Persists queued batches after random delays, out of order (seeded), on
// one thread, like an event store whose writers finish out of order.
class Persister {
 public:
  explicit Persister(uint64_t seed);
  ~Persister();
  void Add(RecordingConsumer* consumer, KvBatch batch, PersistedCallback done) EXCLUDES(mu_);
  // Stops the thread after persisting everything queued.
  void Stop();
  size_t pending() const EXCLUDES(mu_);

 private:
  struct Item {
    RecordingConsumer* consumer;
    KvBatch batch;
    PersistedCallback done;
    std::chrono::steady_clock::time_point due;
  };
  void Loop(const StopToken& token) EXCLUDES(mu_);

  mutable Mutex mu_;
  CondVar cv_;
  std::deque<Item> items_ GUARDED_BY(mu_);
  std::mt19937_64 rng_ GUARDED_BY(mu_);
  OwnedThread thread_;
};

// Records what one subscription delivered and checks, on every call: resolved
// ts never goes back; when a resolved ts T is published, no batch with a
// change at or below T is still unpersisted; no change at or below a
// published resolved ts arrives or is persisted afterwards.
class RecordingConsumer final : public KvConsumer {
 public:
  explicit RecordingConsumer(Persister* persister) : persister_(persister) {}

  void ConsumeKvEvents(KvBatch batch, PersistedCallback persisted) override EXCLUDES(mu_);
  void AdvanceResolvedTs(Ts ts) override EXCLUDES(mu_);
  void OnSubscriptionError(const Status& status) override EXCLUDES(mu_);

  // Called by the persister.
  void Persist(const KvBatch& batch) EXCLUDES(mu_);

  Ts resolved() const EXCLUDES(mu_);
  size_t num_resolved_calls() const EXCLUDES(mu_);
  std::vector<RawKvEntry> persisted() const EXCLUDES(mu_);
  std::vector<std::string> violations() const EXCLUDES(mu_);
  std::optional<Status> error() const EXCLUDES(mu_);
  // Waits (real time, bounded) until the published resolved ts reaches ts.
  bool WaitResolved(Ts ts, std::chrono::milliseconds timeout) EXCLUDES(mu_);

 private:
  Persister* const persister_;
  mutable Mutex mu_;
  CondVar cv_;
  Ts resolved_ GUARDED_BY(mu_);
  bool any_resolved_ GUARDED_BY(mu_) = false;
  size_t resolved_calls_ GUARDED_BY(mu_) = 0;
  // Smallest commit ts of each batch handed over and not yet persisted.
  std::multiset<uint64_t> unpersisted_min_ GUARDED_BY(mu_);
  std::vector<RawKvEntry> persisted_ GUARDED_BY(mu_);
  std::vector<std::string> violations_ GUARDED_BY(mu_);
  std::optional<Status> error_ GUARDED_BY(mu_);
};

// Holds every persisted callback until Release(); records resolved ts and
// SetPersistUrgent() calls.
class HoldingConsumer final : public KvConsumer {
 public:
  void ConsumeKvEvents(KvBatch batch, PersistedCallback persisted) override {
    {
      MutexLock lock(&mu_);
      ++batches_;
      if (!released_) {
        held_.push_back(std::move(persisted));
        return;
      }
    }
    persisted();  // Never under mu_ (KvConsumer's rule).
  }
  void AdvanceResolvedTs(Ts ts) override {
    MutexLock lock(&mu_);
    resolved_ = ts;
  }
  void SetPersistUrgent(bool urgent) override {
    MutexLock lock(&mu_);
    urgent_.push_back(urgent);
  }
  // Persists everything held, and every later batch at once.
  void Release() {
    std::vector<PersistedCallback> held;
    {
      MutexLock lock(&mu_);
      released_ = true;
      held.swap(held_);
    }
    for (PersistedCallback& done : held) done();
  }
  size_t batches() const {
    MutexLock lock(&mu_);
    return batches_;
  }
  Ts resolved() const {
    MutexLock lock(&mu_);
    return resolved_;
  }
  std::vector<bool> urgent() const {
    MutexLock lock(&mu_);
    return urgent_;
  }

 private:
  mutable Mutex mu_;
  size_t batches_ GUARDED_BY(mu_) = 0;
  bool released_ GUARDED_BY(mu_) = false;
  std::vector<PersistedCallback> held_ GUARDED_BY(mu_);
  Ts resolved_ GUARDED_BY(mu_);
  std::vector<bool> urgent_ GUARDED_BY(mu_);
};

// Changes of one table from the ground truth in (from, to], deduplicated and
// sorted like the deduplicated output of a subscription; and a comparison.
std::vector<RawKvEntry> ExpectedChanges(const simkv::GroundTruth& truth, TableId table, Ts from,
                                        Ts to);
std::vector<RawKvEntry> Deduplicate(std::vector<RawKvEntry> entries, Ts from, Ts to);
// Empty if equal, else a description of the first differences.
std::string DiffChanges(const std::vector<RawKvEntry>& want, const std::vector<RawKvEntry>& got);

struct PullerEnvOptions {
  size_t num_stores = 3;
  std::vector<std::string> raw_split_keys;
  std::chrono::milliseconds resolved_ts_interval{20};
  SubscriptionClientOptions client;
};

// SimCluster + GroundTruth + PdClient + RegionCache + SubscriptionClient.
struct PullerEnv {
  static Result<std::unique_ptr<PullerEnv>> Start(PullerEnvOptions options);
  ~PullerEnv();
  void Stop();

  std::unique_ptr<simkv::SimCluster> cluster;
  simkv::GroundTruth truth;
  std::unique_ptr<pd::PdClient> pd;
  std::unique_ptr<pd::RegionCache> cache;
  std::unique_ptr<SubscriptionClient> client;
};

// Commits one transaction writing `handles` of `table` (value derived from
// `tag`); returns its commit ts.
Result<Ts> WriteRows(simkv::SimCluster& cluster, TableId table, const std::vector<int64_t>& handles,
                     const std::string& tag, bool del = false);

}  // namespace sluice::logpuller::testing
