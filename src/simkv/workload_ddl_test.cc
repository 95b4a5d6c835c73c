// DDL as the workload writes it: job rows in mysql.tidb_ddl_job, meta keys,
// and what the schema changes do to the rows written afterwards.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "codec/metakey.h"
#include "codec/model/job_args.h"
#include "codec/mysql_type.h"
#include "codec/rowcodec_v2.h"
#include "simkv/ground_truth.h"
#include "simkv/mvcc_store.h"
#include "simkv/sql_render.h"
#include "simkv/tidb_tables.h"
#include "simkv/workload.h"
#include "simkv/workload_test_util.h"

namespace sluice::simkv {
namespace {

using model::ActionType;
using model::JobState;
using model::SchemaState;

struct Harness {
  Harness() { store.AddObserver(&truth); }
  ~Harness() { store.RemoveObserver(&truth); }

  Ts Now() { return tso->Allocate().value(); }
  testutil::MetaSnapshot Snapshot(Ts ts) {
    auto snap = testutil::ReadMetaSnapshot(store, ts);
    EXPECT_TRUE(snap.ok()) << snap.status().ToString();
    return snap.ok() ? std::move(snap).value() : testutil::MetaSnapshot{};
  }

  MvccStore store;
  GroundTruth truth;
  std::unique_ptr<TsoAllocator> tso = testutil::FixedTso();
};

WorkloadOptions Small() {
  WorkloadOptions o;
  o.narrow_tables = 2;
  o.kitchen_sink_table = false;
  o.dml.key_space = 50;
  o.record_intents = true;
  return o;
}

void Steps(Workload& w, int n) {
  for (int i = 0; i < n; ++i) ASSERT_TRUE(w.Step().ok()) << "step " << i;
}

model::Job RunDdl(Workload& w, DdlRequest request) {
  auto job = w.RunDdl(request);
  EXPECT_TRUE(job.ok()) << DdlKindName(request.kind) << ": " << job.status().ToString();
  return job.ok() ? std::move(job).value() : model::Job{};
}

DdlRequest Req(DdlKind kind, std::string table = "", std::string name = "",
               std::string column = "") {
  DdlRequest r;
  r.kind = kind;
  r.table = std::move(table);
  r.name = std::move(name);
  r.column = std::move(column);
  return r;
}

// One version of a job row, decoded.
struct JobRowVersion {
  Ts commit_ts;
  bool deleted = false;
  model::Job job;
  std::vector<codec::Datum> columns;  // All columns of tidb_ddl_job, in order.
};

// Every version of every job row in the ground truth, by job id, decoded
// with the tidb_ddl_job TableInfo read from the meta keys.
std::map<int64_t, std::vector<JobRowVersion>> JobRows(Harness& h) {
  std::map<int64_t, std::vector<JobRowVersion>> out;
  for (const TruthChange& c : h.truth.History(TableId(kDdlJobTableId))) {
    JobRowVersion v;
    v.commit_ts = c.commit_ts;
    int64_t job_id = testutil::HandleOf(c.key).value();
    if (c.kind == WriteKind::kDelete) {
      v.deleted = true;
      out[job_id].push_back(std::move(v));
      continue;
    }
    testutil::MetaSnapshot snap = h.Snapshot(c.commit_ts);
    const model::TableInfo* job_table = snap.ByName("mysql", "tidb_ddl_job");
    EXPECT_NE(job_table, nullptr);
    if (job_table == nullptr) return out;
    auto job = testutil::DecodeJobRow(*job_table, c.key, c.value);
    EXPECT_TRUE(job.ok()) << job.status().ToString();
    v.job = job.value();
    auto specs = testutil::ColumnSpecsOf(*job_table);
    auto key = codec::DecodeRowKey(c.key).value();
    EXPECT_TRUE(codec::DecodeRow(c.value, specs.value(), key.handle, &v.columns).ok());
    for (codec::Datum& d : v.columns) d.MakeOwned();
    out[job_id].push_back(std::move(v));
  }
  return out;
}

TEST(WorkloadDdlTest, EveryActionWritesItsJobRowsLikeTiDB) {
  Harness h;
  WorkloadOptions o = Small();
  o.clustered_table = true;
  Workload w(&h.store, h.tso.get(), o);
  Steps(w, 10);
  int64_t t1_id = w.FindTable("workload", "t1")->info.id;
  int64_t t2_id = w.FindTable("workload", "t2")->info.id;
  int64_t w_db_id = w.FindTable("workload", "t1")->db_id;
  RunDdl(w, Req(DdlKind::kCreateDatabase, "", "extra"));
  DdlRequest range = Req(DdlKind::kCreateTable, "", "r1");
  range.shape = TableShape::kRangePartitioned;
  RunDdl(w, range);
  DdlRequest hash = Req(DdlKind::kCreateTable, "", "h1");
  hash.shape = TableShape::kHashPartitioned;
  RunDdl(w, hash);
  Steps(w, 10);
  RunDdl(w, Req(DdlKind::kAddColumn, "t1", "c_new"));
  RunDdl(w, Req(DdlKind::kModifyColumn, "t1", "", "k"));
  RunDdl(w, Req(DdlKind::kModifyColumn, "t1", "", "c"));
  RunDdl(w, Req(DdlKind::kAddIndex, "t1", "idx_c", "c"));
  Steps(w, 10);
  RunDdl(w, Req(DdlKind::kDropIndex, "t1", "idx_c"));
  RunDdl(w, Req(DdlKind::kDropColumn, "t1", "", "c"));
  RunDdl(w, Req(DdlKind::kTruncateTable, "t2"));
  DdlRequest rename = Req(DdlKind::kRenameTable, "t2", "t2_moved");
  rename.target_database = "extra";
  RunDdl(w, rename);
  RunDdl(w, Req(DdlKind::kDropTable, "h1"));
  Steps(w, 10);
  DdlRequest drop_db = Req(DdlKind::kDropDatabase);
  drop_db.database = "extra";
  RunDdl(w, drop_db);
  Steps(w, 10);

  std::vector<model::Job> jobs = w.jobs();
  // The statements above, in order, each on its target.
  const std::vector<ActionType> kActions = {
      ActionType::kCreateSchema,  ActionType::kCreateTable,  ActionType::kCreateTable,
      ActionType::kAddColumn,     ActionType::kModifyColumn, ActionType::kModifyColumn,
      ActionType::kAddIndex,      ActionType::kDropIndex,    ActionType::kDropColumn,
      ActionType::kTruncateTable, ActionType::kRenameTable,  ActionType::kDropTable,
      ActionType::kDropSchema};
  ASSERT_GE(jobs.size(), kActions.size());
  std::vector<model::Job> tail(jobs.end() - kActions.size(), jobs.end());
  for (size_t i = 0; i < kActions.size(); ++i) EXPECT_EQ(tail[i].type, kActions[i]) << i;
  for (size_t i = 3; i <= 8; ++i) {
    EXPECT_EQ(tail[i].table_id, t1_id) << i;
    EXPECT_EQ(tail[i].binlog->table_info->name.lower, "t1");
  }
  EXPECT_EQ(tail[0].binlog->db_info->name.lower, "extra");
  EXPECT_TRUE(tail[1].binlog->table_info->IsPartitioned());
  EXPECT_EQ(tail[1].binlog->table_info->partition->type, model::PartitionType::kRange);
  EXPECT_EQ(tail[2].binlog->table_info->partition->type, model::PartitionType::kHash);
  EXPECT_NE(tail[1].binlog->table_info->partition->definitions[0].id, 0);
  EXPECT_NE(tail[3].binlog->table_info->FindColumnByName("c_new"), nullptr);
  EXPECT_EQ(tail[4].binlog->table_info->FindColumnByName("k")->type.tp,
            codec::mysql_type::kLonglong);
  EXPECT_EQ(tail[5].binlog->table_info->FindColumnByName("c")->type.flen, 128);
  EXPECT_NE(tail[6].binlog->table_info->FindIndexByName("idx_c"), nullptr);
  EXPECT_EQ(tail[7].binlog->table_info->FindIndexByName("idx_c"), nullptr);
  EXPECT_EQ(tail[8].binlog->table_info->FindColumnByName("c"), nullptr);
  EXPECT_EQ(tail[9].table_id, t2_id);
  EXPECT_NE(tail[9].binlog->table_info->id, t2_id);
  EXPECT_EQ(tail[10].table_id, tail[9].binlog->table_info->id);
  EXPECT_EQ(tail[10].schema_id, tail[0].schema_id);
  EXPECT_EQ(tail[10].binlog->table_info->name.lower, "t2_moved");
  EXPECT_EQ(model::GetRenameTableArgs(tail[10]).value().old_schema_id, w_db_id);
  EXPECT_EQ(model::GetFinishedDroppedIds(tail[11]).value(),
            tail[11].binlog->table_info->PhysicalTableIds());
  EXPECT_EQ(model::GetFinishedDroppedIds(tail[12]).value(),
            std::vector<int64_t>{tail[10].table_id});
  std::map<int64_t, std::vector<JobRowVersion>> rows = JobRows(h);
  ASSERT_EQ(rows.size(), jobs.size());
  for (const model::Job& expected : jobs) {
    SCOPED_TRACE(std::string(model::ActionTypeName(expected.type)));
    const std::vector<JobRowVersion>& versions = rows[expected.id];
    ASSERT_GE(versions.size(), 3u);
    // Queueing, Running..., Done, then the row is deleted.
    EXPECT_EQ(versions.front().job.state, JobState::kQueueing);
    EXPECT_TRUE(versions.back().deleted);
    const JobRowVersion& done = versions[versions.size() - 2];
    ASSERT_EQ(done.job.state, JobState::kDone);
    for (size_t i = 1; i + 2 < versions.size(); ++i) {
      EXPECT_EQ(versions[i].job.state, JobState::kRunning);
    }
    EXPECT_EQ(done.job, expected);
    // Columns: job_id (handle), reorg, schema_ids, table_ids, job_meta, type,
    // processing.
    EXPECT_EQ(done.columns[0], codec::Datum::Int64(expected.id));
    EXPECT_EQ(done.columns[5], codec::Datum::Int64(static_cast<int64_t>(expected.type)));
    EXPECT_EQ(done.columns[6], codec::Datum::Int64(1));
    EXPECT_EQ(versions.front().columns[6], codec::Datum::Int64(0));
    EXPECT_EQ(done.columns[1], codec::Datum::Int64(expected.type == ActionType::kAddIndex ? 1 : 0));
    // binlog: the schema version at the Done commit, FinishedTS before it.
    ASSERT_TRUE(done.job.binlog.has_value());
    testutil::MetaSnapshot snap = h.Snapshot(done.commit_ts);
    EXPECT_EQ(done.job.binlog->schema_version, snap.schema_version);
    EXPECT_GT(done.job.binlog->finished_ts, 0u);
    EXPECT_LT(done.job.binlog->finished_ts, done.commit_ts.value());
    EXPECT_LE(expected.id, snap.global_id);
    bool schema_job =
        expected.type == ActionType::kCreateSchema || expected.type == ActionType::kDropSchema;
    EXPECT_EQ(done.job.binlog->db_info.has_value(), schema_job);
    EXPECT_EQ(done.job.binlog->table_info.has_value(), !schema_job);
  }
}

TEST(WorkloadDdlTest, SchemaStatesStepThroughLikeTiDB) {
  Harness h;
  Workload w(&h.store, h.tso.get(), Small());
  model::Job add = RunDdl(w, Req(DdlKind::kAddColumn, "t1", "extra"));
  model::Job drop = RunDdl(w, Req(DdlKind::kDropColumn, "t1", "", "extra"));
  model::Job trunc = RunDdl(w, Req(DdlKind::kTruncateTable, "t1"));
  auto rows = JobRows(h);
  auto states = [&](int64_t id) {
    std::vector<SchemaState> out;
    for (const JobRowVersion& v : rows[id]) {
      if (!v.deleted) out.push_back(v.job.schema_state);
    }
    return out;
  };
  EXPECT_EQ(states(add.id),
            (std::vector<SchemaState>{SchemaState::kNone, SchemaState::kDeleteOnly,
                                      SchemaState::kWriteOnly, SchemaState::kWriteReorganization,
                                      SchemaState::kPublic}));
  EXPECT_EQ(states(drop.id),
            (std::vector<SchemaState>{SchemaState::kNone, SchemaState::kWriteOnly,
                                      SchemaState::kDeleteOnly, SchemaState::kDeleteReorganization,
                                      SchemaState::kNone}));
  EXPECT_EQ(states(trunc.id), (std::vector<SchemaState>{SchemaState::kNone, SchemaState::kPublic}));
  // TRUNCATE records the old id in the job and the new one in the binlog.
  EXPECT_NE(trunc.binlog->table_info->id, trunc.table_id);
  EXPECT_EQ(rows[trunc.id].back().deleted, true);
}

TEST(WorkloadDdlTest, IntermediateStatesCanBeSkipped) {
  Harness h;
  WorkloadOptions o = Small();
  o.ddl_intermediate_states = false;
  Workload w(&h.store, h.tso.get(), o);
  model::Job add = RunDdl(w, Req(DdlKind::kAddColumn, "t1", "extra"));
  EXPECT_EQ(JobRows(h)[add.id].size(), 3u);  // Queueing, Done, deleted.
}

TEST(WorkloadDdlTest, MetaKeysDecodeAndMatchTheCatalog) {
  Harness h;
  WorkloadOptions o = Small();
  o.partitioned_tables = true;
  Workload w(&h.store, h.tso.get(), o);
  RunDdl(w, Req(DdlKind::kCreateDatabase, "", "other"));
  Steps(w, 5);
  Ts now = h.Now();
  auto scan = h.store.Scan("m", "n", now, 0);
  ASSERT_TRUE(scan.ok());
  std::set<std::string> strings;
  std::map<std::string, std::set<std::string>> hashes;
  for (const KvPair& kv : scan.value()) {
    auto key = codec::DecodeMetaKey(kv.key);
    ASSERT_TRUE(key.ok()) << key.status().ToString();
    if (key->type == codec::meta_type::kStringData) {
      strings.insert(key->key);
    } else {
      ASSERT_EQ(key->type, codec::meta_type::kHashData);
      hashes[key->key].insert(key->field);
    }
  }
  EXPECT_EQ(strings, (std::set<std::string>{"NextGlobalID", "SchemaVersionKey"}));
  testutil::MetaSnapshot snap = h.Snapshot(now);
  std::set<std::string> db_fields;
  for (const auto& [id, db] : snap.dbs) db_fields.insert("DB:" + std::to_string(id));
  EXPECT_EQ(hashes["DBs"], db_fields);
  EXPECT_EQ(snap.dbs.count(kMysqlDbId), 1u);
  ASSERT_NE(snap.ByName("mysql", "tidb_ddl_job"), nullptr);
  EXPECT_EQ(*snap.ByName("mysql", "tidb_ddl_job"), DdlJobTableInfo());
  std::vector<WorkloadTable> tables = w.Tables();
  EXPECT_EQ(snap.tables.size(), tables.size() + 1);  // + tidb_ddl_job
  int64_t max_id = 0;
  for (const WorkloadTable& t : tables) {
    EXPECT_EQ(*snap.ByName(t.database, t.info.name.lower), t.info);
    EXPECT_EQ(hashes["DB:" + std::to_string(t.db_id)].count("Table:" + std::to_string(t.info.id)),
              1u);
    for (int64_t id : t.info.PhysicalTableIds()) max_id = std::max(max_id, id);
  }
  EXPECT_GE(snap.global_id, max_id);
  EXPECT_EQ(snap.schema_version, w.jobs().back().binlog->schema_version);
}

TEST(WorkloadDdlTest, TruncateMovesRowsToTheNewTableId) {
  Harness h;
  Workload w(&h.store, h.tso.get(), Small());
  Steps(w, 20);
  int64_t old_id = w.FindTable("workload", "t1")->info.id;
  model::Job job = RunDdl(w, Req(DdlKind::kTruncateTable, "t1"));
  Ts truncated = h.Now();
  int64_t new_id = w.FindTable("workload", "t1")->info.id;
  EXPECT_NE(new_id, old_id);
  EXPECT_EQ(job.table_id, old_id);
  EXPECT_EQ(job.binlog->table_info->id, new_id);
  Steps(w, 30);
  ASSERT_FALSE(h.truth.History(TableId(old_id)).empty());
  for (const TruthChange& c : h.truth.History(TableId(old_id))) EXPECT_LT(c.commit_ts, truncated);
  ASSERT_FALSE(h.truth.History(TableId(new_id)).empty());
  for (const TruthChange& c : h.truth.History(TableId(new_id))) {
    EXPECT_GT(c.commit_ts, truncated);
  }
  // The first write of every row of the new table is an insert.
  std::set<std::string> seen;
  for (const TruthChange& c : h.truth.History(TableId(new_id))) {
    if (seen.insert(c.key).second) {
      EXPECT_FALSE(c.old_value.has_value());
    }
  }
  size_t checked = 0;
  Status st = testutil::CheckRowsAgainstIntents(h.store, h.truth, w.intents(), &checked);
  EXPECT_TRUE(st.ok()) << st.ToString();
}

TEST(WorkloadDdlTest, AddedAndDroppedColumnsShowInRows) {
  Harness h;
  WorkloadOptions o = Small();
  o.narrow_tables = 1;
  Workload w(&h.store, h.tso.get(), o);
  Steps(w, 20);
  RunDdl(w, Req(DdlKind::kAddColumn, "t1", "extra"));
  model::TableInfo after_add = w.FindTable("workload", "t1")->info;
  const model::ColumnInfo* extra = after_add.FindColumnByName("extra");
  ASSERT_NE(extra, nullptr);
  // Rows written before ADD COLUMN read back the origin default.
  auto specs = testutil::ColumnSpecsOf(after_add).value();
  auto state = h.truth.StateAt(TableId(after_add.id), h.Now());
  ASSERT_FALSE(state.empty());
  for (const auto& [key, value] : state) {
    std::vector<codec::Datum> row;
    ASSERT_TRUE(codec::DecodeRow(value, specs, codec::DecodeRowKey(key).value().handle, &row).ok());
    EXPECT_EQ(row.back(), specs.back().default_value);
  }
  Steps(w, 20);
  Ts before_drop = h.Now();
  int64_t c_id = after_add.FindColumnByName("c")->id;
  RunDdl(w, Req(DdlKind::kDropColumn, "t1", "", "c"));
  Ts dropped = h.Now();
  Steps(w, 20);
  size_t with_extra = 0;
  size_t after = 0;
  for (const TruthChange& ch : h.truth.History(TableId(after_add.id))) {
    if (ch.kind != WriteKind::kPut) continue;
    codec::RowV2View view;
    ASSERT_TRUE(codec::RowV2View::Parse(ch.value, &view).ok());
    bool is_null = false;
    bool has_c = view.Find(c_id, &is_null) >= 0 || is_null;
    bool has_extra = view.Find(extra->id, &is_null) >= 0 || is_null;
    if (ch.commit_ts < before_drop) {
      EXPECT_TRUE(has_c);
    }
    if (ch.commit_ts > dropped) {
      ++after;
      EXPECT_FALSE(has_c);
      EXPECT_TRUE(has_extra);
    }
    if (has_extra) ++with_extra;
  }
  EXPECT_GT(after, 0u);
  EXPECT_GT(with_extra, 0u);
  size_t checked = 0;
  Status st = testutil::CheckRowsAgainstIntents(h.store, h.truth, w.intents(), &checked);
  EXPECT_TRUE(st.ok()) << st.ToString();
}

TEST(WorkloadDdlTest, ScheduledDdlFromAListThenTheMix) {
  Harness h;
  WorkloadOptions o = Small();
  o.ddl_every = 3;
  o.ddl_list = {Req(DdlKind::kAddIndex, "t1", "idx_k", "k"),
                Req(DdlKind::kDropIndex, "t1", "idx_k")};
  Workload w(&h.store, h.tso.get(), o);
  Steps(w, 8);  // Setup; DML, DML, DML, DDL, DML, DML, DML, DDL.
  std::vector<model::Job> jobs = w.jobs();
  ASSERT_GE(jobs.size(), 2u);
  EXPECT_EQ(jobs[jobs.size() - 2].type, ActionType::kAddIndex);
  EXPECT_EQ(jobs.back().type, ActionType::kDropIndex);
  Steps(w, 120);
  EXPECT_GE(w.jobs().size(), jobs.size() + 25);
  std::set<ActionType> kinds;
  for (const model::Job& j : w.jobs()) kinds.insert(j.type);
  EXPECT_GE(kinds.size(), 7u);
  size_t checked = 0;
  Status st = testutil::CheckRowsAgainstIntents(h.store, h.truth, w.intents(), &checked);
  EXPECT_TRUE(st.ok()) << st.ToString();
}

TEST(WorkloadDdlTest, CreateTableQueriesAreMySql) {
  TableTemplateOptions o;
  o.pad_width = 100;
  std::string sink = CreateTableSql(TableTemplate(TableShape::kKitchenSink, "ks", o));
  for (const char* part :
       {"CREATE TABLE `ks` (", "`id` BIGINT NOT NULL", "`c_tinyint_u` TINYINT UNSIGNED",
        "`c_decimal` DECIMAL(20,6)", "`c_binary` BINARY(16)", "`c_longblob` LONGBLOB",
        "`c_datetime6` DATETIME(6)", "`c_time2` TIME(2)", "`c_enum` ENUM('red','green','blue')",
        "`c_bit` BIT(10)", "`c_json` JSON", "`pad` VARCHAR(100)", "PRIMARY KEY (`id`)"}) {
    EXPECT_NE(sink.find(part), std::string::npos) << part << "\n" << sink;
  }
  std::string clustered = CreateTableSql(TableTemplate(TableShape::kClustered, "c", o));
  EXPECT_NE(clustered.find("PRIMARY KEY (`id`, `name`) /*T![clustered_index] CLUSTERED */"),
            std::string::npos);
  std::string range = CreateTableSql(TableTemplate(TableShape::kRangePartitioned, "r", o));
  EXPECT_NE(range.find("PARTITION BY RANGE (`id`) (PARTITION `p0` VALUES LESS THAN (3334)"),
            std::string::npos)
      << range;
  EXPECT_NE(range.find("VALUES LESS THAN (MAXVALUE))"), std::string::npos);
}

}  // namespace
}  // namespace sluice::simkv
