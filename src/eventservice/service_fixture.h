// Fixture of the event service tests: a real EventStore fed through a fake
// puller, a FakeSchemaReader, a ManualClock and a consumer that records what
// it receives. Test-only.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/test_util.h"
#include "common/thread_annotations.h"
#include "eventservice/event_service.h"
#include "eventservice/test_helpers.h"
#include "eventstore/event_store.h"
#include "logpuller/consumer.h"

namespace sluice::eventservice::testing {

// Hands the test the KvConsumer of every subscription.
class FakePuller : public logpuller::SpanSubscriber {
 public:
  Result<SubscriptionId> Subscribe(const Span& span, Ts start_ts,
                                   std::shared_ptr<logpuller::KvConsumer> consumer,
                                   const logpuller::SubscribeOptions& options) override
      EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    last_ = std::move(consumer);
    ++active_;
    return SubscriptionId(next_id_++);
  }
  void Unsubscribe(SubscriptionId id) override EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    --active_;
  }
  std::shared_ptr<logpuller::KvConsumer> last() EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    return last_;
  }
  int active() EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    return active_;
  }

 private:
  Mutex mu_;
  uint64_t next_id_ = 1;
  int active_ GUARDED_BY(mu_) = 0;
  std::shared_ptr<logpuller::KvConsumer> last_ GUARDED_BY(mu_);
};

// Records every callback. Acks DML bytes at once when `auto_ack`, else when
// the test calls AckAll(); tracks the bytes in flight and their peak.
class Recorder : public EventConsumer {
 public:
  struct Item {
    char kind = 0;  // 'M' dml, 'D' ddl, 'R' resolved, 'E' error
    event::DmlEventPtr dml;
    event::DdlEventPtr ddl;
    Ts ts;
    Status status;
  };

  Recorder(DispatcherId id, bool auto_ack) : id_(id), auto_ack_(auto_ack) {}
  void set_service(EventService* service) { service_ = service; }

  void OnDml(event::DmlEventPtr dml) override EXCLUDES(mu_) {
    size_t bytes = dml->ApproximateBytes();
    {
      MutexLock lock(&mu_);
      in_flight_ += bytes;
      peak_ = std::max(peak_, in_flight_);
      max_row_ = std::max(max_row_, MaxRowBytes(*dml));
      items_.push_back(Item{'M', std::move(dml), nullptr, Ts(), Status()});
      if (!auto_ack_) return;
      in_flight_ -= bytes;
    }
    service_->Ack(id_, bytes);
  }
  void OnDdl(event::DdlEventPtr ddl) override EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    items_.push_back(Item{'D', nullptr, std::move(ddl), Ts(), Status()});
  }
  void OnResolved(Ts ts) override EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    items_.push_back(Item{'R', nullptr, nullptr, ts, Status()});
  }
  void OnError(Status status, Ts failing_ts) override EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    items_.push_back(Item{'E', nullptr, nullptr, failing_ts, std::move(status)});
  }

  void AckAll() EXCLUDES(mu_) {
    size_t bytes;
    {
      MutexLock lock(&mu_);
      bytes = in_flight_;
      in_flight_ = 0;
    }
    if (bytes > 0) service_->Ack(id_, bytes);
  }

  std::vector<Item> items() const EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    return items_;
  }
  size_t count(char kind) const EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    return std::count_if(items_.begin(), items_.end(),
                         [&](const Item& i) { return i.kind == kind; });
  }
  bool HasResolved(Ts ts) const EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    return std::any_of(items_.begin(), items_.end(),
                       [&](const Item& i) { return i.kind == 'R' && i.ts >= ts; });
  }
  size_t in_flight() const EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    return in_flight_;
  }
  size_t peak() const EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    return peak_;
  }
  size_t max_row() const EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    return max_row_;
  }
  // "M20 M30 D40 R50" style summary (commit ts of DML, finished ts of DDL).
  std::string Summary() const EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    std::string out;
    for (const Item& i : items_) {
      if (!out.empty()) out += ' ';
      out += i.kind;
      if (i.kind == 'M') out += std::to_string(i.dml->commit_ts.value());
      if (i.kind == 'D') out += std::to_string(i.ddl->finished_ts.value());
      if (i.kind == 'R') out += std::to_string(i.ts.value());
    }
    return out;
  }

 private:
  static size_t MaxRowBytes(const event::DmlEvent& e) {
    size_t m = 0;
    for (const auto& r : e.rows) {
      event::DmlEvent one;
      one.rows.push_back(r);
      m = std::max(m, one.ApproximateBytes());
    }
    return m;
  }

  const DispatcherId id_;
  const bool auto_ack_;
  EventService* service_ = nullptr;
  mutable Mutex mu_;
  std::vector<Item> items_ GUARDED_BY(mu_);
  size_t in_flight_ GUARDED_BY(mu_) = 0;
  size_t peak_ GUARDED_BY(mu_) = 0;
  size_t max_row_ GUARDED_BY(mu_) = 0;
};

class EventServiceFixture : public ::testing::Test {
 protected:
  static constexpr int64_t kTable = 100;

  void SetUp() override {
    store_options_.data_dir = ::testing::TempDir() + "/evsvc_" +
                              ::testing::UnitTest::GetInstance()->current_test_info()->name();
    store_options_.clock = &store_clock_;
    store_options_.memtable_bytes = 4 << 20;
    store_options_.block_cache_bytes = 8 << 20;
    auto store = eventstore::EventStore::Open(store_options_, &puller_);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(store).value();
    schema_.AddSchema(kTable, IntHandleSchema(kTable, Ts(1)));
    schema_.SetResolved(Ts(1000000));
    options_.clock = &clock_;
    options_.num_workers = 2;
    options_.tick_interval = std::chrono::milliseconds(100);
    options_.resolved_interval = std::chrono::milliseconds(2000);
  }

  void TearDown() override {
    if (service_) service_->Stop();
    service_.reset();
    store_.reset();
    std::error_code ec;
    std::filesystem::remove_all(store_options_.data_dir, ec);
  }

  void StartService() {
    service_ = std::make_unique<EventService>(options_, store_.get(), &schema_);
    ASSERT_TRUE(service_->Start().ok());
  }

  // Registers a dispatcher of kTable and returns the puller-side consumer.
  std::shared_ptr<logpuller::KvConsumer> Register(Recorder* rec, DispatcherId id, Ts start,
                                                  size_t budget = 0, RowFilter filter = nullptr) {
    rec->set_service(service_.get());
    DispatcherRegistration reg;
    reg.id = id;
    reg.table_id = kTable;
    reg.start_ts = start;
    reg.memory_budget = budget;
    reg.filter = std::move(filter);
    reg.consumer = rec;
    Status st = service_->RegisterDispatcher(std::move(reg));
    EXPECT_TRUE(st.ok()) << st.ToString();
    return puller_.last();
  }

  static void Persist(logpuller::KvConsumer* consumer, KvBatch batch) {
    Notification done;
    consumer->ConsumeKvEvents(std::move(batch), [&done] { done.Notify(); });
    ASSERT_TRUE(done.WaitFor());
  }

  ManualClock clock_;
  ManualClock store_clock_;
  FakePuller puller_;
  FakeSchemaReader schema_;
  eventstore::EventStoreOptions store_options_;
  std::unique_ptr<eventstore::EventStore> store_;
  EventServiceOptions options_;
  std::unique_ptr<EventService> service_;
};

inline DispatcherId Disp(uint64_t n) { return DispatcherId{1, n}; }

}  // namespace sluice::eventservice::testing
