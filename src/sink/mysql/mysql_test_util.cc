#include "sink/mysql/mysql_test_util.h"

#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>

#include "codec/mysql_type.h"
#include "common/test_util.h"
#include "sink/mysql/mysql_config.h"
#include "sink/sink_uri.h"

namespace sluice::sink::testing {

namespace mt = codec::mysql_type;
namespace mf = codec::mysql_flag;

model::ColumnInfo Col(int64_t id, std::string_view name, uint8_t tp, uint64_t flag) {
  model::ColumnInfo c;
  c.id = id;
  c.name = model::CIStr::From(name);
  c.offset = id - 1;
  c.type.tp = tp;
  c.type.flag = flag;
  bool text = tp == mt::kVarchar || tp == mt::kString || tp == mt::kBlob || tp == mt::kEnum ||
              tp == mt::kSet || tp == mt::kVarString || tp == mt::kTinyBlob ||
              tp == mt::kMediumBlob || tp == mt::kLongBlob;
  c.type.charset = text ? "utf8mb4" : "binary";
  c.type.collate = text ? "utf8mb4_bin" : "binary";
  c.state = model::SchemaState::kPublic;
  return c;
}

model::IndexInfo Index(int64_t id, std::string_view name, std::vector<std::string> cols,
                       bool primary, bool unique) {
  model::IndexInfo idx;
  idx.id = id;
  idx.name = model::CIStr::From(name);
  idx.primary = primary;
  idx.unique = unique;
  idx.state = model::SchemaState::kPublic;
  for (const std::string& c : cols) idx.columns.push_back({model::CIStr::From(c), 0, -1});
  return idx;
}

model::TableInfo IntHandleTable(int64_t table_id, std::string_view name,
                                std::vector<model::ColumnInfo> columns) {
  model::TableInfo t;
  t.id = table_id;
  t.name = model::CIStr::From(name);
  t.pk_is_handle = true;
  t.state = model::SchemaState::kPublic;
  t.columns.push_back(Col(1, "id", mt::kLonglong, mf::kPriKey | mf::kNotNull));
  for (model::ColumnInfo& c : columns) {
    c.id = static_cast<int64_t>(t.columns.size()) + 1;
    c.offset = c.id - 1;
    t.columns.push_back(std::move(c));
  }
  return t;
}

event::TableSchemaPtr Schema(std::string db, model::TableInfo info) {
  auto s = event::TableSchema::Make(std::move(db), 1, std::move(info), Ts(1));
  if (!s.ok()) std::abort();
  return *s;
}

event::RowChange Insert(std::vector<codec::Datum> row) {
  event::RowChange r;
  r.kind = event::RowKind::kInsert;
  r.row = std::move(row);
  return r;
}

event::RowChange Delete(std::vector<codec::Datum> pre) {
  event::RowChange r;
  r.kind = event::RowKind::kDelete;
  r.pre_row = std::move(pre);
  return r;
}

event::RowChange Update(std::vector<codec::Datum> pre, std::vector<codec::Datum> row) {
  event::RowChange r;
  r.kind = event::RowKind::kUpdate;
  r.pre_row = std::move(pre);
  r.row = std::move(row);
  return r;
}

event::DmlEventPtr Txn(const event::TableSchemaPtr& schema, uint64_t commit_ts,
                       std::vector<event::RowChange> rows, DispatcherId dispatcher) {
  auto e = std::make_shared<event::DmlEvent>();
  e->dispatcher_id = dispatcher;
  e->physical_table_id = schema->table_id();
  e->schema = schema;
  e->start_ts = Ts(commit_ts - 1);
  e->commit_ts = Ts(commit_ts);
  e->rows = std::move(rows);
  return e;
}

std::optional<std::string> TestMysqlUri() {
  const char* v = std::getenv("SLUICE_TEST_MYSQL");
  if (v == nullptr || *v == '\0') return std::nullopt;
  return std::string(v);
}

Result<std::unique_ptr<MysqlConnection>> ConnectTestServer() {
  std::optional<std::string> uri = TestMysqlUri();
  if (!uri.has_value()) return NotFound("SLUICE_TEST_MYSQL is not set");
  ASSIGN_OR_RETURN(SinkUri parsed, SinkUri::Parse(*uri));
  ASSIGN_OR_RETURN(MysqlSinkConfig config, MysqlSinkConfig::FromUri(parsed));
  return MysqlConnection::Connect(config.connect);
}

std::string UniqueName(std::string_view prefix) {
  static std::atomic<int> n{0};
  return fmt::format("{}_{}_{}", prefix, static_cast<int>(getpid()), n.fetch_add(1));
}

void MysqlSinkFixture::SetUp() {
  std::optional<std::string> uri = TestMysqlUri();
  if (!uri.has_value()) {
    GTEST_SKIP() << "SLUICE_TEST_MYSQL is not set (scripts/services.sh starts a MariaDB)";
  }
  uri_ = *uri;
  auto conn = ConnectTestServer();
  ASSERT_TRUE(conn.ok()) << conn.status().ToString();
  conn_ = std::move(*conn);
  db_ = UniqueName("sink");
  Exec(fmt::format("CREATE DATABASE `{}`", db_));
}

void MysqlSinkFixture::TearDown() {
  if (conn_ != nullptr)
    conn_->Execute(fmt::format("DROP DATABASE IF EXISTS `{}`", db_)).IgnoreError();
}

MysqlSinkOptions MysqlSinkFixture::Options(std::string_view changefeed, Ts replicating_ts) {
  MysqlSinkOptions o;
  o.changefeed_id = changefeed.empty() ? UniqueName("default/cf") : std::string(changefeed);
  o.replicating_ts = replicating_ts;
  o.clock = Clock::Real();
  o.backoff.base = std::chrono::milliseconds(10);
  o.backoff.max = std::chrono::milliseconds(100);
  return o;
}

Result<std::unique_ptr<MysqlSink>> MysqlSinkFixture::TryNewSink(std::string_view params,
                                                                MysqlSinkOptions options) {
  std::string uri = uri_;
  if (!params.empty()) {
    uri = fmt::format("{}{}{}", uri_, uri_.find('?') == std::string::npos ? "?" : "&", params);
  }
  ASSIGN_OR_RETURN(SinkUri parsed, SinkUri::Parse(uri));
  return MysqlSink::Create(parsed, std::move(options));
}

std::unique_ptr<MysqlSink> MysqlSinkFixture::NewSink(std::string_view params,
                                                     std::string_view changefeed,
                                                     Ts replicating_ts) {
  auto sink = TryNewSink(params, Options(changefeed, replicating_ts));
  EXPECT_TRUE(sink.ok()) << sink.status().ToString();
  return sink.ok() ? std::move(*sink) : nullptr;
}

void MysqlSinkFixture::Exec(std::string_view sql) {
  Status st = conn_->Execute(sql);
  ASSERT_TRUE(st.ok()) << st.ToString() << " in " << sql;
}

std::vector<SqlRow> MysqlSinkFixture::Query(std::string_view sql) {
  auto rows = conn_->Query(sql);
  EXPECT_TRUE(rows.ok()) << rows.status().ToString() << " in " << sql;
  return rows.ok() ? *rows : std::vector<SqlRow>();
}

std::optional<std::string> MysqlSinkFixture::Scalar(std::string_view sql) {
  std::vector<SqlRow> rows = Query(sql);
  if (rows.size() != 1 || rows[0].size() != 1) {
    ADD_FAILURE() << sql << " returned " << rows.size() << " rows";
    return std::nullopt;
  }
  return rows[0][0];
}

event::DdlEvent MysqlSinkFixture::Ddl(model::ActionType type, std::string query, uint64_t ts,
                                      std::vector<int64_t> blocked,
                                      std::vector<event::TableRef> add) {
  event::DdlEvent d;
  d.job_id = static_cast<int64_t>(ts);
  d.type = type;
  d.finished_ts = Ts(ts);
  d.start_ts = Ts(ts - 1);
  d.query = std::move(query);
  d.schema_name = db_;
  d.blocked.table_ids = std::move(blocked);
  d.tables_to_add = std::move(add);
  return d;
}

bool WaitFlushed(const MysqlSink& sink, const std::atomic<int>& flushed, int n) {
  PollUntil([&] { return flushed.load() >= n || !sink.status().ok(); }, std::chrono::seconds(60));
  return flushed.load() >= n;
}

}  // namespace sluice::sink::testing
