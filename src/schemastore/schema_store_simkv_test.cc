// The schema store behind the real log puller, against a simkv cluster
// running simkv's TiDB-like workload (DML with DDL every few transactions:
// databases, tables, partitioned tables, columns, indexes, truncate,
// rename, drop; each DDL through TiDB's intermediate schema states). For
// many ts, the store's tables and schemas must equal simkv's own catalog
// read from the meta keys, and its DDL events must be exactly the
// workload's jobs. Halfway, the store is closed and
// reopened on its stored state.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "common/test_util.h"
#include "logpuller/puller_test_util.h"
#include "schemastore/schema_store.h"
#include "simkv/tidb_tables.h"
#include "simkv/workload.h"
#include "simkv/workload_test_util.h"

namespace sluice::schemastore {
namespace {

using logpuller::testing::PullerEnv;

constexpr auto kWait = std::chrono::seconds(60);

// Reads the meta keys straight from simkv's MVCC store.
class SimMetaReader final : public kvclient::MetaReader {
 public:
  explicit SimMetaReader(const simkv::MvccStore* store) : store_(store) {}
  Result<kvclient::MetaSnapshot> Read(Ts ts) override {
    ASSIGN_OR_RETURN(simkv::testutil::MetaSnapshot snap,
                     simkv::testutil::ReadMetaSnapshot(*store_, ts));
    kvclient::MetaSnapshot out;
    out.ts = ts;
    out.schema_version = snap.schema_version;
    out.dbs = std::move(snap.dbs);
    out.tables = std::move(snap.tables);
    return out;
  }

 private:
  const simkv::MvccStore* const store_;
};

// What simkv's catalog says at ts: user physical tables with their schema.
struct Expected {
  std::vector<event::TableRef> refs;
  std::map<int64_t, const model::TableInfo*> infos;
  simkv::testutil::MetaSnapshot snap;
};

Result<std::unique_ptr<Expected>> ExpectedAt(const simkv::MvccStore& store, Ts ts) {
  auto e = std::make_unique<Expected>();
  ASSIGN_OR_RETURN(e->snap, simkv::testutil::ReadMetaSnapshot(store, ts));
  for (const auto& [id, entry] : e->snap.tables) {
    if (entry.first == simkv::kMysqlDbId) continue;
    const model::DBInfo& db = e->snap.dbs.at(entry.first);
    for (int64_t pid : entry.second.PhysicalTableIds()) {
      e->refs.push_back({db.id, pid, db.name.original, entry.second.name.original});
      e->infos[pid] = &entry.second;
    }
  }
  std::sort(e->refs.begin(), e->refs.end(), [](const event::TableRef& a, const event::TableRef& b) {
    return a.table_id < b.table_id;
  });
  return e;
}

class SchemaStoreSimkvTest : public ::testing::Test {
 protected:
  void SetUp() override {
    logpuller::testing::PullerEnvOptions options;
    options.num_stores = 2;
    auto env = PullerEnv::Start(options);
    ASSERT_TRUE(env.ok()) << env.status().ToString();
    env_ = std::move(env).value();
    dir_ = ::testing::TempDir() + "/schemastore_simkv";
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override {
    store_.reset();
    if (env_ != nullptr) env_->Stop();
  }

  void OpenStore(Ts start) {
    SchemaStoreOptions options;
    options.data_dir = dir_;
    options.start_ts = start;
    auto store = SchemaStore::Open(options, meta_.get(), env_->client.get());
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(store).value();
  }
  void WaitResolved(Ts ts) {
    ASSERT_TRUE(
        PollUntil([&] { return store_->resolved_ts() >= ts || !store_->status().ok(); }, kWait));
    ASSERT_TRUE(store_->status().ok()) << store_->status().ToString();
  }

  std::unique_ptr<PullerEnv> env_;
  std::unique_ptr<SimMetaReader> meta_;
  std::string dir_;
  std::unique_ptr<SchemaStore> store_;
};

TEST_F(SchemaStoreSimkvTest, SchemaAtEveryTsMatchesTheUpstreamCatalog) {
  simkv::WorkloadOptions options;
  options.seed = 7;
  options.narrow_tables = 2;
  options.clustered_table = true;
  options.partitioned_tables = true;
  options.ddl_every = 2;
  options.dml.rows_per_txn = 3;
  using simkv::DdlKind;
  for (DdlKind kind :
       {DdlKind::kCreateDatabase, DdlKind::kCreateTable, DdlKind::kAddColumn, DdlKind::kDropColumn,
        DdlKind::kModifyColumn, DdlKind::kAddIndex, DdlKind::kDropIndex, DdlKind::kTruncateTable,
        DdlKind::kRenameTable, DdlKind::kDropTable, DdlKind::kDropDatabase}) {
    simkv::DdlRequest request;
    request.kind = kind;
    options.ddl_list.push_back(request);
  }
  simkv::Workload workload(&env_->cluster->mvcc(), &env_->cluster->tso(), options);
  ASSERT_TRUE(workload.Setup().ok());
  meta_ = std::make_unique<SimMetaReader>(&env_->cluster->mvcc());
  auto start = env_->pd->GetTs();
  ASSERT_TRUE(start.ok());
  OpenStore(start.value());

  for (int i = 0; i < 40; ++i) ASSERT_TRUE(workload.Step().ok());
  // Close and reopen on the stored state, then go on.
  auto middle = env_->pd->GetTs();
  ASSERT_TRUE(middle.ok());
  WaitResolved(middle.value());
  const Ts stored = store_->resolved_ts();
  store_.reset();
  OpenStore(stored);
  ASSERT_TRUE(store_->reused_disk());
  for (int i = 0; i < 60; ++i) ASSERT_TRUE(workload.Step().ok());
  auto end = env_->pd->GetTs();
  ASSERT_TRUE(end.ok());
  WaitResolved(end.value());

  // The events are the workload's jobs after the start, in order.
  std::vector<std::pair<int64_t, model::ActionType>> want_jobs;
  for (const model::Job& job : workload.jobs()) {
    if (job.binlog->finished_ts > start->value()) want_jobs.emplace_back(job.id, job.type);
  }
  auto events = store_->AllDdlEvents(start.value(), end.value());
  ASSERT_TRUE(events.ok()) << events.status().ToString();
  std::vector<std::pair<int64_t, model::ActionType>> got_jobs;
  std::set<model::ActionType> types;
  for (const auto& ev : *events) {
    got_jobs.emplace_back(ev->job_id, ev->type);
    types.insert(ev->type);
  }
  EXPECT_EQ(got_jobs, want_jobs);
  EXPECT_GE(got_jobs.size(), 20u);
  for (model::ActionType type : {model::ActionType::kCreateSchema, model::ActionType::kDropSchema,
                                 model::ActionType::kCreateTable, model::ActionType::kDropTable,
                                 model::ActionType::kTruncateTable, model::ActionType::kRenameTable,
                                 model::ActionType::kAddColumn, model::ActionType::kDropColumn}) {
    EXPECT_EQ(types.count(type), 1u) << model::ActionTypeName(type);
  }

  // Each event reaches the tables it blocks, and the table-trigger
  // dispatcher when it blocks more than tables.
  for (const auto& ev : *events) {
    SCOPED_TRACE("job " + std::to_string(ev->job_id));
    const Ts before(ev->finished_ts.value() - 1);
    for (int64_t id : ev->blocked.table_ids) {
      auto seen = store_->TableDdlEvents(id, before, ev->finished_ts);
      ASSERT_TRUE(seen.ok());
      EXPECT_EQ(seen->size(), 1u) << "table " << id;
    }
    const bool trigger =
        ev->blocked.influence != event::InfluenceType::kNormal ||
        std::count(ev->blocked.table_ids.begin(), ev->blocked.table_ids.end(), kDdlSpanTableId) > 0;
    auto seen = store_->TableDdlEvents(kDdlSpanTableId, before, ev->finished_ts);
    ASSERT_TRUE(seen.ok());
    EXPECT_EQ(seen->size(), trigger ? 1u : 0u);
  }

  // Around every DDL, between DDLs and at both ends: the same tables and
  // schemas as simkv's meta keys at the last finished DDL at or below the ts
  // (or at the start). In between, the meta keys also show the job's
  // intermediate schema states, which no consumer of Done jobs sees.
  std::vector<Ts> samples = {start.value(), stored, end.value()};
  Ts previous = start.value();
  for (const auto& ev : *events) {
    samples.push_back(Ts(previous.value() + (ev->finished_ts.value() - previous.value()) / 2));
    samples.push_back(Ts(ev->finished_ts.value() - 1));
    samples.push_back(ev->finished_ts);
    samples.push_back(Ts(ev->finished_ts.value() + 1));
    previous = ev->finished_ts;
  }
  std::set<int64_t> every_id;
  std::vector<std::unique_ptr<Expected>> expected;
  for (Ts ts : samples) {
    Ts finished = start.value();
    for (const auto& ev : *events) {
      if (ev->finished_ts <= ts) finished = ev->finished_ts;
    }
    auto e = ExpectedAt(env_->cluster->mvcc(), finished);
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    for (const auto& ref : (*e)->refs) every_id.insert(ref.table_id);
    expected.push_back(std::move(e).value());
  }
  size_t compared = 0;
  for (size_t i = 0; i < samples.size(); ++i) {
    const Ts ts = samples[i];
    const Expected& e = *expected[i];
    SCOPED_TRACE("ts " + std::to_string(ts.value()));
    auto tables = store_->AllPhysicalTables(ts);
    ASSERT_TRUE(tables.ok()) << tables.status().ToString();
    EXPECT_EQ(*tables, e.refs);
    for (int64_t id : every_id) {
      auto schema = store_->GetTableSchema(id, ts);
      auto want = e.infos.find(id);
      if (want == e.infos.end()) {
        EXPECT_EQ(schema.status().code(), Code::kNotFound) << "table " << id;
        continue;
      }
      ASSERT_TRUE(schema.ok()) << "table " << id << ": " << schema.status().ToString();
      if (!((*schema)->info() == *want->second)) {
        ADD_FAILURE() << "table " << id << "\nstore:    " << model::ToJson((*schema)->info())
                      << "\nupstream: " << model::ToJson(*want->second);
      }
      EXPECT_LE((*schema)->version(), ts);
      ++compared;
    }
  }
  EXPECT_GT(compared, 100u);
  EXPECT_TRUE(store_->status().ok());
}

}  // namespace
}  // namespace sluice::schemastore
