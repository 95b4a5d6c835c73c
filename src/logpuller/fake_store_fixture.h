// A SubscriptionClient whose only store is a scripted FakeStore, for tests
// that need TiKV to send exactly what they say: PD (a SimCluster with one
// store) puts tables A, B and C in a region each, and the store's address
// points at the fake. TearDown checks that no consumer saw a broken promise,
// that none was called after its error, and that no quota is left.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <vector>

#include "codec/tablecodec.h"
#include "common/test_util.h"
#include "logpuller/fake_store.h"
#include "logpuller/puller_test_util.h"
#include "logpuller/subscription_client.h"

namespace sluice::logpuller::testing {

inline constexpr auto kFakeWait = std::chrono::seconds(5);
inline const TableId kTableA(101);
inline const TableId kTableB(102);
inline const TableId kTableC(103);
inline constexpr Ts kFakeStart(1000);

// Forwards to a RecordingConsumer and checks the error promise: at most one
// OnSubscriptionError, and no call of any kind after it.
class WatchedConsumer final : public KvConsumer {
 public:
  explicit WatchedConsumer(std::shared_ptr<RecordingConsumer> inner) : inner_(std::move(inner)) {}
  void ConsumeKvEvents(KvBatch batch, PersistedCallback persisted) override {
    Note();
    inner_->ConsumeKvEvents(std::move(batch), std::move(persisted));
  }
  void AdvanceResolvedTs(Ts ts) override {
    Note();
    inner_->AdvanceResolvedTs(ts);
  }
  void OnSubscriptionError(const Status& status) override {
    Note();
    errors_.fetch_add(1);
    inner_->OnSubscriptionError(status);
  }
  int calls_after_error() const { return calls_after_error_.load(); }

 private:
  void Note() {
    if (errors_.load() > 0) calls_after_error_.fetch_add(1);
  }
  std::shared_ptr<RecordingConsumer> inner_;
  std::atomic<int> errors_{0};
  std::atomic<int> calls_after_error_{0};
};

// The row key of `handle` in table A.
inline std::string KeyA(int64_t handle) { return codec::EncodeRowKey(kTableA, handle); }

// A committed put as a consumer receives it.
inline RawKvEntry Put(std::string key, std::string value, Ts start, Ts commit) {
  RawKvEntry e;
  e.op = KvOp::kPut;
  e.key = std::move(key);
  e.value = std::move(value);
  e.start_ts = start;
  e.commit_ts = commit;
  return e;
}

struct Sub {
  SubscriptionId id;
  std::shared_ptr<RecordingConsumer> consumer;
  RecordingConsumer* operator->() const { return consumer.get(); }
};

struct StartOptions {
  size_t region_workers = 2;
  size_t scan_window = 32;
  std::chrono::milliseconds scan_yield_max{1000};
  size_t pipeline_workers = 0;    // 0: the pipeline's default.
  size_t pipeline_queue = 4096;   // Data messages per pipeline worker.
  int max_persist_restarts = 10;  // SubscriptionClientOptions'.
};

class FakeStoreClientTest : public ::testing::Test {
 protected:
  // PD (a SimCluster with one store) knows regions that put each table's
  // record span in a region of its own; the store's address points at the
  // fake before anything asks PD for it.
  void Start(StartOptions start = {}) {
    auto fake = FakeStore::Start();
    ASSERT_TRUE(fake.ok()) << fake.status().ToString();
    fake_ = std::move(fake).value();
    testing::PullerEnvOptions options;
    options.num_stores = 1;
    options.raw_split_keys = {codec::EncodeRecordPrefix(kTableA),
                              codec::EncodeRecordPrefix(kTableB),
                              codec::EncodeRecordPrefix(kTableC),
                              codec::EncodeRecordPrefix(TableId(kTableC.value() + 1))};
    options.resolved_ts_interval = std::chrono::milliseconds(0);
    options.client.region_workers = start.region_workers;
    options.client.scheduler.streams_per_store = 1;
    options.client.scheduler.scan_window_per_store = start.scan_window;
    options.client.scan_yield_max = start.scan_yield_max;
    options.client.pipeline.num_workers = start.pipeline_workers;
    options.client.pipeline.queue_capacity = start.pipeline_queue;
    options.client.max_persist_restarts = start.max_persist_restarts;
    options.client.scheduler.backoff_base = std::chrono::milliseconds(5);
    options.client.scheduler.backoff_max = std::chrono::milliseconds(100);
    options.client.restart_backoff_base = std::chrono::milliseconds(5);
    auto env = PullerEnv::Start(options);
    ASSERT_TRUE(env.ok()) << env.status().ToString();
    env_ = std::move(env).value();
    ASSERT_TRUE(env_->cluster->store_registry().SetAddress(StoreId(1), fake_->address()).ok());
    region_a_ = RegionOf(kTableA);
    region_b_ = RegionOf(kTableB);
    region_c_ = RegionOf(kTableC);
    ASSERT_NE(region_a_, region_b_);
    ASSERT_NE(region_b_, region_c_);
  }

  void TearDown() override {
    if (env_ != nullptr) {
      SubscriptionClient& client = *env_->client;
      EXPECT_TRUE(PollUntil([&] { return client.pipeline().QuotaInFlight() == 0; }, kFakeWait));
      client.Stop();
    }
    persister_.Stop();
    if (env_ != nullptr) {
      EXPECT_EQ(env_->client->pipeline().QuotaInFlight(), 0u);
    }
    for (const auto& consumer : consumers_)
      EXPECT_THAT(consumer->violations(), ::testing::IsEmpty());
    for (const auto& watched : watched_) EXPECT_EQ(watched->calls_after_error(), 0);
    if (fake_ != nullptr) fake_->Stop();
    if (env_ != nullptr) env_->Stop();
  }

  RegionId RegionOf(TableId table) {
    auto region =
        env_->cluster->regions().RegionForKey(codec::ComparableTableRecordSpan(table).start);
    EXPECT_TRUE(region.ok()) << region.status().ToString();
    return region.ok() ? region->id : RegionId();
  }

  Sub Subscribe(TableId table) {
    auto consumer = std::make_shared<RecordingConsumer>(&persister_);
    auto watched = std::make_shared<WatchedConsumer>(consumer);
    consumers_.push_back(consumer);
    watched_.push_back(watched);
    return Sub{SubscribeWith(table, watched), consumer};
  }

  // Subscribes `table` from kFakeStart with a consumer of the test's own.
  SubscriptionId SubscribeWith(TableId table, std::shared_ptr<KvConsumer> consumer) {
    SubscribeOptions options;
    options.advance_interval = std::chrono::milliseconds(0);  // Publish on every update.
    auto id = env_->client->Subscribe(codec::ComparableTableRecordSpan(table), kFakeStart,
                                      std::move(consumer), options);
    EXPECT_TRUE(id.ok()) << id.status().ToString();
    return id.ok() ? id.value() : SubscriptionId();
  }

  // Waits until the fake store has answered `n` registers of `region`.
  bool WaitRegistered(RegionId region, int n) {
    return PollUntil([&] { return fake_->NumRegisters(region) >= n; }, kFakeWait);
  }

  FakeRegister Register(RegionId region, int attempt) {
    std::vector<FakeRegister> regs = fake_->Registers(region);
    EXPECT_GE(static_cast<int>(regs.size()), attempt);
    return static_cast<int>(regs.size()) >= attempt ? regs[attempt - 1] : FakeRegister{};
  }

  // The changes `sub` persisted, deduplicated, up to its resolved ts.
  std::vector<RawKvEntry> Delivered(const Sub& sub) {
    return testing::Deduplicate(sub->persisted(), kFakeStart, sub->resolved());
  }

  SubscriptionClient::Stats stats() { return env_->client->stats(); }

  testing::Persister persister_{7};
  std::unique_ptr<FakeStore> fake_;
  std::unique_ptr<PullerEnv> env_;
  std::vector<std::shared_ptr<RecordingConsumer>> consumers_;
  std::vector<std::shared_ptr<WatchedConsumer>> watched_;
  RegionId region_a_;
  RegionId region_b_;
  RegionId region_c_;
};

}  // namespace sluice::logpuller::testing
