#include "datapath/datapath_driver.h"

#include <fmt/format.h>

#include <algorithm>
#include <thread>

namespace sluice::testing {

using dispatcher::BarrierAction;
using dispatcher::BlockStage;
using dispatcher::BlockStatus;

constexpr int64_t kTrigger = event::kTableTriggerTableId;

DataPathDriver::DataPathDriver(DataPathOptions options)
    : options_(std::move(options)), executor_(2, "dp-blockexec") {}

DataPathDriver::~DataPathDriver() { Stop(); }

Result<std::unique_ptr<DataPathDriver>> DataPathDriver::Start(DataPathOptions options) {
  if (options.pd == nullptr || options.cache == nullptr || options.puller == nullptr ||
      options.sink == nullptr) {
    return InvalidArgument("data path: pd, cache, puller and sink are required");
  }
  std::unique_ptr<DataPathDriver> d(new DataPathDriver(std::move(options)));
  Status s = d->Init();
  if (!s.ok()) {
    d->Stop();
    return s;
  }
  return d;
}

Status DataPathDriver::Init() {
  snapshot_ = std::make_unique<kvclient::SnapshotReader>(options_.pd, options_.cache,
                                                         kvclient::SnapshotReaderOptions{});
  meta_ = std::make_unique<kvclient::KvMetaReader>(options_.pd, snapshot_.get());
  schemastore::SchemaStoreOptions schema_options;
  schema_options.data_dir = options_.data_dir;
  schema_options.start_ts = options_.start_ts;
  ASSIGN_OR_RETURN(schema_,
                   schemastore::SchemaStore::Open(schema_options, meta_.get(), options_.puller));
  eventstore::EventStoreOptions store_options;
  store_options.data_dir = options_.data_dir;
  store_options.gc_interval = std::chrono::milliseconds(200);
  store_options.env = options_.store_env;
  if (options_.store_memtable_bytes > 0)
    store_options.memtable_bytes = options_.store_memtable_bytes;
  ASSIGN_OR_RETURN(store_, eventstore::EventStore::Open(store_options, options_.puller));
  eventservice::EventServiceOptions service_options;
  service_options.num_workers = 2;
  service_options.resolved_interval = std::chrono::milliseconds(500);
  service_ =
      std::make_unique<eventservice::EventService>(service_options, store_.get(), schema_.get());
  RETURN_IF_ERROR(service_->Start());

  // As TiCDC's maintainer: the table trigger resumes where the sink says
  // (past the DDLs it already ran), the tables are those that exist at the
  // trigger's start, and each table resumes past its own finished DDLs.
  const Ts start = options_.start_ts;
  ASSIGN_OR_RETURN(std::vector<sink::TableRecovery> trigger_recovery,
                   options_.sink->GetTableRecoveryInfo({kTrigger}, {start}));
  if (trigger_recovery.size() != 1) return Internal("sink recovery lost the table trigger");
  const Ts trigger_start = trigger_recovery[0].start_ts;
  ASSIGN_OR_RETURN(std::vector<event::TableRef> tables, TablesAt(trigger_start));
  std::vector<int64_t> ids;
  for (const event::TableRef& ref : tables) ids.push_back(ref.table_id);
  ASSIGN_OR_RETURN(std::vector<sink::TableRecovery> recovery,
                   options_.sink->GetTableRecoveryInfo(ids, std::vector<Ts>(ids.size(), start)));
  if (recovery.size() != ids.size()) return Internal("sink recovery lost tables");
  MutexLock lock(&mu_);
  checkpoint_ = start;
  for (size_t i = 0; i < ids.size(); ++i) {
    RETURN_IF_ERROR(AddTable(tables[i], recovery[i].start_ts, recovery[i].skip_dml_at_start_ts));
  }
  dispatcher::DispatcherOptions o = DispatcherOptionsFor(kTrigger, trigger_start);
  ASSIGN_OR_RETURN(trigger_, dispatcher::TableTriggerDispatcher::Create(o));
  RETURN_IF_ERROR(service_->RegisterTableTrigger(o.id, trigger_start, trigger_.get()));
  thread_.Start("dp-driver", [this](const StopToken& token) { Loop(token); });
  return Status::Ok();
}

DispatcherId DataPathDriver::NextId() { return DispatcherId{0, next_id_++}; }

Result<std::vector<event::TableRef>> DataPathDriver::TablesAt(Ts ts) {
  Result<std::vector<event::TableRef>> tables = schema_->AllPhysicalTables(ts);
  // The schema store answers once its resolved ts reaches `ts`.
  for (int i = 0; !tables.ok() && tables.status().code() == Code::kUnavailable && i < 600; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    tables = schema_->AllPhysicalTables(ts);
  }
  return tables;
}

dispatcher::DispatcherOptions DataPathDriver::DispatcherOptionsFor(int64_t table_id, Ts start) {
  dispatcher::DispatcherOptions o;
  o.id = NextId();
  o.table_id = table_id;
  o.start_ts = start;
  o.sink = options_.sink;
  o.executor = &executor_;
  eventservice::EventService* service = service_.get();
  DispatcherId id = o.id;
  o.ack_bytes = [service, id](size_t bytes) { service->Ack(id, bytes); };
  o.on_block_status = [this](const BlockStatus& s) {
    MutexLock l(&mu_);
    inbox_.push_back(s);
    cv_.SignalAll();
  };
  o.on_error = [this, table_id](const dispatcher::DispatcherError& e) {
    MutexLock l(&mu_);
    AddError(PathError{"dispatcher", table_id, e.status, e.failing_ts});
  };
  return o;
}

Status DataPathDriver::AddTable(const event::TableRef& ref, Ts start, bool skip_dml_after_start) {
  if (tables_.count(ref.table_id) > 0) return Status::Ok();
  dispatcher::DispatcherOptions o = DispatcherOptionsFor(ref.table_id, start);
  ASSIGN_OR_RETURN(auto d, dispatcher::EventDispatcher::Create(o));
  eventservice::DispatcherRegistration r;
  r.id = o.id;
  r.table_id = ref.table_id;
  r.start_ts = start;
  r.skip_dml_after_start_ts = skip_dml_after_start;
  r.memory_budget = options_.memory_budget;
  r.consumer = d.get();
  RETURN_IF_ERROR(service_->RegisterDispatcher(std::move(r)));
  tables_[ref.table_id] = Table{ref, std::move(d)};
  ++stats_.tables_added;
  return Status::Ok();
}

void DataPathDriver::RemoveTable(int64_t table_id) {
  auto it = tables_.find(table_id);
  if (it == tables_.end()) return;
  service_->RemoveDispatcher(it->second.dispatcher->id());
  it->second.dispatcher->Close();
  tables_.erase(it);
  ++stats_.tables_removed;
}

std::shared_ptr<dispatcher::BasicDispatcher> DataPathDriver::Find(DispatcherId id) const {
  if (trigger_ != nullptr && trigger_->id() == id) return trigger_;
  for (const auto& [tid, t] : tables_) {
    if (t.dispatcher->id() == id) return t.dispatcher;
  }
  return nullptr;
}

std::set<DispatcherId> DataPathDriver::Involved(const event::DdlEvent& ddl) const {
  std::set<DispatcherId> ids;
  const event::BlockedTables& b = ddl.blocked;
  if (b.influence != event::InfluenceType::kNormal) {
    ids.insert(trigger_->id());
    for (const auto& [tid, t] : tables_) {
      if (b.influence == event::InfluenceType::kAll || t.ref.schema_id == b.schema_id) {
        ids.insert(t.dispatcher->id());
      }
    }
    return ids;
  }
  for (int64_t tid : b.table_ids) {
    if (tid == kTrigger) {
      ids.insert(trigger_->id());
    } else if (auto it = tables_.find(tid); it != tables_.end()) {
      ids.insert(it->second.dispatcher->id());
    }
  }
  return ids;
}

void DataPathDriver::Handle(const BlockStatus& s) {
  if (s.stage == BlockStage::kNone) {
    for (int64_t tid : s.tables_to_drop) RemoveTable(tid);
    for (const event::TableRef& ref : s.tables_to_add) {
      Status st = AddTable(ref, s.block_ts);
      if (!st.ok()) AddError(PathError{"driver", ref.table_id, st, s.block_ts});
    }
    return;
  }
  Barrier& b = barriers_[s.block_ts];
  if (s.stage == BlockStage::kWaiting) {
    if (b.ddl == nullptr) b.ddl = s.ddl;
    b.waiting.insert(s.dispatcher_id);
    TryStartBarrier(s.block_ts);
    return;
  }
  if (b.write_sent && s.dispatcher_id == b.writer) FinishBarrier(s.block_ts);
}

void DataPathDriver::TryStartBarrier(Ts ts) {
  Barrier& b = barriers_[ts];
  if (b.write_sent || b.ddl == nullptr) return;
  std::set<DispatcherId> need = Involved(*b.ddl);
  if (!std::includes(b.waiting.begin(), b.waiting.end(), need.begin(), need.end())) return;
  b.writer = need.count(trigger_->id()) > 0 ? trigger_->id() : *need.begin();
  b.write_sent = true;
  ++stats_.barriers;
  if (auto d = Find(b.writer)) d->HandleBarrierAction(ts, BarrierAction::kWrite);
}

void DataPathDriver::FinishBarrier(Ts ts) {
  Barrier b = std::move(barriers_[ts]);
  barriers_.erase(ts);
  for (int64_t tid : b.ddl->tables_to_drop) RemoveTable(tid);
  for (DispatcherId id : b.waiting) {
    if (id == b.writer) continue;
    if (auto d = Find(id)) d->HandleBarrierAction(ts, BarrierAction::kPass);
  }
  for (const event::TableRef& ref : b.ddl->tables_to_add) {
    Status st = AddTable(ref, ts);
    if (!st.ok()) AddError(PathError{"driver", ref.table_id, st, ts});
  }
}

void DataPathDriver::Tick() {
  if (Status s = options_.sink->status(); !s.ok() && !HasError("sink")) {
    AddError(PathError{"sink", 0, s, Ts(checkpoint_.value() + 1)});
  }
  if (Status s = schema_->status(); !s.ok() && !HasError("schema store")) {
    AddError(PathError{"schema store", 0, s, schema_->failed_ts()});
  }
  Ts min = trigger_->checkpoint();
  for (const auto& [tid, t] : tables_) {
    Ts c = t.dispatcher->checkpoint();
    service_->UpdateCheckpoint(t.dispatcher->id(), c);
    min = std::min(min, c);
  }
  if (min > checkpoint_) {
    checkpoint_ = min;
    options_.sink->AddCheckpointTs(min);
    cv_.SignalAll();
  }
}

void DataPathDriver::Loop(const StopToken& token) {
  MutexLock lock(&mu_);
  while (!token.cancelled() && !stopped_) {
    while (!inbox_.empty()) {
      BlockStatus s = std::move(inbox_.front());
      inbox_.pop_front();
      Handle(s);
    }
    Tick();
    cv_.WaitUntil(&mu_, std::chrono::steady_clock::now() + std::chrono::milliseconds(20));
  }
}

void DataPathDriver::AddError(PathError e) {
  if (status_.ok()) {
    status_ = e.status.WithContext(
        fmt::format("{} of table {} failed at ts {}", e.source, e.table_id, e.failing_ts.value()));
  }
  errors_.push_back(std::move(e));
  cv_.SignalAll();
}

bool DataPathDriver::HasError(std::string_view source) const {
  for (const PathError& e : errors_) {
    if (e.source == source) return true;
  }
  return false;
}

std::vector<PathError> DataPathDriver::errors() const {
  MutexLock lock(&mu_);
  return errors_;
}

std::optional<Ts> DataPathDriver::TableCheckpoint(int64_t table_id) const {
  MutexLock lock(&mu_);
  auto it = tables_.find(table_id);
  if (it == tables_.end()) return std::nullopt;
  return it->second.dispatcher->checkpoint();
}

Ts DataPathDriver::checkpoint() const {
  MutexLock lock(&mu_);
  return checkpoint_;
}

Status DataPathDriver::status() const {
  MutexLock lock(&mu_);
  return status_;
}

DataPathStats DataPathDriver::stats() const {
  MutexLock lock(&mu_);
  return stats_;
}

Status DataPathDriver::WaitCheckpoint(Ts ts, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  MutexLock lock(&mu_);
  while (checkpoint_ < ts) {
    if (!status_.ok()) return status_;
    if (cv_.WaitUntil(&mu_, deadline) && checkpoint_ < ts) {
      return Timeout(fmt::format("checkpoint {} below {}", checkpoint_.value(), ts.value()));
    }
  }
  return Status::Ok();
}

void DataPathDriver::Stop() {
  {
    MutexLock lock(&mu_);
    if (stopped_) return;
    stopped_ = true;
    cv_.SignalAll();
  }
  thread_.Stop();
  {
    MutexLock lock(&mu_);
    for (auto& [tid, t] : tables_) t.dispatcher->Close();
    if (trigger_ != nullptr) trigger_->Close();
  }
  if (service_ != nullptr) service_->Stop();
  executor_.Stop();
  // The sink's last flushes ack bytes into the service: close it (it
  // flushes and joins its workers) before the service goes.
  options_.sink->Close();
  if (schema_ != nullptr) schema_->Stop();
  if (store_ != nullptr) store_->Stop();
  if (snapshot_ != nullptr) snapshot_->Stop();
  // Release the stores' files so that a new path can open the same dir.
  {
    MutexLock lock(&mu_);
    tables_.clear();
    trigger_.reset();
  }
  service_.reset();
  schema_.reset();
  store_.reset();
}

}  // namespace sluice::testing
