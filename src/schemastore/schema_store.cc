#include "schemastore/schema_store.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <utility>

#include "codec/tablecodec.h"
#include "common/logging.h"
#include "schemastore/disk.h"
#include "schemastore/job_decoder.h"

namespace sluice::schemastore {

// What the puller hands over, waiting for the apply thread. Shared with the
// consumer, which may outlive the store (the puller keeps it until its
// subscription is gone).
struct SchemaStore::Inbox {
  Mutex mu;
  CondVar cv;
  std::shared_ptr<const DdlJobDecoder> decoder;  // Set before subscribing.
  // Done jobs by (commit ts, job id): a re-delivered row replaces itself.
  std::map<std::pair<uint64_t, int64_t>, model::Job> pending GUARDED_BY(mu);
  Ts resolved GUARDED_BY(mu);  // Largest resolved ts of the subscription.
  Ts applied GUARDED_BY(mu);   // Largest ts the apply thread took.
  Status error GUARDED_BY(mu);
  Ts error_ts GUARDED_BY(mu);
  bool closed GUARDED_BY(mu) = false;
  uint64_t rows GUARDED_BY(mu) = 0;
  uint64_t done_jobs GUARDED_BY(mu) = 0;
  uint64_t bad_rows GUARDED_BY(mu) = 0;

  // Keeps the error with the smallest ts.
  void Fail(Status status, Ts ts) REQUIRES(mu) {
    if (!error.ok() && error_ts <= ts) return;
    LOG_ERROR("schema store stops before {}: {}", ts.value(), status.ToString());
    error = std::move(status);
    error_ts = ts;
    cv.SignalAll();
  }
  // The largest ts whose jobs are all here and good.
  Ts Limit() const REQUIRES(mu) {
    if (error.ok()) return resolved;
    return std::min(resolved, Ts(error_ts.value() - 1));
  }
};

class SchemaStore::Consumer final : public logpuller::KvConsumer {
 public:
  explicit Consumer(std::shared_ptr<Inbox> inbox) : inbox_(std::move(inbox)) {}

  void ConsumeKvEvents(KvBatch batch, logpuller::PersistedCallback persisted) override {
    std::vector<std::pair<Result<std::optional<model::Job>>, const RawKvEntry*>> decoded;
    decoded.reserve(batch.size());
    for (const RawKvEntry& entry : batch)
      decoded.emplace_back(inbox_->decoder->Decode(entry), &entry);
    {
      MutexLock lock(&inbox_->mu);
      inbox_->rows += batch.size();
      for (auto& [job, entry] : decoded) {
        if (inbox_->closed) break;
        if (!job.ok()) {
          ++inbox_->bad_rows;
          inbox_->Fail(job.status().WithContext(fmt::format("tidb_ddl_job row committed at {}",
                                                            entry->commit_ts.value())),
                       entry->commit_ts);
          continue;
        }
        if (!job->has_value()) continue;
        ++inbox_->done_jobs;
        if (entry->commit_ts <= inbox_->applied) {
          // The puller promised nothing at or below a published resolved ts.
          inbox_->Fail(ProtocolViolation(fmt::format(
                           "DDL job {} committed at {} after resolved ts {}", (*job)->id,
                           entry->commit_ts.value(), inbox_->applied.value())),
                       entry->commit_ts);
          continue;
        }
        auto key = std::make_pair(entry->commit_ts.value(), (*job)->id);
        inbox_->pending.insert_or_assign(key, std::move(**job));
      }
    }
    // The jobs are in the store's hands: the resolved ts that follows may
    // count on them. Their durability is the resolved ts on disk (after a
    // restart the store pulls again from there), as in TiCDC, whose job
    // fetcher consumes batches synchronously into memory.
    persisted();
  }

  void AdvanceResolvedTs(Ts ts) override {
    MutexLock lock(&inbox_->mu);
    if (ts <= inbox_->resolved) return;
    inbox_->resolved = ts;
    inbox_->cv.SignalAll();
  }

  void OnSubscriptionError(const Status& status) override {
    MutexLock lock(&inbox_->mu);
    if (inbox_->closed) return;
    inbox_->Fail(status.WithContext("DDL job subscription"), Ts(inbox_->resolved.value() + 1));
  }

 private:
  const std::shared_ptr<Inbox> inbox_;
};

// --- Open / Stop ---------------------------------------------------------

SchemaStore::SchemaStore(SchemaStoreOptions options, logpuller::SpanSubscriber* subscriber)
    : options_(std::move(options)), subscriber_(subscriber), inbox_(std::make_shared<Inbox>()) {}

SchemaStore::~SchemaStore() { Stop(); }

Result<std::unique_ptr<SchemaStore>> SchemaStore::Open(SchemaStoreOptions options,
                                                       kvclient::MetaReader* meta,
                                                       logpuller::SpanSubscriber* subscriber) {
  if (meta == nullptr || subscriber == nullptr) {
    return InvalidArgument("schema store needs a meta reader and a span subscriber");
  }
  std::unique_ptr<SchemaStore> store(new SchemaStore(std::move(options), subscriber));
  Status st = store->Init(meta);
  if (!st.ok()) {
    store->Stop();
    return st;
  }
  return store;
}

Status SchemaStore::Init(kvclient::MetaReader* meta) {
  const std::string dir = options_.data_dir + "/schema_store";
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return IoError(fmt::format("schema store: cannot create {}: {}", dir, ec.message()));
  ASSIGN_OR_RETURN(disk_, SchemaDisk::Open(dir));
  ASSIGN_OR_RETURN(std::optional<DiskBounds> bounds, disk_->ReadBounds());
  reused_disk_ = bounds.has_value() && bounds->snapshot_ts <= options_.start_ts &&
                 options_.start_ts <= bounds->resolved_ts;
  if (reused_disk_) {
    RETURN_IF_ERROR(LoadFromDisk());
  } else {
    RETURN_IF_ERROR(disk_->Wipe());
    RETURN_IF_ERROR(Bootstrap(meta));
  }
  const Ts from = persisted_resolved_;
  {
    MutexLock lock(&inbox_->mu);
    inbox_->resolved = from;
    inbox_->applied = from;
  }
  resolved_.store(from.value());
  last_persist_ = options_.clock->Now();
  apply_thread_.Start("ss-apply", [this](StopToken token) { Loop(token); });

  auto consumer = std::make_shared<Consumer>(inbox_);
  MutexLock lock(&stop_mu_);
  ASSIGN_OR_RETURN(SubscriptionId id,
                   subscriber_->Subscribe(codec::ComparableTableRecordSpan(TableId(kDdlJobTableId)),
                                          from, consumer, options_.subscribe));
  subscription_ = id;
  LOG_INFO("schema store open: snapshot {} resolved {} ({})", snapshot_ts_.value(), from.value(),
           reused_disk_ ? "reused from disk" : "new snapshot");
  return Status::Ok();
}

Status SchemaStore::Bootstrap(kvclient::MetaReader* meta) {
  ASSIGN_OR_RETURN(kvclient::MetaSnapshot snap, meta->Read(options_.start_ts));
  snap.ts = options_.start_ts;
  // mysql.tidb_ddl_job, found by name as TiCDC does (initDDLTableInfo).
  const model::TableInfo* job_table = nullptr;
  for (const auto& [id, entry] : snap.tables) {
    auto db = snap.dbs.find(entry.first);
    if (db != snap.dbs.end() && db->second.name.lower == "mysql" &&
        entry.second.name.lower == "tidb_ddl_job") {
      job_table = &entry.second;
    }
  }
  if (job_table == nullptr) return NotFound("meta snapshot has no mysql.tidb_ddl_job");
  ASSIGN_OR_RETURN(DdlJobDecoder decoder, DdlJobDecoder::Make(*job_table));
  // Keep only what the store serves: the user databases and their tables.
  kvclient::MetaSnapshot kept;
  kept.ts = snap.ts;
  kept.schema_version = snap.schema_version;
  for (const auto& [id, db] : snap.dbs) {
    if (!IsSystemSchema(db.name.lower)) kept.dbs.emplace(id, db);
  }
  for (const auto& [id, entry] : snap.tables) {
    if (kept.dbs.count(entry.first) > 0) kept.tables.emplace(id, entry);
  }
  {
    MutexLock lock(&catalog_mu_);
    RETURN_IF_ERROR(catalog_.Bootstrap(kept));
  }
  RETURN_IF_ERROR(disk_->WriteBootstrap(kept, *job_table));
  inbox_->decoder = std::make_shared<const DdlJobDecoder>(std::move(decoder));
  snapshot_ts_ = snap.ts;
  persisted_resolved_ = snap.ts;
  return Status::Ok();
}

Status SchemaStore::LoadFromDisk() {
  ASSIGN_OR_RETURN(DiskState state, disk_->Load());
  ASSIGN_OR_RETURN(DdlJobDecoder decoder, DdlJobDecoder::Make(state.job_table));
  {
    MutexLock lock(&catalog_mu_);
    RETURN_IF_ERROR(catalog_.Bootstrap(state.snapshot));
    for (const model::Job& job : state.jobs) {
      Result<event::DdlEventPtr> ev = catalog_.Apply(job);
      if (!ev.ok()) return Corruption("stored DDL job does not apply: " + ev.status().ToString());
      if (job.binlog->finished_ts > state.bounds.resolved_ts.value()) {
        return Corruption("stored DDL job above the stored resolved ts");
      }
    }
  }
  inbox_->decoder = std::make_shared<const DdlJobDecoder>(std::move(decoder));
  snapshot_ts_ = state.bounds.snapshot_ts;
  persisted_resolved_ = state.bounds.resolved_ts;
  return Status::Ok();
}

void SchemaStore::Stop() {
  std::optional<SubscriptionId> sub;
  {
    MutexLock lock(&stop_mu_);
    if (stopped_) return;
    stopped_ = true;
    sub = subscription_;
  }
  if (sub.has_value()) subscriber_->Unsubscribe(*sub);
  {
    MutexLock lock(&inbox_->mu);
    inbox_->closed = true;
    inbox_->cv.SignalAll();
  }
  apply_thread_.Stop();
  if (disk_ == nullptr) return;
  const Ts resolved(resolved_.load());
  Status st = Status::Ok();
  if (resolved > persisted_resolved_) {
    st = disk_->WriteRound({}, resolved);
    if (st.ok()) persisted_resolved_ = resolved;
  }
  if (st.ok()) st = disk_->Sync();
  if (!st.ok()) LOG_ERROR("schema store: final write failed: {}", st.ToString());
}

// --- Apply thread --------------------------------------------------------

void SchemaStore::Loop(const StopToken& token) {
  for (;;) {
    std::vector<model::Job> jobs;
    Ts target;
    bool persist_now = false;
    {
      MutexLock lock(&inbox_->mu);
      for (;;) {
        if (inbox_->closed || token.cancelled()) return;
        if (inbox_->Limit() > inbox_->applied) break;
        const bool dirty = Ts(resolved_.load()) > persisted_resolved_;
        if (dirty && options_.clock->Now() >= last_persist_ + options_.persist_interval) {
          persist_now = true;
          break;
        }
        Clock::TimePoint deadline = dirty ? last_persist_ + options_.persist_interval
                                          : options_.clock->Now() + std::chrono::hours(1);
        options_.clock->WaitUntil(&inbox_->cv, &inbox_->mu, deadline);
      }
      target = std::max(inbox_->applied, inbox_->Limit());
      auto end = inbox_->pending.upper_bound({target.value(), INT64_MAX});
      for (auto it = inbox_->pending.begin(); it != end; ++it)
        jobs.push_back(std::move(it->second));
      inbox_->pending.erase(inbox_->pending.begin(), end);
      inbox_->applied = target;
    }
    RunRound(std::move(jobs), target, persist_now);
  }
}

void SchemaStore::RunRound(std::vector<model::Job> jobs, Ts target, bool persist_now) {
  std::vector<const model::Job*> applied;
  Ts reached = target;
  {
    MutexLock lock(&catalog_mu_);
    for (const model::Job& job : jobs) {
      Result<event::DdlEventPtr> ev = catalog_.Apply(job);
      if (!ev.ok()) {
        reached = Ts(job.binlog->finished_ts - 1);
        MutexLock inbox_lock(&inbox_->mu);
        inbox_->Fail(ev.status(), Ts(job.binlog->finished_ts));
        break;
      }
      if (ev.value() != nullptr) applied.push_back(&job);
    }
  }
  if (!applied.empty() || persist_now ||
      options_.clock->Now() >= last_persist_ + options_.persist_interval) {
    Status st = disk_->WriteRound(applied, reached);
    if (!st.ok()) {
      // Nothing of this round is on disk: stop before it so that the stored
      // history never has a hole under the stored resolved ts.
      MutexLock inbox_lock(&inbox_->mu);
      inbox_->Fail(st, Ts(resolved_.load() + 1));
      return;
    }
    persisted_resolved_ = reached;
    last_persist_ = options_.clock->Now();
  }
  Publish(reached);
}

void SchemaStore::Publish(Ts ts) {
  if (ts.value() <= resolved_.load()) return;
  resolved_.store(ts.value());
  MutexLock lock(&listener_mu_);
  for (const auto& [handle, fn] : listeners_) fn(ts);
}

// --- Queries -------------------------------------------------------------

Ts SchemaStore::resolved_ts() const { return Ts(resolved_.load()); }

Status SchemaStore::status() const {
  MutexLock lock(&inbox_->mu);
  return inbox_->error;
}

Ts SchemaStore::failed_ts() const {
  MutexLock lock(&inbox_->mu);
  return inbox_->error.ok() ? Ts() : inbox_->error_ts;
}

SchemaStoreStats SchemaStore::stats() const {
  SchemaStoreStats s;
  {
    MutexLock lock(&inbox_->mu);
    s.rows = inbox_->rows;
    s.done_jobs = inbox_->done_jobs;
    s.bad_rows = inbox_->bad_rows;
  }
  MutexLock lock(&catalog_mu_);
  s.catalog = catalog_.stats();
  return s;
}

Status SchemaStore::Beyond(Ts ts, Ts resolved) const {
  Status st = status();
  if (!st.ok() && ts >= failed_ts()) return st;
  return Unavailable(fmt::format("schema store: ts {} is beyond its resolved ts {}", ts.value(),
                                 resolved.value()));
}

Status SchemaStore::CheckRange(Ts from, Ts to) const {
  if (from > to) {
    return InvalidArgument(
        fmt::format("schema store: empty range ({}, {}]", from.value(), to.value()));
  }
  const Ts resolved = resolved_ts();
  if (to > resolved) return Beyond(to, resolved);
  if (from < snapshot_ts_) {
    return Status(Code::kGcSafepointExceeded,
                  fmt::format("schema store: ts {} is below its snapshot ts {}", from.value(),
                              snapshot_ts_.value()));
  }
  return Status::Ok();
}

Result<event::TableSchemaPtr> SchemaStore::GetTableSchema(int64_t table_id, Ts ts) const {
  RETURN_IF_ERROR(CheckRange(ts, ts));
  MutexLock lock(&catalog_mu_);
  return catalog_.GetTableSchema(table_id, ts);
}

Result<std::vector<event::TableRef>> SchemaStore::AllPhysicalTables(Ts ts) const {
  RETURN_IF_ERROR(CheckRange(ts, ts));
  MutexLock lock(&catalog_mu_);
  return catalog_.AllPhysicalTables(ts);
}

Result<std::vector<event::DdlEventPtr>> SchemaStore::TableDdlEvents(int64_t table_id, Ts from,
                                                                    Ts to) const {
  RETURN_IF_ERROR(CheckRange(from, to));
  MutexLock lock(&catalog_mu_);
  return catalog_.TableDdlEvents(table_id, from, to);
}

Result<std::vector<event::DdlEventPtr>> SchemaStore::AllDdlEvents(Ts from, Ts to) const {
  RETURN_IF_ERROR(CheckRange(from, to));
  MutexLock lock(&catalog_mu_);
  return catalog_.AllDdlEvents(from, to);
}

uint64_t SchemaStore::AddResolvedListener(std::function<void(Ts)> fn) {
  MutexLock lock(&listener_mu_);
  uint64_t handle = next_listener_++;
  listeners_.emplace(handle, std::move(fn));
  return handle;
}

void SchemaStore::RemoveResolvedListener(uint64_t handle) {
  MutexLock lock(&listener_mu_);
  listeners_.erase(handle);
}

}  // namespace sluice::schemastore
