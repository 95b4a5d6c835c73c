// The schema store across restarts (reuse of the stored schema, fresh
// bootstrap outside its range, damaged files) and on bad input (a job row
// that does not decode, a failed subscription, failures while opening).
#include <gtest/gtest.h>
#include <rocksdb/db.h>

#include <filesystem>
#include <fstream>

#include "common/clock.h"
#include "common/test_util.h"
#include "schemastore/disk.h"
#include "schemastore/schema_store.h"
#include "schemastore/test_util.h"

namespace sluice::schemastore {
namespace {

using model::ActionType;
using testing::DoneJob;
using testing::JobRow;

constexpr int64_t kDb = 2;
constexpr int64_t kT1 = 10;

class SchemaStorePersistTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/schemastore_persist_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(dir_);
    meta_ = std::make_unique<testing::FakeMetaReader>(
        testing::Snapshot({testing::Db(kDb, "test")}, {{kDb, testing::Table(kT1, "t1")}}));
  }
  void TearDown() override {
    if (store_ != nullptr) store_->Stop();
  }

  Result<std::unique_ptr<SchemaStore>> Open(
      Ts start, Clock* clock = Clock::Real(),
      std::chrono::milliseconds persist = std::chrono::milliseconds(1000)) {
    SchemaStoreOptions options;
    options.data_dir = dir_;
    options.start_ts = start;
    options.clock = clock;
    options.persist_interval = persist;
    return SchemaStore::Open(options, meta_.get(), &sub_);
  }
  void OpenOk(Ts start) {
    auto store = Open(start);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(store).value();
  }
  void Resolve(uint64_t ts) {
    ASSERT_TRUE(sub_.Resolve(Ts(ts)));
    ASSERT_TRUE(PollUntil([&] { return store_->resolved_ts() >= Ts(ts); }));
  }
  // Creates t3 (id 30) at 110 and adds a column to it at 120.
  void RunTwoJobs() {
    model::Job create = DoneJob(51, ActionType::kCreateTable, kDb, 30);
    create.binlog->table_info = testing::Table(30, "t3");
    model::Job add = DoneJob(52, ActionType::kAddColumn, kDb, 30);
    add.binlog->table_info = testing::WithColumn(testing::Table(30, "t3"), "x");
    ASSERT_TRUE(sub_.Deliver({JobRow(create, Ts(110)), JobRow(add, Ts(120))}));
    Resolve(130);
  }
  std::vector<int64_t> JobIds(Ts from, Ts to) {
    auto events = store_->AllDdlEvents(from, to);
    EXPECT_TRUE(events.ok()) << events.status().ToString();
    std::vector<int64_t> ids;
    if (events.ok()) {
      for (const auto& e : *events) ids.push_back(e->job_id);
    }
    return ids;
  }

  std::string dir_;
  testing::FakeSubscriber sub_;
  std::unique_ptr<testing::FakeMetaReader> meta_;
  std::unique_ptr<SchemaStore> store_;
};

TEST_F(SchemaStorePersistTest, ReopenInsideTheStoredRangeReusesIt) {
  OpenOk(Ts(100));
  RunTwoJobs();
  store_->Stop();
  EXPECT_EQ(sub_.unsubscribes(), 1);
  store_.reset();

  OpenOk(Ts(115));
  EXPECT_TRUE(store_->reused_disk());
  EXPECT_EQ(meta_->reads(), 1);  // No new snapshot.
  EXPECT_EQ(sub_.start_ts(), Ts(130));
  EXPECT_EQ(store_->snapshot_ts(), Ts(100));
  EXPECT_EQ(store_->resolved_ts(), Ts(130));
  EXPECT_EQ(JobIds(Ts(100), Ts(130)), (std::vector<int64_t>{51, 52}));
  EXPECT_EQ((*store_->GetTableSchema(30, Ts(119)))->columns().size(), 2u);
  EXPECT_EQ((*store_->GetTableSchema(30, Ts(120)))->columns().size(), 3u);
  EXPECT_EQ((*store_->GetTableSchema(30, Ts(120)))->version(), Ts(120));
  EXPECT_EQ(store_->GetTableSchema(30, Ts(109)).status().code(), Code::kNotFound);

  // And it goes on from there.
  model::Job drop = DoneJob(53, ActionType::kDropTable, kDb, 30);
  ASSERT_TRUE(sub_.Deliver({JobRow(drop, Ts(140))}));
  Resolve(150);
  EXPECT_EQ(JobIds(Ts(130), Ts(150)), std::vector<int64_t>{53});
  EXPECT_EQ(store_->GetTableSchema(30, Ts(140)).status().code(), Code::kNotFound);
}

TEST_F(SchemaStorePersistTest, ReopenOutsideTheStoredRangeBootstrapsAgain) {
  OpenOk(Ts(100));
  RunTwoJobs();
  store_.reset();  // The destructor stops.

  OpenOk(Ts(200));  // Above the stored resolved ts 130: a gap.
  EXPECT_FALSE(store_->reused_disk());
  EXPECT_EQ(meta_->reads(), 2);
  EXPECT_EQ(sub_.start_ts(), Ts(200));
  EXPECT_EQ(store_->snapshot_ts(), Ts(200));
  EXPECT_EQ(JobIds(Ts(200), Ts(200)), std::vector<int64_t>{});
  store_.reset();

  OpenOk(Ts(90));  // Below the stored snapshot ts 200.
  EXPECT_FALSE(store_->reused_disk());
  EXPECT_EQ(meta_->reads(), 3);
  EXPECT_EQ(store_->snapshot_ts(), Ts(90));
  EXPECT_EQ(store_->GetTableSchema(kT1, Ts(90)).status().code(), Code::kOk);
}

TEST_F(SchemaStorePersistTest, StopWritesTheResolvedTs) {
  ManualClock clock;
  auto store = Open(Ts(100), &clock, std::chrono::milliseconds(3600 * 1000));
  ASSERT_TRUE(store.ok());
  store_ = std::move(store).value();
  Resolve(150);  // No job: not written until the interval passes or Stop.
  store_.reset();
  OpenOk(Ts(150));
  EXPECT_TRUE(store_->reused_disk());
  EXPECT_EQ(store_->resolved_ts(), Ts(150));
}

TEST_F(SchemaStorePersistTest, DamagedStoredJobIsCorruption) {
  OpenOk(Ts(100));
  RunTwoJobs();
  store_.reset();
  {
    rocksdb::DB* raw = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(rocksdb::Options(), dir_ + "/schema_store", &raw).ok());
    std::unique_ptr<rocksdb::DB> db(raw);
    ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), SchemaDisk::JobKey(Ts(120)), "{\"id\":").ok());
  }
  auto store = Open(Ts(120));
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), Code::kCorruption) << store.status().ToString();
}

TEST_F(SchemaStorePersistTest, DamagedResolvedTsIsCorruption) {
  OpenOk(Ts(100));
  store_.reset();
  {
    rocksdb::DB* raw = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(rocksdb::Options(), dir_ + "/schema_store", &raw).ok());
    std::unique_ptr<rocksdb::DB> db(raw);
    ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), SchemaDisk::ResolvedKey(), "short").ok());
  }
  auto store = Open(Ts(100));
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), Code::kCorruption) << store.status().ToString();
}

TEST_F(SchemaStorePersistTest, GarbageFilesAreATypedError) {
  OpenOk(Ts(100));
  store_.reset();
  {
    std::ofstream current(dir_ + "/schema_store/CURRENT", std::ios::trunc);
    current << "MANIFEST-garbage\n";
  }
  auto store = Open(Ts(100));
  ASSERT_FALSE(store.ok());
  EXPECT_TRUE(store.status().code() == Code::kCorruption || store.status().code() == Code::kIoError)
      << store.status().ToString();
}

TEST_F(SchemaStorePersistTest, BadJobRowStopsTheStoreAtItsCommitTs) {
  OpenOk(Ts(100));
  model::Job before = DoneJob(51, ActionType::kAddColumn, kDb, kT1);
  before.binlog->table_info = testing::WithColumn(testing::Table(kT1, "t1"), "x");
  model::Job after = DoneJob(53, ActionType::kDropTable, kDb, kT1);
  ASSERT_TRUE(sub_.Deliver(
      {JobRow(before, Ts(110)), testing::BadJobRow(52, Ts(120)), JobRow(after, Ts(130))}));
  EXPECT_EQ(sub_.persisted(), 1);
  ASSERT_TRUE(PollUntil([&] { return !store_->status().ok(); }));
  EXPECT_EQ(store_->status().code(), Code::kCorruption);
  EXPECT_EQ(store_->failed_ts(), Ts(120));
  ASSERT_TRUE(sub_.Resolve(Ts(200)));
  ASSERT_TRUE(PollUntil([&] { return store_->resolved_ts() == Ts(119); }));
  EXPECT_EQ(JobIds(Ts(100), Ts(119)), std::vector<int64_t>{51});
  EXPECT_EQ(store_->GetTableSchema(kT1, Ts(119)).status().code(), Code::kOk);
  EXPECT_EQ(store_->GetTableSchema(kT1, Ts(120)).status().code(), Code::kCorruption);
  EXPECT_EQ(store_->AllDdlEvents(Ts(100), Ts(150)).status().code(), Code::kCorruption);
  EXPECT_EQ(store_->stats().bad_rows, 1u);
  // Stays there.
  ASSERT_TRUE(sub_.Resolve(Ts(300)));
  EXPECT_FALSE(
      PollUntil([&] { return store_->resolved_ts() > Ts(119); }, std::chrono::milliseconds(100)));
}

TEST_F(SchemaStorePersistTest, FailedSubscriptionStopsTheStore) {
  OpenOk(Ts(100));
  Resolve(110);
  ASSERT_TRUE(sub_.Fail(Incompatible("TiKV refuses the subscription")));
  ASSERT_TRUE(PollUntil([&] { return !store_->status().ok(); }));
  EXPECT_EQ(store_->status().code(), Code::kIncompatible);
  EXPECT_EQ(store_->failed_ts(), Ts(111));
  EXPECT_EQ(store_->resolved_ts(), Ts(110));
  EXPECT_EQ(store_->GetTableSchema(kT1, Ts(111)).status().code(), Code::kIncompatible);
  EXPECT_TRUE(store_->GetTableSchema(kT1, Ts(110)).ok());
}

TEST_F(SchemaStorePersistTest, OpenFailsCleanlyOnBadUpstream) {
  sub_.FailNextSubscribe(Unavailable("puller stopped"));
  auto store = Open(Ts(100));
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), Code::kUnavailable);

  EXPECT_EQ(sub_.subscribes(), 0);

  // Outside what the failed open stored (100): a new snapshot is needed.
  meta_->FailWith(Status(Code::kGcSafepointExceeded, "below the GC safepoint"));
  store = Open(Ts(200));
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), Code::kGcSafepointExceeded);

  meta_->FailWith(std::nullopt);
  kvclient::MetaSnapshot no_job_table = testing::Snapshot({testing::Db(kDb, "test")}, {});
  no_job_table.tables.clear();
  meta_->Set(no_job_table);
  store = Open(Ts(300));
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), Code::kNotFound);
  EXPECT_EQ(sub_.subscribes(), 0);
  EXPECT_EQ(meta_->reads(), 3);
}

}  // namespace
}  // namespace sluice::schemastore
