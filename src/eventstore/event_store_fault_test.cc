// The event store on a disk that fails: a RocksDB write refused after a
// failed flush reaches the batch's persisted callback as an error (so the
// puller never publishes a resolved ts over it). A full disk is recoverable:
// once it has room again the store resumes and accepts the rewrite. Any
// other I/O error is fatal to the instance, which keeps refusing writes (the
// puller fails the subscriptions once its restarts run out, and the
// changefeed reports it).
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "codec/tablecodec.h"
#include "common/test_util.h"
#include "common/thread_annotations.h"
#include "eventstore/event_store.h"
#include "eventstore/fault_file_system.h"
#include "logpuller/capturing_subscriber.h"

namespace sluice::eventstore {
namespace {

using logpuller::KvConsumer;
using testing::FaultFileSystem;

constexpr TableId kFaultTable(77);
const DispatcherId kReader{9, 1};

// `n` rows of about 1 KiB each, handles from `first`, committed at `commit`.
KvBatch BigRows(int64_t first, int n, Ts commit) {
  KvBatch batch;
  for (int i = 0; i < n; ++i) {
    RawKvEntry e;
    e.op = KvOp::kPut;
    e.key = codec::EncodeRowKey(kFaultTable, first + i);
    e.value = std::string(1024, static_cast<char>('a' + (first + i) % 26));
    e.start_ts = Ts(commit.value() - 1);
    e.commit_ts = commit;
    e.region_id = RegionId(3);
    batch.push_back(std::move(e));
  }
  return batch;
}

class EventStoreFaultTest : public ::testing::Test {
 protected:
  void SetUp() override {
    options_.data_dir = ::testing::TempDir() + "/es_fault_" +
                        ::testing::UnitTest::GetInstance()->current_test_info()->name();
    options_.num_dbs = 1;
    options_.memtable_bytes = 64 << 10;  // Flushes come often.
    options_.block_cache_bytes = 1 << 20;
    options_.env = FaultFileSystem::NewEnv(fs_);
    auto store = EventStore::Open(options_, &puller_);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(store).value();
    ASSERT_TRUE(store_
                    ->RegisterDispatcher(kReader, kFaultTable,
                                         ToComparable(TableRecordSpan(kFaultTable)), Ts(10), {})
                    .ok());
    consumer_ = puller_.consumer();
    ASSERT_NE(consumer_, nullptr);
  }
  void TearDown() override {
    store_.reset();
    std::error_code ec;
    std::filesystem::remove_all(options_.data_dir, ec);
  }

  // Hands a batch to the store and waits for its persisted callback. The
  // callback's state is shared, so a callback after a timeout is harmless.
  Status Persist(KvBatch batch) {
    struct Outcome {
      Notification done;
      Mutex mu;
      Status status GUARDED_BY(mu) = Internal("callback not run");
    };
    auto outcome = std::make_shared<Outcome>();
    consumer_->ConsumeKvEvents(std::move(batch), [outcome](const Status& status) {
      {
        MutexLock lock(&outcome->mu);
        outcome->status = status;
      }
      outcome->done.Notify();
    });
    if (!outcome->done.WaitFor(std::chrono::seconds(10))) return Timeout("no persisted callback");
    MutexLock lock(&outcome->mu);
    return outcome->status;
  }

  // The next batch of `n` rows: fresh handles, the next commit ts.
  KvBatch NextBatch(int n) {
    KvBatch batch = BigRows(next_handle_, n, Ts(next_ts_++));
    next_handle_ += n;
    return batch;
  }

  // Writes batches of half a memtable until one is refused (a flush
  // starts, fails, and RocksDB then refuses writes), at most 200 of them.
  // Returns the refusal, or OK if every batch was stored.
  Status WriteUntilRefused() {
    for (int i = 0; i < 200; ++i) {
      Status st = Persist(NextBatch(32));
      if (!st.ok()) return st;
    }
    return Status::Ok();
  }

  size_t CountRows(Ts to) {
    auto it = store_->GetIterator(kReader, Ts(10), to);
    EXPECT_TRUE(it.ok()) << it.status().ToString();
    if (!it.ok()) return 0;
    RawKvEntry e;
    bool new_txn = false;
    size_t n = 0;
    while ((*it)->Next(&e, &new_txn)) ++n;
    EXPECT_TRUE((*it)->status().ok()) << (*it)->status().ToString();
    return n;
  }

  std::shared_ptr<FaultFileSystem> fs_ = std::make_shared<FaultFileSystem>();
  EventStoreOptions options_;
  logpuller::testing::CapturingSubscriber puller_;
  std::unique_ptr<EventStore> store_;
  std::shared_ptr<KvConsumer> consumer_;
  int64_t next_handle_ = 1000;
  uint64_t next_ts_ = 101;
};

TEST_F(EventStoreFaultTest, AWriteRefusedOnAFullDiskFailsItsBatchAndResumesOnceThereIsRoom) {
  ASSERT_TRUE(Persist(BigRows(0, 32, Ts(100))).ok());
  fs_->Arm(FaultFileSystem::Fault::kNoSpace);
  Status failed = WriteUntilRefused();
  ASSERT_FALSE(failed.ok()) << "no write failed";
  EXPECT_EQ(failed.code(), Code::kResourceExhausted) << failed.ToString();
  EXPECT_NE(failed.ToString().find("disk full"), std::string::npos) << failed.ToString();
  EXPECT_GT(fs_->failures(), 0u);
  // The failed batch is not a reason to refuse readers: what was stored
  // stays readable up to the resolved ts the puller publishes.
  consumer_->AdvanceResolvedTs(Ts(100));
  EXPECT_EQ(CountRows(Ts(100)), 32u);
  EXPECT_TRUE(store_->SubscriptionStatus(kReader).ok());

  // The disk has room again: RocksDB's recovery (or the writer's Resume())
  // clears the error, and a rewrite, retried as the puller retries, lands.
  fs_->Disarm();
  const Ts rewrite(next_ts_++);
  ASSERT_TRUE(PollUntil([&] { return Persist(BigRows(50000, 32, rewrite)).ok(); },
                        std::chrono::seconds(60)));
  consumer_->AdvanceResolvedTs(rewrite);
  EXPECT_GE(CountRows(rewrite), 64u);
}

TEST_F(EventStoreFaultTest, WritesKeepFailingWhileTheDiskIsFull) {
  fs_->Arm(FaultFileSystem::Fault::kNoSpace);
  ASSERT_FALSE(WriteUntilRefused().ok());
  // Still armed: a resume cannot flush, so every later write fails too.
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(Persist(NextBatch(4)).code(), Code::kResourceExhausted);
  }
}

TEST_F(EventStoreFaultTest, AnIoErrorIsFatalToTheInstanceEvenAfterTheDiskRecovers) {
  fs_->Arm(FaultFileSystem::Fault::kIoError);
  Status failed = WriteUntilRefused();
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.code(), Code::kIoError) << failed.ToString();
  fs_->Disarm();
  // RocksDB keeps a fatal background error until the instance is reopened.
  EXPECT_EQ(Persist(NextBatch(4)).code(), Code::kIoError);
}

}  // namespace
}  // namespace sluice::eventstore
