#include "simkv/sim_cluster.h"

#include <utility>

#include "common/logging.h"

namespace sluice::simkv {

namespace {

Status UnknownStore(StoreId id) { return NotFound("store " + std::to_string(id.value())); }

RegionMapOptions MapOptions(const SimClusterOptions& options) {
  RegionMapOptions map;
  for (size_t i = 1; i <= options.num_stores; ++i) map.stores.emplace_back(i);
  map.raw_split_keys = options.raw_split_keys;
  map.replicas = options.replicas;
  return map;
}

}  // namespace

Result<std::unique_ptr<SimCluster>> SimCluster::Start(SimClusterOptions options) {
  if (options.num_stores == 0) return InvalidArgument("sim cluster: no stores");
  if (options.clock == nullptr) return InvalidArgument("sim cluster: no clock");
  ASSIGN_OR_RETURN(std::unique_ptr<RegionMap> regions, RegionMap::Bootstrap(MapOptions(options)));
  std::unique_ptr<SimCluster> cluster(new SimCluster(std::move(options), std::move(regions)));
  RETURN_IF_ERROR(cluster->StartPd());
  MutexLock lock(&cluster->mu_);
  for (auto& [id, node] : cluster->nodes_) RETURN_IF_ERROR(cluster->StartStore(id, node));
  LOG_INFO("sim cluster {} up: pd {}, {} stores, {} regions", cluster->cluster_id(),
           cluster->pd_address(), cluster->nodes_.size(), cluster->regions_->size());
  return cluster;
}

SimCluster::SimCluster(SimClusterOptions options, std::unique_ptr<RegionMap> regions)
    : options_(std::move(options)),
      regions_(std::move(regions)),
      tso_(options_.clock),
      txn_(&store_, &tso_) {
  MutexLock lock(&mu_);
  for (StoreId id : regions_->stores()) {
    nodes_.emplace(id, StoreNode{});
    registry_.Put(StoreInfo{id, "", StoreState::kUp});
  }
}

SimCluster::~SimCluster() { Stop(); }

Status SimCluster::StartPd() {
  PdServiceOptions pd_options;
  pd_options.cluster_id = options_.cluster_id;
  pd_options.clock = options_.clock;
  pd_ = std::make_unique<PdService>(pd_options, regions_.get(), &tso_, &registry_, &store_);
  ASSIGN_OR_RETURN(LoopbackServer server, StartLoopbackServer({pd_.get()}));
  pd_server_ = std::move(server.server);
  pd_port_ = server.port;
  pd_->SetClientUrl("http://" + server.address());
  return Status::Ok();
}

Status SimCluster::StartStore(StoreId id, StoreNode& node) {
  CdcServiceOptions cdc;
  cdc.store_id = id;
  cdc.cluster_id = options_.cluster_id;
  cdc.clock = options_.clock;
  cdc.resolved_ts_interval = options_.resolved_ts_interval;
  cdc.sink = options_.sink;
  cdc.scan_threads = options_.scan_threads;
  cdc.check_conf_ver = options_.check_conf_ver;
  auto service = std::make_unique<CdcService>(cdc, &store_, regions_.get(), &tso_);
  service->SetBusy(node.busy);
  auto kv = std::make_unique<KvService>(KvServiceOptions{id}, &store_, regions_.get());
  kv->SetBusy(node.busy);
  Result<LoopbackServer> server = StartLoopbackServer({service.get(), kv.get()}, node.port);
  if (!server.ok()) return server.status();
  service->Start();
  node.port = server->port;
  node.server = std::move(server->server);
  node.service = std::move(service);
  node.kv = std::move(kv);
  return registry_.SetAddress(id, "127.0.0.1:" + std::to_string(node.port));
}

void SimCluster::StopStore(StoreNode& node) {
  if (node.service == nullptr) return;
  node.service->Stop();               // Cancels the streams and waits for their handlers.
  ShutdownServer(node.server.get());  // Waits for the KV handlers too.
  node.server.reset();
  node.service.reset();
  node.kv.reset();
}

void SimCluster::Stop() {
  MutexLock lock(&mu_);
  if (stopped_) return;
  stopped_ = true;
  for (auto& [id, node] : nodes_) StopStore(node);
  if (pd_ != nullptr) pd_->CancelStreams();
  ShutdownServer(pd_server_.get());
  pd_server_.reset();
}

std::string SimCluster::store_address(StoreId id) const {
  MutexLock lock(&mu_);
  auto it = nodes_.find(id);
  if (it == nodes_.end()) return "";
  return "127.0.0.1:" + std::to_string(it->second.port);
}

std::vector<StoreId> SimCluster::store_ids() const { return regions_->stores(); }

Result<SimCluster::StoreNode*> SimCluster::UpStore(StoreId id) {
  auto it = nodes_.find(id);
  if (it == nodes_.end()) return UnknownStore(id);
  if (it->second.service == nullptr) {
    return Unavailable("store " + std::to_string(id.value()) + " is down");
  }
  return &it->second;
}

void SimCluster::ReconcileAll() {
  for (auto& [id, node] : nodes_) {
    if (node.service != nullptr) node.service->Reconcile();
  }
}

Result<std::pair<RegionInfo, RegionInfo>> SimCluster::Split(RegionId region,
                                                            std::string_view raw_key) {
  MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(auto parts, regions_->Split(region, raw_key));
  LOG_INFO("sim cluster: split region {} at {} -> {} and {}", region.value(), Redact(raw_key),
           parts.first.id.value(), parts.second.id.value());
  ReconcileAll();
  return parts;
}

Result<RegionInfo> SimCluster::Merge(RegionId left, RegionId right) {
  MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(RegionInfo merged, regions_->Merge(left, right));
  LOG_INFO("sim cluster: merged regions {} and {} into {}", left.value(), right.value(),
           merged.id.value());
  ReconcileAll();
  return merged;
}

Result<RegionInfo> SimCluster::TransferLeader(RegionId region, StoreId store) {
  MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(RegionInfo moved, regions_->TransferLeader(region, store));
  LOG_INFO("sim cluster: region {} leader -> store {}", region.value(), store.value());
  ReconcileAll();
  return moved;
}

Result<RegionInfo> SimCluster::BumpEpoch(RegionId region) {
  MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(RegionInfo bumped, regions_->BumpEpoch(region));
  ReconcileAll();
  return bumped;
}

Status SimCluster::StoreDown(StoreId store) {
  MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(StoreNode * node, UpStore(store));
  StopStore(*node);
  LOG_INFO("sim cluster: store {} down", store.value());
  return Status::Ok();
}

Status SimCluster::StoreRestart(StoreId store) {
  MutexLock lock(&mu_);
  auto it = nodes_.find(store);
  if (it == nodes_.end()) return UnknownStore(store);
  if (it->second.service != nullptr) return AlreadyExists("store is up");
  RETURN_IF_ERROR(StartStore(store, it->second));
  LOG_INFO("sim cluster: store {} restarted on port {}", store.value(), it->second.port);
  return Status::Ok();
}

bool SimCluster::StoreIsUp(StoreId store) const {
  MutexLock lock(&mu_);
  auto it = nodes_.find(store);
  return it != nodes_.end() && it->second.service != nullptr;
}

Status SimCluster::SetStoreBusy(StoreId store, std::string reason, uint64_t backoff_ms) {
  MutexLock lock(&mu_);
  auto it = nodes_.find(store);
  if (it == nodes_.end()) return UnknownStore(store);
  it->second.busy = BusyState{std::move(reason), backoff_ms};
  if (it->second.service != nullptr) it->second.service->SetBusy(it->second.busy);
  if (it->second.kv != nullptr) it->second.kv->SetBusy(it->second.busy);
  return Status::Ok();
}

Status SimCluster::ClearStoreBusy(StoreId store) {
  MutexLock lock(&mu_);
  auto it = nodes_.find(store);
  if (it == nodes_.end()) return UnknownStore(store);
  it->second.busy.reset();
  if (it->second.service != nullptr) it->second.service->SetBusy(std::nullopt);
  if (it->second.kv != nullptr) it->second.kv->SetBusy(std::nullopt);
  return Status::Ok();
}

Status SimCluster::DropStreams(StoreId store) {
  MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(StoreNode * node, UpStore(store));
  node->service->DropStreams();
  return Status::Ok();
}

Status SimCluster::Congest(StoreId store) {
  MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(StoreNode * node, UpStore(store));
  node->service->Congest();
  return Status::Ok();
}

Status SimCluster::PdDown() {
  MutexLock lock(&mu_);
  if (pd_server_ == nullptr) return AlreadyExists("pd is down");
  pd_->CancelStreams();
  ShutdownServer(pd_server_.get());
  pd_server_.reset();
  LOG_INFO("sim cluster: pd down");
  return Status::Ok();
}

Status SimCluster::PdRestart() {
  MutexLock lock(&mu_);
  if (stopped_) return Unavailable("sim cluster stopped");
  if (pd_server_ != nullptr) return AlreadyExists("pd is up");
  pd_->Reopen();
  // The TSO allocator lives on in-process, so timestamps keep increasing.
  ASSIGN_OR_RETURN(LoopbackServer server, StartLoopbackServer({pd_.get()}, pd_port_));
  pd_server_ = std::move(server.server);
  LOG_INFO("sim cluster: pd restarted on port {}", pd_port_);
  return Status::Ok();
}

void SimCluster::AdvanceResolvedTs() {
  MutexLock lock(&mu_);
  for (auto& [id, node] : nodes_) {
    if (node.service != nullptr) node.service->AdvanceResolvedTs();
  }
}

size_t SimCluster::NumStreams(StoreId store) const {
  MutexLock lock(&mu_);
  auto it = nodes_.find(store);
  if (it == nodes_.end() || it->second.service == nullptr) return 0;
  return it->second.service->NumStreams();
}

size_t SimCluster::NumSubscriptions(StoreId store) const {
  MutexLock lock(&mu_);
  auto it = nodes_.find(store);
  if (it == nodes_.end() || it->second.service == nullptr) return 0;
  return it->second.service->NumSubscriptions();
}

uint64_t SimCluster::NumKvRequests(StoreId store) const {
  MutexLock lock(&mu_);
  auto it = nodes_.find(store);
  if (it == nodes_.end() || it->second.kv == nullptr) return 0;
  return it->second.kv->requests();
}

}  // namespace sluice::simkv
