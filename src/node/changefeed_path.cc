#include "node/changefeed_path.h"

#include <filesystem>
#include <system_error>

#include "common/logging.h"
#include "config/replica_config.h"
#include "dispatcher/event_dispatcher.h"
#include "dispatcher/table_trigger_dispatcher.h"
#include "node/filtering_sink.h"
#include "node/sink_opener.h"

namespace sluice::node {

namespace {

constexpr int64_t kTrigger = event::kTableTriggerTableId;

filter::DmlType DmlTypeOf(event::RowKind kind) {
  switch (kind) {
    case event::RowKind::kInsert:
      return filter::DmlType::kInsert;
    case event::RowKind::kUpdate:
      return filter::DmlType::kUpdate;
    case event::RowKind::kDelete:
      break;
  }
  return filter::DmlType::kDelete;
}

Result<config::ReplicaConfig> ConfigOf(const meta::ChangefeedInfo& info) {
  if (info.config_json.empty()) return config::ReplicaConfig{};
  return config::ReplicaConfigFromJson(info.config_json);
}

}  // namespace

ChangefeedPath::ChangefeedPath(const PathDeps& deps, const meta::ChangefeedInfo& info,
                               MaintainerEpoch epoch, Ts start_ts)
    : deps_(deps),
      changefeed_(info.id.ToString()),
      epoch_(epoch),
      start_ts_(start_ts),
      dir_((std::filesystem::path(deps.data_dir) / info.id.ns / info.id.name /
            std::to_string(epoch.value()))
               .string()),
      executor_(2, "cf-blockexec") {}

ChangefeedPath::~ChangefeedPath() {
  Stop();
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

Result<std::shared_ptr<ChangefeedPath>> ChangefeedPath::Open(const PathDeps& deps,
                                                             const meta::ChangefeedInfo& info,
                                                             MaintainerEpoch epoch, Ts start_ts) {
  if (deps.pd == nullptr || deps.cache == nullptr || deps.puller == nullptr) {
    return InvalidArgument("changefeed path: pd, region cache and puller are required");
  }
  std::shared_ptr<ChangefeedPath> path(new ChangefeedPath(deps, info, epoch, start_ts));
  Status s = path->Init(info);
  if (!s.ok()) {
    path->Stop();
    return s;
  }
  return path;
}

Status ChangefeedPath::Init(const meta::ChangefeedInfo& info) {
  ASSIGN_OR_RETURN(config::ReplicaConfig config, ConfigOf(info));
  ASSIGN_OR_RETURN(filter_, filter::Filter::Make(config::ToFilterConfig(config)));
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
  std::filesystem::create_directories(dir_, ec);
  if (ec) return IoError("cannot create " + dir_ + ": " + ec.message());
  SinkOpenOptions sink_options;
  sink_options.sink_uri = info.sink_uri;
  sink_options.changefeed_id = changefeed_;
  sink_options.start_ts = start_ts_;
  sink_options.clock = deps_.clock;
  sink_options.config = config;
  sink_options.write_permit = deps_.write_permit;
  sink_options.epoch = epoch_;
  ASSIGN_OR_RETURN(std::unique_ptr<sink::Sink> opened,
                   deps_.open_sink ? deps_.open_sink(sink_options) : OpenSink(sink_options));
  sink_ = std::make_unique<FilteringSink>(std::move(opened), filter_);

  snapshot_ = std::make_unique<kvclient::SnapshotReader>(deps_.pd, deps_.cache,
                                                         kvclient::SnapshotReaderOptions{});
  meta_ = std::make_unique<kvclient::KvMetaReader>(deps_.pd, snapshot_.get());
  schemastore::SchemaStoreOptions schema_options;
  schema_options.data_dir = dir_;
  schema_options.start_ts = start_ts_;
  ASSIGN_OR_RETURN(schema_,
                   schemastore::SchemaStore::Open(schema_options, meta_.get(), deps_.puller));
  eventstore::EventStoreOptions store_options;
  store_options.data_dir = dir_;
  store_options.gc_interval = std::chrono::milliseconds(500);
  store_options.subscribe.advance_interval = deps_.advance_interval;
  store_options.env = deps_.store_env;
  if (deps_.store_memtable_bytes > 0) store_options.memtable_bytes = deps_.store_memtable_bytes;
  ASSIGN_OR_RETURN(store_, eventstore::EventStore::Open(store_options, deps_.puller));
  eventservice::EventServiceOptions service_options;
  service_options.num_workers = 2;
  service_options.resolved_interval = std::chrono::milliseconds(500);
  service_ =
      std::make_unique<eventservice::EventService>(service_options, store_.get(), schema_.get());
  return service_->Start();
}

void ChangefeedPath::Stop() {
  std::map<DispatcherId, std::shared_ptr<dispatcher::BasicDispatcher>> dispatchers;
  {
    MutexLock lock(&mu_);
    if (stopped_) return;
    stopped_ = true;
    dispatchers.swap(dispatchers_);
  }
  for (auto& [id, d] : dispatchers) {
    if (service_ != nullptr) service_->RemoveDispatcher(id);
    d->Close();
  }
  if (service_ != nullptr) service_->Stop();
  executor_.Stop();
  if (sink_ != nullptr) sink_->Close();
  if (schema_ != nullptr) schema_->Stop();
  if (store_ != nullptr) store_->Stop();
  if (snapshot_ != nullptr) snapshot_->Stop();
  dispatchers.clear();
  service_.reset();
  schema_.reset();
  store_.reset();
}

Result<std::vector<event::TableRef>> ChangefeedPath::TablesAt(Ts ts) const {
  ASSIGN_OR_RETURN(std::vector<event::TableRef> all, schema_->AllPhysicalTables(ts));
  std::vector<event::TableRef> kept;
  for (event::TableRef& t : all) {
    if (!IgnoresTable(t)) kept.push_back(std::move(t));
  }
  return kept;
}

bool ChangefeedPath::IgnoresTable(const event::TableRef& table) const {
  return filter_->ShouldIgnoreTable(table.schema_name, table.table_name);
}

eventservice::RowFilter ChangefeedPath::MakeRowFilter() const {
  std::shared_ptr<const filter::Filter> f = filter_;
  return [f](const event::TableSchema& schema, const event::RowChange& row,
             Ts start_ts) -> Result<bool> {
    return f->ShouldIgnoreDml(DmlTypeOf(row.kind), schema.schema_name(), schema.table_name(),
                              start_ts.value());
  };
}

dispatcher::DispatcherOptions ChangefeedPath::OptionsFor(DispatcherId id, int64_t table_id,
                                                         Ts start) {
  dispatcher::DispatcherOptions o;
  o.id = id;
  o.table_id = table_id;
  o.start_ts = start;
  o.sink = sink_.get();
  o.executor = &executor_;
  eventservice::EventService* service = service_.get();
  o.ack_bytes = [service, id](size_t bytes) { service->Ack(id, bytes); };
  o.on_block_status = [this](const dispatcher::BlockStatus& s) {
    std::function<void(const dispatcher::BlockStatus&)> cb;
    {
      MutexLock lock(&mu_);
      cb = listener_.on_block_status;
    }
    if (cb) cb(s);
  };
  o.on_error = [this, table_id](const dispatcher::DispatcherError& e) {
    RecordError(e.status.WithContext("dispatcher of table " + std::to_string(table_id) +
                                     " failed at ts " + std::to_string(e.failing_ts.value())));
  };
  return o;
}

Result<Ts> ChangefeedPath::AddDispatcher(const dispatchermanager::DispatcherConfig& config) {
  const int64_t table_id = config.table_id.value();
  ASSIGN_OR_RETURN(std::vector<sink::TableRecovery> recovery,
                   sink_->GetTableRecoveryInfo({table_id}, {config.start_ts}));
  if (recovery.size() != 1) return Internal("sink recovery info lost a table");
  const Ts start = std::max(config.start_ts, recovery[0].start_ts);
  MutexLock lock(&mu_);
  if (stopped_) return dispatchermanager::WritePathClosed("changefeed path stopped");
  if (fenced_) return dispatchermanager::WritePathClosed("changefeed path fenced");
  if (dispatchers_.count(config.id) > 0) return start;
  dispatcher::DispatcherOptions o = OptionsFor(config.id, table_id, start);
  std::shared_ptr<dispatcher::BasicDispatcher> d;
  if (table_id == kTrigger) {
    ASSIGN_OR_RETURN(d, dispatcher::TableTriggerDispatcher::Create(o));
    RETURN_IF_ERROR(service_->RegisterTableTrigger(config.id, start, d.get()));
  } else {
    ASSIGN_OR_RETURN(d, dispatcher::EventDispatcher::Create(o));
    eventservice::DispatcherRegistration r;
    r.id = config.id;
    r.table_id = table_id;
    r.start_ts = start;
    r.skip_dml_after_start_ts = recovery[0].skip_dml_at_start_ts && start > config.start_ts;
    r.filter = MakeRowFilter();
    r.memory_budget = deps_.memory_budget;
    r.consumer = d.get();
    RETURN_IF_ERROR(service_->RegisterDispatcher(std::move(r)));
  }
  dispatchers_[config.id] = std::move(d);
  return start;
}

void ChangefeedPath::FenceWrites() {
  std::vector<std::shared_ptr<dispatcher::BasicDispatcher>> open;
  {
    MutexLock lock(&mu_);
    if (fenced_) return;
    fenced_ = true;
    for (const auto& [id, d] : dispatchers_) open.push_back(d);
  }
  LOG_WARN("changefeed {} epoch {}: write fence; closing {} dispatchers", changefeed(),
           epoch_.value(), open.size());
  for (const auto& d : open) d->Close();
}

void ChangefeedPath::RemoveDispatcher(DispatcherId id) {
  std::shared_ptr<dispatcher::BasicDispatcher> d;
  {
    MutexLock lock(&mu_);
    auto it = dispatchers_.find(id);
    if (it == dispatchers_.end()) return;
    d = std::move(it->second);
    dispatchers_.erase(it);
  }
  service_->RemoveDispatcher(id);
  d->Close();
}

std::shared_ptr<dispatcher::BasicDispatcher> ChangefeedPath::Find(DispatcherId id) const {
  MutexLock lock(&mu_);
  auto it = dispatchers_.find(id);
  return it == dispatchers_.end() ? nullptr : it->second;
}

std::optional<Ts> ChangefeedPath::TableCheckpoint(int64_t table_id) const {
  MutexLock lock(&mu_);
  for (const auto& [id, d] : dispatchers_) {
    if (d->table_id() == table_id) return d->checkpoint();
  }
  return std::nullopt;
}

Status ChangefeedPath::AdoptEpoch(MaintainerEpoch epoch) {
  if (epoch <= epoch_ || sink_ == nullptr) return Status::Ok();
  Status adopted = sink_->AdoptEpoch(epoch.value());
  if (adopted.ok()) {
    LOG_INFO("changefeed path adopted by a newer maintainer; changefeed={} path_epoch={} epoch={}",
             changefeed_, epoch_.value(), epoch.value());
  }
  return adopted;
}

void ChangefeedPath::SetListener(PathListener listener) {
  MutexLock lock(&mu_);
  listener_ = std::move(listener);
}

void ChangefeedPath::UpdateCheckpoints(Ts changefeed_checkpoint) {
  std::vector<std::shared_ptr<dispatcher::BasicDispatcher>> dispatchers;
  {
    MutexLock lock(&mu_);
    if (stopped_) return;
    for (const auto& [id, d] : dispatchers_) dispatchers.push_back(d);
  }
  // Outside the lock: a failed sink fails the dispatcher, whose error
  // callback takes the lock.
  for (const auto& d : dispatchers) {
    d->CheckSink();
    service_->UpdateCheckpoint(d->id(), d->checkpoint());
  }
  if (changefeed_checkpoint.value() > 0) sink_->AddCheckpointTs(changefeed_checkpoint);
  if (Status s = sink_->status(); !s.ok()) RecordError(s.WithContext("sink"));
  if (Status s = schema_->status(); !s.ok()) {
    RecordError(
        s.WithContext("schema store failed at ts " + std::to_string(schema_->failed_ts().value())));
  }
}

void ChangefeedPath::RecordError(const Status& status) {
  MutexLock lock(&mu_);
  if (error_.ok()) {
    LOG_WARN("changefeed path failed; changefeed={} epoch={} error={}", changefeed_, epoch_.value(),
             status.ToString());
    error_ = status;
  }
}

Status ChangefeedPath::error() const {
  MutexLock lock(&mu_);
  return error_;
}

Result<std::shared_ptr<ChangefeedPath>> PathRegistry::Acquire(const meta::ChangefeedInfo& info,
                                                              MaintainerEpoch epoch, Ts start_ts) {
  MutexLock open_lock(&open_mu_);
  const auto key = std::make_pair(info.id.ToString(), epoch.value());
  {
    MutexLock lock(&mu_);
    if (auto it = paths_.find(key); it != paths_.end()) {
      if (std::shared_ptr<ChangefeedPath> live = it->second.lock()) return live;
      paths_.erase(it);
    }
  }
  ASSIGN_OR_RETURN(std::shared_ptr<ChangefeedPath> path,
                   ChangefeedPath::Open(deps_, info, epoch, start_ts));
  MutexLock lock(&mu_);
  if (listener_) {
    path->SetListener(PathListener{[listener = listener_, cf = key.first](
                                       const dispatcher::BlockStatus& s) { listener(cf, s); }});
  }
  paths_[key] = path;
  return path;
}

void PathRegistry::SetBlockStatusListener(BlockStatusListener listener) {
  MutexLock lock(&mu_);
  listener_ = std::move(listener);
}

std::vector<std::shared_ptr<ChangefeedPath>> PathRegistry::PathsOf(
    const std::string& changefeed) const {
  std::vector<std::shared_ptr<ChangefeedPath>> out;
  MutexLock lock(&mu_);
  for (const auto& [key, weak] : paths_) {
    if (key.first != changefeed) continue;
    if (std::shared_ptr<ChangefeedPath> live = weak.lock()) out.push_back(std::move(live));
  }
  return out;
}

}  // namespace sluice::node
