#include "schemastore/test_util.h"

#include <utility>

#include "codec/datum.h"
#include "codec/mysql_type.h"
#include "codec/rowcodec_v2.h"
#include "simkv/ddl_job_row.h"
#include "simkv/tidb_tables.h"

namespace sluice::schemastore::testing {

namespace mt = codec::mysql_type;
namespace mf = codec::mysql_flag;

// --- FakeSubscriber ------------------------------------------------------

Result<SubscriptionId> FakeSubscriber::Subscribe(const Span& comparable_span, Ts start_ts,
                                                 std::shared_ptr<logpuller::KvConsumer> consumer,
                                                 const logpuller::SubscribeOptions& options) {
  MutexLock lock(&mu_);
  if (fail_next_.has_value()) {
    Status st = *fail_next_;
    fail_next_.reset();
    return st;
  }
  ++subscribes_;
  id_ = SubscriptionId(next_id_++);
  consumer_ = std::move(consumer);
  span_ = comparable_span;
  start_ts_ = start_ts;
  options_ = options;
  return *id_;
}

void FakeSubscriber::Unsubscribe(SubscriptionId id) {
  MutexLock lock(&mu_);
  if (!id_.has_value() || *id_ != id) return;
  ++unsubscribes_;
  id_.reset();
  consumer_.reset();
}

void FakeSubscriber::FailNextSubscribe(Status status) {
  MutexLock lock(&mu_);
  fail_next_ = std::move(status);
}

std::shared_ptr<logpuller::KvConsumer> FakeSubscriber::Live() const {
  MutexLock lock(&mu_);
  return consumer_;
}

bool FakeSubscriber::Deliver(KvBatch batch) {
  std::shared_ptr<logpuller::KvConsumer> consumer = Live();
  if (consumer == nullptr) return false;
  {
    MutexLock lock(&mu_);
    ++batches_;
  }
  consumer->ConsumeKvEvents(std::move(batch), [count = persisted_] { count->fetch_add(1); });
  return true;
}

bool FakeSubscriber::Resolve(Ts ts) {
  std::shared_ptr<logpuller::KvConsumer> consumer = Live();
  if (consumer == nullptr) return false;
  consumer->AdvanceResolvedTs(ts);
  return true;
}

bool FakeSubscriber::Fail(const Status& status) {
  std::shared_ptr<logpuller::KvConsumer> consumer;
  {
    MutexLock lock(&mu_);
    consumer = std::move(consumer_);
    id_.reset();
  }
  if (consumer == nullptr) return false;
  consumer->OnSubscriptionError(status);
  return true;
}

bool FakeSubscriber::active() const {
  MutexLock lock(&mu_);
  return consumer_ != nullptr;
}
logpuller::SubscribeOptions FakeSubscriber::options() const {
  MutexLock lock(&mu_);
  return options_;
}
Span FakeSubscriber::span() const {
  MutexLock lock(&mu_);
  return span_;
}
Ts FakeSubscriber::start_ts() const {
  MutexLock lock(&mu_);
  return start_ts_;
}
int FakeSubscriber::subscribes() const {
  MutexLock lock(&mu_);
  return subscribes_;
}
int FakeSubscriber::unsubscribes() const {
  MutexLock lock(&mu_);
  return unsubscribes_;
}
int FakeSubscriber::batches() const {
  MutexLock lock(&mu_);
  return batches_;
}
int FakeSubscriber::persisted() const { return persisted_->load(); }

// --- FakeMetaReader ------------------------------------------------------

Result<kvclient::MetaSnapshot> FakeMetaReader::Read(Ts ts) {
  MutexLock lock(&mu_);
  ++reads_;
  if (fail_.has_value()) return *fail_;
  kvclient::MetaSnapshot snap = snap_;
  snap.ts = ts;
  return snap;
}

void FakeMetaReader::Set(kvclient::MetaSnapshot snap) {
  MutexLock lock(&mu_);
  snap_ = std::move(snap);
}

void FakeMetaReader::FailWith(std::optional<Status> status) {
  MutexLock lock(&mu_);
  fail_ = std::move(status);
}

int FakeMetaReader::reads() const {
  MutexLock lock(&mu_);
  return reads_;
}

// --- Builders ------------------------------------------------------------

namespace {

model::ColumnInfo Column(int64_t id, std::string_view name, uint8_t tp, uint64_t flag,
                         int64_t flen) {
  model::ColumnInfo c;
  c.id = id;
  c.name = model::CIStr::From(name);
  c.offset = id - 1;
  c.type.tp = tp;
  c.type.flag = flag;
  c.type.flen = flen;
  if (tp == mt::kVarchar) {
    c.type.charset = "utf8mb4";
    c.type.collate = "utf8mb4_bin";
  } else {
    c.type.charset = "binary";
    c.type.collate = "binary";
  }
  c.state = model::SchemaState::kPublic;
  return c;
}

}  // namespace

model::DBInfo Db(int64_t id, std::string_view name) {
  model::DBInfo db;
  db.id = id;
  db.name = model::CIStr::From(name);
  db.charset = "utf8mb4";
  db.collate = "utf8mb4_bin";
  db.state = model::SchemaState::kPublic;
  return db;
}

model::TableInfo Table(int64_t id, std::string_view name, std::vector<int64_t> partitions) {
  model::TableInfo t;
  t.id = id;
  t.name = model::CIStr::From(name);
  t.charset = "utf8mb4";
  t.collate = "utf8mb4_bin";
  t.columns = {Column(1, "id", mt::kLonglong, mf::kPriKey | mf::kNotNull, 20),
               Column(2, "c", mt::kVarchar, 0, 64)};
  t.pk_is_handle = true;
  t.max_col_id = 2;
  t.state = model::SchemaState::kPublic;
  t.version = 5;
  if (!partitions.empty()) {
    model::PartitionInfo p;
    p.type = model::PartitionType::kRange;
    p.expr = "`id`";
    p.enable = true;
    p.num = partitions.size();
    for (size_t i = 0; i < partitions.size(); ++i) {
      model::PartitionDefinition d;
      d.id = partitions[i];
      d.name = model::CIStr::From("p" + std::to_string(i));
      d.less_than = {i + 1 == partitions.size() ? "MAXVALUE" : std::to_string(100 * (i + 1))};
      p.definitions.push_back(std::move(d));
    }
    t.partition = std::move(p);
  }
  return t;
}

model::TableInfo View(int64_t id, std::string_view name) {
  model::TableInfo t = Table(id, name);
  t.pk_is_handle = false;
  t.columns[0].type.flag = 0;
  t.view = model::JsonValue::object({{"view_select", "SELECT 1"}});
  return t;
}

model::TableInfo WithColumn(model::TableInfo table, std::string_view name) {
  ++table.max_col_id;
  model::ColumnInfo c = Column(table.max_col_id, name, mt::kLong, 0, 11);
  c.offset = static_cast<int64_t>(table.columns.size());
  table.columns.push_back(std::move(c));
  return table;
}

kvclient::MetaSnapshot Snapshot(const std::vector<model::DBInfo>& dbs,
                                const std::vector<std::pair<int64_t, model::TableInfo>>& tables) {
  kvclient::MetaSnapshot snap;
  snap.schema_version = 1;
  snap.dbs.emplace(simkv::kMysqlDbId, simkv::MysqlDbInfo());
  model::TableInfo job_table = simkv::DdlJobTableInfo();
  snap.tables.emplace(job_table.id, std::make_pair(simkv::kMysqlDbId, job_table));
  for (const model::DBInfo& db : dbs) snap.dbs.emplace(db.id, db);
  for (const auto& [db_id, table] : tables) {
    snap.tables.emplace(table.id, std::make_pair(db_id, table));
  }
  return snap;
}

model::Job DoneJob(int64_t job_id, model::ActionType type, int64_t schema_id, int64_t table_id,
                   std::string query) {
  model::Job job;
  job.id = job_id;
  job.type = type;
  job.schema_id = schema_id;
  job.table_id = table_id;
  job.state = model::JobState::kDone;
  job.query = std::move(query);
  job.version = model::kJobVersion1;
  job.binlog = model::JobBinlogInfo{};
  job.binlog->schema_version = 1;
  return job;
}

RawKvEntry JobRow(const model::Job& job, Ts commit_ts) {
  simkv::DdlJobRow row;
  row.job = job;
  row.schema_ids = std::to_string(job.schema_id);
  row.table_ids = std::to_string(job.table_id);
  Result<std::string> value = simkv::EncodeDdlJobRow(simkv::DdlJobTableInfo(), row);
  RawKvEntry entry;
  entry.op = KvOp::kPut;
  entry.key = simkv::DdlJobRowKey(job.id);
  entry.value = value.ok() ? std::move(value).value() : std::string();
  entry.start_ts = Ts(commit_ts.value() - 1);
  entry.commit_ts = commit_ts;
  return entry;
}

RawKvEntry BadJobRow(int64_t job_id, Ts commit_ts) {
  model::TableInfo job_table = simkv::DdlJobTableInfo();
  const int64_t ids[] = {job_table.FindColumnByName("job_meta")->id};
  const codec::Datum values[] = {codec::Datum::Bytes("{\"id\": 1, \"type\": ")};
  std::string value;
  codec::EncodeRowV2(ids, values, &value).IgnoreError();
  RawKvEntry entry;
  entry.op = KvOp::kPut;
  entry.key = simkv::DdlJobRowKey(job_id);
  entry.value = std::move(value);
  entry.start_ts = Ts(commit_ts.value() - 1);
  entry.commit_ts = commit_ts;
  return entry;
}

}  // namespace sluice::schemastore::testing
