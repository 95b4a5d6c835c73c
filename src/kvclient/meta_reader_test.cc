// KvMetaReader against a real in-process simkv cluster: the schema the
// workload's DDL wrote, read over KvScan/KvGet at several ts and compared with
// simkv's own view of its MVCC store, through splits, leader moves, a store
// going down, locks, GC and corrupt meta values.
#include "kvclient/meta_reader.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "codec/metakey.h"
#include "common/lifecycle.h"
#include "common/test_util.h"
#include "kvclient/kvclient_test_util.h"
#include "simkv/workload_test_util.h"

namespace sluice::kvclient::testing {
namespace {

using simkv::DdlKind;
using simkv::DdlRequest;

constexpr auto kWait = std::chrono::seconds(15);

// One DDL statement; empty fields are the workload's choice.
DdlRequest Ddl(DdlKind kind, std::string database, std::string table, std::string name,
               std::string target_database = "") {
  DdlRequest request;
  request.kind = kind;
  request.database = std::move(database);
  request.table = std::move(table);
  request.name = std::move(name);
  request.target_database = std::move(target_database);
  return request;
}

const model::DBInfo* DbNamed(const MetaSnapshot& snapshot, std::string_view name) {
  for (const auto& [id, db] : snapshot.dbs) {
    if (db.name.lower == name) return &db;
  }
  return nullptr;
}

const model::TableInfo* TableNamed(const MetaSnapshot& snapshot, std::string_view db,
                                   std::string_view table) {
  const model::DBInfo* info = DbNamed(snapshot, db);
  if (info == nullptr) return nullptr;
  for (const auto& [id, entry] : snapshot.tables) {
    if (entry.first == info->id && entry.second.name.lower == table) return &entry.second;
  }
  return nullptr;
}

class MetaReaderTest : public KvClientTest {
 protected:
  void SetUp() override {
    StartCluster();
    StartWorkload();
  }

  // Reads the schema at `ts` and checks it equals what simkv's store holds.
  MetaSnapshot ExpectMatchesSimkv(Ts ts, MetaReader* reader = nullptr) {
    if (reader == nullptr) reader = meta_.get();
    Result<MetaSnapshot> got = reader->Read(ts);
    EXPECT_TRUE(got.ok()) << got.status().ToString();
    if (!got.ok()) return {};
    Result<simkv::testutil::MetaSnapshot> want =
        simkv::testutil::ReadMetaSnapshot(cluster_->mvcc(), ts);
    EXPECT_TRUE(want.ok()) << want.status().ToString();
    if (!want.ok()) return {};
    EXPECT_EQ(got->ts, ts);
    EXPECT_EQ(got->schema_version, want->schema_version);
    EXPECT_EQ(got->dbs, want->dbs);
    EXPECT_EQ(got->tables, want->tables);
    return std::move(got).value();
  }

  int64_t WorkloadDbId() {
    std::vector<simkv::WorkloadTable> tables = workload_->Tables();
    EXPECT_FALSE(tables.empty());
    return tables.empty() ? 0 : tables.front().db_id;
  }

  // Writes `value` at meta hash `key` field `field`, bypassing the workload.
  void PutMetaField(const std::string& key, const std::string& field, const std::string& value) {
    Result<simkv::Txn> txn = cluster_->txn().Begin();
    ASSERT_TRUE(txn.ok());
    txn->Put(codec::EncodeMetaHashFieldKey(key, field), value);
    ASSERT_TRUE(cluster_->txn().Commit(*txn).ok());
  }
};

TEST_F(MetaReaderTest, ReadsTheSchemaAtSeveralTs) {
  const Ts after_setup = Now();
  RunDdl(Ddl(DdlKind::kCreateDatabase, "", "", "shop"));
  RunDdl(Ddl(DdlKind::kCreateTable, "shop", "", "orders"));
  RunDdl(Ddl(DdlKind::kCreateTable, "shop", "", "items"));
  const Ts after_create = Now();
  RunDdl(Ddl(DdlKind::kAddColumn, "shop", "orders", "note"));
  RunDdl(Ddl(DdlKind::kRenameTable, "shop", "items", "goods", "workload"));
  RunDdl(Ddl(DdlKind::kDropTable, "workload", "t1", ""));
  const Ts after_alter = Now();
  RunDdl(Ddl(DdlKind::kDropDatabase, "shop", "", ""));
  const Ts after_drop = Now();

  MetaSnapshot setup = ExpectMatchesSimkv(after_setup);
  EXPECT_NE(DbNamed(setup, "mysql"), nullptr);
  EXPECT_NE(TableNamed(setup, "mysql", "tidb_ddl_job"), nullptr);
  EXPECT_NE(TableNamed(setup, "workload", "t1"), nullptr);
  EXPECT_EQ(DbNamed(setup, "shop"), nullptr);

  MetaSnapshot created = ExpectMatchesSimkv(after_create);
  EXPECT_GT(created.schema_version, setup.schema_version);
  ASSERT_NE(TableNamed(created, "shop", "orders"), nullptr);
  EXPECT_NE(TableNamed(created, "shop", "items"), nullptr);

  MetaSnapshot altered = ExpectMatchesSimkv(after_alter);
  const model::TableInfo* orders = TableNamed(altered, "shop", "orders");
  ASSERT_NE(orders, nullptr);
  EXPECT_EQ(orders->columns.size(), TableNamed(created, "shop", "orders")->columns.size() + 1);
  EXPECT_EQ(TableNamed(altered, "shop", "items"), nullptr);
  EXPECT_NE(TableNamed(altered, "workload", "goods"), nullptr);
  EXPECT_EQ(TableNamed(altered, "workload", "t1"), nullptr);

  MetaSnapshot dropped = ExpectMatchesSimkv(after_drop);
  EXPECT_EQ(DbNamed(dropped, "shop"), nullptr);
  EXPECT_EQ(TableNamed(dropped, "shop", "orders"), nullptr);
  // Paged: the hashes took several KvScans of two keys each.
  EXPECT_GT(reader_->stats().rpcs, 8u);
}

TEST_F(MetaReaderTest, RegionsSplitInsideTheMetaRangeAreFollowed) {
  RunDdl(Ddl(DdlKind::kCreateDatabase, "", "", "shop"));
  RunDdl(Ddl(DdlKind::kCreateTable, "shop", "", "orders"));
  const Ts ts = Now();
  ExpectMatchesSimkv(ts);  // The cache now holds the single meta region.

  // Inside the DBs hash, between two DB hashes, and inside a DB hash.
  const std::string db_key = "DB:" + std::to_string(WorkloadDbId());
  for (const std::string& split :
       {codec::EncodeMetaHashFieldKey("DBs", "DB:2"), codec::EncodeMetaStringKey("DB:2"),
        codec::EncodeMetaHashFieldKey(db_key, "Table:2")}) {
    auto parts = cluster_->Split(RegionOf(split).id, split);
    ASSERT_TRUE(parts.ok()) << parts.status().ToString();
  }
  const uint64_t errors_before = reader_->stats().region_errors;
  ExpectMatchesSimkv(ts);
  EXPECT_GT(reader_->stats().region_errors, errors_before);  // The stale cache was refused.
  EXPECT_GE(cache_->size(), 4u);
}

TEST_F(MetaReaderTest, LeaderTransferIsFollowed) {
  const Ts ts = Now();
  ExpectMatchesSimkv(ts);
  simkv::RegionInfo region = RegionOf("m");
  ASSERT_TRUE(cluster_->TransferLeader(region.id, OtherPeerStore(region, region.leader)).ok());
  const uint64_t errors_before = reader_->stats().region_errors;
  ExpectMatchesSimkv(ts);
  EXPECT_GT(reader_->stats().region_errors, errors_before);  // NotLeader, then the new leader.
}

TEST_F(MetaReaderTest, StoreDownDuringAReadRetriesUntilANewLeaderServes) {
  const Ts ts = Now();
  ExpectMatchesSimkv(ts);
  simkv::RegionInfo region = RegionOf("m");
  ASSERT_TRUE(cluster_->StoreDown(region.leader).ok());
  std::optional<Result<MetaSnapshot>> result;
  OwnedThread reader;
  reader.Start("meta-read", [&](StopToken) { result.emplace(meta_->Read(ts)); });
  ASSERT_TRUE(PollUntil([&] { return reader_->stats().rpc_failures > 0; }, kWait));
  ASSERT_TRUE(cluster_->TransferLeader(region.id, OtherPeerStore(region, region.leader)).ok());
  reader.Join();
  ASSERT_TRUE(result.has_value());
  ASSERT_TRUE(result->ok()) << result->status().ToString();
  ExpectMatchesSimkv(ts);
}

TEST_F(MetaReaderTest, StoreDownIsUnavailableAtTheDeadline) {
  const Ts ts = Now();
  SnapshotReaderOptions options = ReaderOptions();
  options.timeout = std::chrono::milliseconds(800);
  std::unique_ptr<SnapshotReader> reader = NewReader(options);
  KvMetaReader meta(pd_.get(), reader.get());
  ExpectMatchesSimkv(ts, &meta);
  ASSERT_TRUE(cluster_->StoreDown(RegionOf("m").leader).ok());
  Result<MetaSnapshot> result = meta.Read(ts);
  EXPECT_EQ(result.status().code(), Code::kUnavailable) << result.status().ToString();
  EXPECT_GT(reader->stats().rpc_failures, 0u);
}

TEST_F(MetaReaderTest, AHeldLockTimesOutUnlessReleased) {
  const std::string key = codec::EncodeMetaStringKey("SchemaVersionKey");
  const Ts lock_ts = Now();
  ASSERT_TRUE(
      cluster_->mvcc().Prewrite({simkv::Mutation::Put(key, "99")}, key, lock_ts, 60000).ok());
  const Ts ts = Now();

  SnapshotReaderOptions options = ReaderOptions();
  // Long enough for several lock waits even under a sanitizer beside other
  // tests (600 ms allowed only one there).
  options.timeout = std::chrono::milliseconds(1500);
  std::unique_ptr<SnapshotReader> short_reader = NewReader(options);
  KvMetaReader short_meta(pd_.get(), short_reader.get());
  Result<MetaSnapshot> timed_out = short_meta.Read(ts);
  EXPECT_EQ(timed_out.status().code(), Code::kTimeout) << timed_out.status().ToString();
  EXPECT_GT(short_reader->stats().lock_waits, 1u);

  // Released while a reader waits: committed above the read ts, so the
  // read sees the value from before.
  std::optional<Result<MetaSnapshot>> result;
  OwnedThread reader;
  reader.Start("meta-read", [&](StopToken) { result.emplace(meta_->Read(ts)); });
  ASSERT_TRUE(PollUntil([&] { return reader_->stats().lock_waits > 0; }, kWait));
  ASSERT_TRUE(cluster_->mvcc().Commit(std::vector<std::string>{key}, lock_ts, Now()).ok());
  reader.Join();
  ASSERT_TRUE(result.has_value() && result->ok()) << result->status().ToString();
  EXPECT_NE((*result)->schema_version, 99);
  ExpectMatchesSimkv(ts);
  EXPECT_EQ(meta_->Read(Now())->schema_version, 99);
}

TEST_F(MetaReaderTest, CorruptMetaValuesAreCorruption) {
  const Ts good = Now();
  PutMetaField("DBs", "DB:777", "{not json");
  Result<MetaSnapshot> bad_json = meta_->Read(Now());
  EXPECT_EQ(bad_json.status().code(), Code::kCorruption) << bad_json.status().ToString();
  ExpectMatchesSimkv(good);  // Below the corrupt write nothing changed.

  PutMetaField("DBs", "DB:777", R"({"id":778,"db_name":{"O":"x","L":"x"}})");
  Result<MetaSnapshot> wrong_id = meta_->Read(Now());
  EXPECT_EQ(wrong_id.status().code(), Code::kCorruption) << wrong_id.status().ToString();

  PutMetaField("DBs", "DB:777", R"({"id":777,"db_name":{"O":"x","L":"x"}})");
  Result<MetaSnapshot> fixed = meta_->Read(Now());
  ASSERT_TRUE(fixed.ok()) << fixed.status().ToString();
  EXPECT_NE(DbNamed(*fixed, "x"), nullptr);

  // Auto-id fields of a database hash are skipped; a bad table is not.
  const std::string db_key = "DB:" + std::to_string(WorkloadDbId());
  Result<MetaSnapshot> before_tid = meta_->Read(Now());
  ASSERT_TRUE(before_tid.ok()) << before_tid.status().ToString();
  PutMetaField(db_key, "TID:5", "12345");
  PutMetaField(db_key, "IID:5", "7");
  Result<MetaSnapshot> with_tid = meta_->Read(Now());
  ASSERT_TRUE(with_tid.ok()) << with_tid.status().ToString();
  EXPECT_EQ(with_tid->tables, before_tid->tables);
  PutMetaField(db_key, "Table:5", R"({"id":5,"name":)");
  Result<MetaSnapshot> bad_table = meta_->Read(Now());
  EXPECT_EQ(bad_table.status().code(), Code::kCorruption) << bad_table.status().ToString();
  PutMetaField("DBs", "DB:x9", "{}");
  EXPECT_EQ(meta_->Read(Now()).status().code(), Code::kCorruption);
}

TEST_F(MetaReaderTest, TsBelowTheGcSafePointIsRefused) {
  const Ts old = Now();
  RunDdl(Ddl(DdlKind::kCreateDatabase, "", "", "shop"));
  Result<Ts> safe_point = cluster_->RunGc();
  ASSERT_TRUE(safe_point.ok()) << safe_point.status().ToString();
  ASSERT_LT(old, *safe_point);
  Result<MetaSnapshot> result = meta_->Read(old);
  EXPECT_EQ(result.status().code(), Code::kGcSafepointExceeded) << result.status().ToString();
  EXPECT_EQ(reader_->stats().rpcs, 0u);  // Refused before reading, as client-go does.
  ExpectMatchesSimkv(*safe_point);
}

}  // namespace
}  // namespace sluice::kvclient::testing
