// Test support for the schema store: a scripted SpanSubscriber and
// MetaReader, and builders for schemas, DDL jobs and their tidb_ddl_job rows
// (encoded with simkv's writer, as TiDB writes them). Test-only.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "codec/model/job.h"
#include "common/thread_annotations.h"
#include "kvclient/meta_reader.h"
#include "logpuller/consumer.h"

namespace sluice::schemastore::testing {

// A SpanSubscriber with one subscription at a time, driven by the test:
// Deliver() hands a batch to the consumer and counts the persisted
// callbacks; Resolve() advances the resolved ts; Fail() ends the
// subscription with an error; FailNextSubscribe() makes Subscribe fail.
class FakeSubscriber final : public logpuller::SpanSubscriber {
 public:
  Result<SubscriptionId> Subscribe(const Span& comparable_span, Ts start_ts,
                                   std::shared_ptr<logpuller::KvConsumer> consumer,
                                   const logpuller::SubscribeOptions& options) override
      EXCLUDES(mu_);
  void Unsubscribe(SubscriptionId id) override EXCLUDES(mu_);

  void FailNextSubscribe(Status status) EXCLUDES(mu_);
  // False when no subscription is open.
  bool Deliver(KvBatch batch) EXCLUDES(mu_);
  bool Resolve(Ts ts) EXCLUDES(mu_);
  bool Fail(const Status& status) EXCLUDES(mu_);

  bool active() const EXCLUDES(mu_);
  Span span() const EXCLUDES(mu_);
  Ts start_ts() const EXCLUDES(mu_);
  logpuller::SubscribeOptions options() const EXCLUDES(mu_);
  int subscribes() const EXCLUDES(mu_);
  int unsubscribes() const EXCLUDES(mu_);
  int batches() const EXCLUDES(mu_);
  int persisted() const EXCLUDES(mu_);

 private:
  std::shared_ptr<logpuller::KvConsumer> Live() const EXCLUDES(mu_);

  mutable Mutex mu_;
  std::shared_ptr<logpuller::KvConsumer> consumer_ GUARDED_BY(mu_);
  std::optional<SubscriptionId> id_ GUARDED_BY(mu_);
  std::optional<Status> fail_next_ GUARDED_BY(mu_);
  Span span_ GUARDED_BY(mu_);
  Ts start_ts_ GUARDED_BY(mu_);
  logpuller::SubscribeOptions options_ GUARDED_BY(mu_);
  uint64_t next_id_ GUARDED_BY(mu_) = 1;
  int subscribes_ GUARDED_BY(mu_) = 0;
  int unsubscribes_ GUARDED_BY(mu_) = 0;
  int batches_ GUARDED_BY(mu_) = 0;
  std::shared_ptr<std::atomic<int>> persisted_ = std::make_shared<std::atomic<int>>(0);
};

// Serves a fixed snapshot (stamped with the asked ts), or an error.
class FakeMetaReader final : public kvclient::MetaReader {
 public:
  explicit FakeMetaReader(kvclient::MetaSnapshot snap) : snap_(std::move(snap)) {}
  Result<kvclient::MetaSnapshot> Read(Ts ts) override EXCLUDES(mu_);
  void Set(kvclient::MetaSnapshot snap) EXCLUDES(mu_);
  void FailWith(std::optional<Status> status) EXCLUDES(mu_);
  int reads() const EXCLUDES(mu_);

 private:
  mutable Mutex mu_;
  kvclient::MetaSnapshot snap_ GUARDED_BY(mu_);
  std::optional<Status> fail_ GUARDED_BY(mu_);
  int reads_ GUARDED_BY(mu_) = 0;
};

// Schema objects. Tables have `id BIGINT PRIMARY KEY` (the int handle) and
// `c VARCHAR(64)`; partitioned ones are RANGE partitioned by id.
model::DBInfo Db(int64_t id, std::string_view name);
model::TableInfo Table(int64_t id, std::string_view name, std::vector<int64_t> partitions = {});
model::TableInfo View(int64_t id, std::string_view name);
// Adds a nullable INT column with the next column id.
model::TableInfo WithColumn(model::TableInfo table, std::string_view name);

// A snapshot with the `mysql` database and mysql.tidb_ddl_job, plus `dbs`
// and `tables` (table id -> (db id, info)).
kvclient::MetaSnapshot Snapshot(const std::vector<model::DBInfo>& dbs,
                                const std::vector<std::pair<int64_t, model::TableInfo>>& tables);

// A Done job (schema version 1 unless set) carrying `table` or `db` as its
// binlog schema.
model::Job DoneJob(int64_t job_id, model::ActionType type, int64_t schema_id, int64_t table_id,
                   std::string query = "");

// The tidb_ddl_job row of `job` (state as in the job), committed at
// `commit_ts` by a transaction that started at commit_ts - 1.
RawKvEntry JobRow(const model::Job& job, Ts commit_ts);
// A row whose job_meta is not job JSON.
RawKvEntry BadJobRow(int64_t job_id, Ts commit_ts);

}  // namespace sluice::schemastore::testing
