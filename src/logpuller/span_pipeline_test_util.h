// Test support for the span pipeline's tests: FakeConsumer (records every
// call, persists when the test says) and the SpanPipelineTest fixture (one
// worker, a ManualClock, a private metrics registry, a probe subscription
// for Sync()).
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/metrics.h"
#include "common/test_util.h"
#include "common/thread_annotations.h"
#include "logpuller/span_pipeline.h"

namespace sluice::logpuller::span_pipeline_testing {

using std::chrono::milliseconds;
using std::chrono::seconds;

inline constexpr auto kWait = seconds(5);  // Bound on every wait; tests pass far sooner.
inline const SubscriptionId kSub(7);
inline const SubscriptionId kOther(8);
inline const SubscriptionId kProbe(1000);
inline const std::string kMetric = "sluice_logpuller_span_pipeline_";

// One entry whose commit ts is `marker`, with `value_bytes` of payload.
inline KvBatch MakeBatch(uint64_t marker, size_t value_bytes = 16) {
  RawKvEntry entry;
  entry.key = std::to_string(marker);
  entry.value = std::string(value_bytes, 'v');
  entry.start_ts = Ts(marker);
  entry.commit_ts = Ts(marker);
  return {entry};
}

// Records every call; the test completes persisted callbacks when it likes,
// from any thread. `violations` counts publishes that go backwards or, with
// check_barrier_, come while a received batch whose marker (commit ts) is
// <= ts is not yet persisted.
class FakeConsumer : public KvConsumer {
 public:
  struct Record {
    std::vector<KvBatch> batches;
    std::vector<Ts> resolved;
    std::vector<bool> urgent;  // Each SetPersistUrgent() call.
    std::vector<Status> errors;
    uint64_t violations = 0;
  };

  void ConsumeKvEvents(KvBatch batch, PersistedCallback persisted) override {
    if (gate_ != nullptr) {
      entered_.Notify();
      gate_->WaitFor(kWait);
    }
    if (throw_on_consume_) throw std::runtime_error("consume failed");
    size_t index;
    {
      MutexLock lock(&mu_);
      index = record_.batches.size();
      record_.batches.push_back(std::move(batch));
      callbacks_.push_back(std::move(persisted));
    }
    if (on_batch_) on_batch_(index);
  }

  void AdvanceResolvedTs(Ts ts) override {
    {
      MutexLock lock(&mu_);
      if (!record_.resolved.empty() && ts <= record_.resolved.back()) ++record_.violations;
      for (size_t i = 0; check_barrier_ && i < record_.batches.size(); ++i) {
        bool covered = record_.batches[i].at(0).commit_ts <= ts;
        if (covered && persisted_.count(i) == 0) ++record_.violations;
      }
      record_.resolved.push_back(ts);
    }
    if (throw_on_resolved_) throw std::runtime_error("advance failed");
  }

  void SetPersistUrgent(bool urgent) override {
    MutexLock lock(&mu_);
    record_.urgent.push_back(urgent);
  }

  void OnSubscriptionError(const Status& status) override {
    MutexLock lock(&mu_);
    record_.errors.push_back(status);
  }

  // Calls the persisted callback of the i-th batch received (a copy, so a
  // test can call it twice like a buggy consumer).
  void Persist(size_t i) {
    PersistedCallback callback;
    {
      MutexLock lock(&mu_);
      callback = callbacks_.at(i);
      persisted_.insert(i);
    }
    callback();
  }
  void ForgetCallbacks() {
    MutexLock lock(&mu_);
    callbacks_.clear();
  }

  Record Get() {
    MutexLock lock(&mu_);
    return record_;
  }
  bool WaitForBatches(size_t n) {
    return PollUntil([&] { return Get().batches.size() >= n; }, kWait);
  }
  bool WaitForResolved(size_t n) {
    return PollUntil([&] { return Get().resolved.size() >= n; }, kWait);
  }

  // Set before the consumer is registered.
  Notification* gate_ = nullptr;  // ConsumeKvEvents waits on it.
  Notification entered_;          // ConsumeKvEvents reached the gate.
  bool throw_on_consume_ = false;
  bool throw_on_resolved_ = false;
  bool check_barrier_ = false;
  std::function<void(size_t)> on_batch_;  // Called with each new batch's index.

 private:
  Mutex mu_;
  Record record_ GUARDED_BY(mu_);
  std::vector<PersistedCallback> callbacks_ GUARDED_BY(mu_);
  std::set<size_t> persisted_ GUARDED_BY(mu_);  // Batch indexes.
};

class SpanPipelineTest : public ::testing::Test {
 protected:
  SpanPipelineOptions Options() {
    SpanPipelineOptions options;
    options.num_workers = 1;
    options.queue_capacity = 64;
    options.quota_bytes = 1 << 20;
    options.stall_check_interval = milliseconds(0);
    options.clock = &clock_;
    options.metrics = &registry_;
    return options;
  }

  // Starts a pipeline with a probe subscription used by Sync().
  void Start(SpanPipelineOptions options) {
    pipeline_ =
        std::make_unique<SpanPipeline>(options, [this](SubscriptionId id, const Status& s, bool) {
          MutexLock lock(&failures_mu_);
          failures_.emplace_back(id, s);
        });
    pipeline_->Start();
    ASSERT_TRUE(pipeline_->Register(kProbe, probe_, Ts(0)).ok());
  }
  void Start() { Start(Options()); }

  // Starts a pipeline with one-message queues and a 1 KiB quota, and parks
  // its worker inside kSub's consumer (batch 1) with batch 2 filling the queue.
  std::shared_ptr<FakeConsumer> StartWithBlockedWorker(Notification* gate) {
    SpanPipelineOptions options = Options();
    options.queue_capacity = 1;
    options.quota_bytes = 1024;
    Start(options);
    auto c = Register(kSub, Ts(10));
    c->gate_ = gate;
    EXPECT_TRUE(Data(kSub, 1).ok());
    EXPECT_TRUE(c->entered_.WaitFor(kWait));
    EXPECT_TRUE(Data(kSub, 2).ok());
    EXPECT_EQ(pipeline_->QueuedDataMessages(), 1u);
    return c;
  }

  std::shared_ptr<FakeConsumer> Register(SubscriptionId id, Ts start_ts) {
    auto consumer = std::make_shared<FakeConsumer>();
    EXPECT_TRUE(pipeline_->Register(id, consumer, start_ts).ok());
    return consumer;
  }
  Status Data(SubscriptionId id, uint64_t marker, size_t value_bytes = 16) {
    return pipeline_->EnqueueData(id, MakeBatch(marker, value_bytes));
  }
  Status Resolved(SubscriptionId id, uint64_t ts) { return pipeline_->EnqueueResolved(id, Ts(ts)); }

  // Returns once the worker has handled every message posted before the
  // call (single worker: the probe's resolved is behind them in the data
  // queue, and the worker empties the control queue before handling it).
  void Sync() {
    ++probe_ts_;
    ASSERT_TRUE(pipeline_->EnqueueResolved(kProbe, Ts(probe_ts_)).ok());
    ASSERT_TRUE(probe_->WaitForResolved(probe_ts_));
  }

  size_t Subscriptions() { return pipeline_->NumSubscriptions() - 1; }  // Without the probe.
  std::vector<std::pair<SubscriptionId, Status>> Failures() {
    MutexLock lock(&failures_mu_);
    return failures_;
  }
  double Counter(const std::string& name) {
    return registry_.AddCounter(kMetric + name, "")->Value();
  }
  double Gauge(const std::string& name) { return registry_.AddGauge(kMetric + name, "")->Value(); }

  ManualClock clock_;
  Registry registry_;
  std::shared_ptr<FakeConsumer> probe_ = std::make_shared<FakeConsumer>();
  uint64_t probe_ts_ = 0;
  Mutex failures_mu_;
  std::vector<std::pair<SubscriptionId, Status>> failures_ GUARDED_BY(failures_mu_);
  std::unique_ptr<SpanPipeline> pipeline_;  // Last: destroyed before the clock.
};

}  // namespace sluice::logpuller::span_pipeline_testing
