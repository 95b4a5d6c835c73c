#include "server/server.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <system_error>
#include <thread>

#include "api/api_server.h"
#include "common/logging.h"
#include "common/metrics.h"
#include "meta/embedded_store.h"
#include "meta/etcd_store.h"

namespace sluice::server {

namespace {

// "host:port" -> (host, port); kInvalidArgument naming the address.
Result<std::pair<std::string, int>> SplitHostPort(const std::string& addr) {
  const size_t colon = addr.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == addr.size()) {
    return InvalidArgument("--addr \"" + addr + "\" is not host:port");
  }
  int port = 0;
  for (char c : addr.substr(colon + 1)) {
    if (c < '0' || c > '9' || port > 65535) {
      return InvalidArgument("--addr \"" + addr + "\" has a bad port");
    }
    port = port * 10 + (c - '0');
  }
  if (port > 65535) return InvalidArgument("--addr \"" + addr + "\" has a bad port");
  return std::make_pair(addr.substr(0, colon), port);
}

// The peer address other nodes dial: the bound one, with the advertised
// host in place of a wildcard host.
std::string AdvertisedPeer(const std::string& bound, const std::string& advertise) {
  Result<std::pair<std::string, int>> b = SplitHostPort(bound);
  Result<std::pair<std::string, int>> a = SplitHostPort(advertise);
  if (!b.ok() || !a.ok()) return bound;
  if (b->first != "0.0.0.0" && b->first != "[::]" && b->first != "::") return bound;
  return a->first + ":" + std::to_string(b->second);
}

}  // namespace

// The cluster as the coordinator and the API see it. The coordinator places
// every maintainer on this node (the owner); the API lists every registered
// node and reads the owner from the election.
class Server::Cluster final : public coordinator::NodeMembership, public api::ClusterInfo {
 public:
  Cluster(Server* server, std::string cluster_id)
      : server_(server), cluster_id_(std::move(cluster_id)) {}

  std::vector<NodeId> AliveNodes() const override { return {server_->id()}; }
  std::vector<meta::CaptureInfo> Captures() override {
    std::vector<meta::CaptureInfo> out;
    Result<meta::CaptureList> list = server_->meta_->ListCaptures();
    if (!list.ok()) return out;
    for (auto& c : list->captures) out.push_back(std::move(c.value));
    return out;
  }
  std::optional<NodeId> Owner() override {
    Result<std::optional<meta::LeaderInfo>> leader = server_->election_->Leader();
    if (!leader.ok() || !leader->has_value()) return std::nullopt;
    return NodeId((*leader)->value);
  }
  std::string ClusterId() override { return cluster_id_; }
  NodeId SelfId() override { return server_->id(); }
  Status ResignOwner() override { return server_->ResignOwner(); }
  std::optional<std::string> OwnerAddress() override { return server_->OwnerAddress(); }

 private:
  Server* const server_;
  const std::string cluster_id_;
};

Server::Server(ServerOptions options)
    : options_(std::move(options)),
      peer_gauge_(Registry::Default()->AddGaugeFamily(
          "sluice_peer_connected", "1 while this node's message stream to the peer is up",
          {"peer"})) {}

Server::~Server() { Stop(); }

Result<std::unique_ptr<Server>> Server::Start(ServerOptions options) {
  if (options.data_dir.empty()) return InvalidArgument("--data-dir is required");
  if (options.pd_endpoints.empty()) return InvalidArgument("--pd is required");
  if (options.capture_session_ttl < std::chrono::seconds(1)) {
    return InvalidArgument("capture-session-ttl must be at least 1 second");
  }
  RETURN_IF_ERROR(SplitHostPort(options.addr).status());
  if (!options.peer_addr.empty()) RETURN_IF_ERROR(SplitHostPort(options.peer_addr).status());
  std::unique_ptr<Server> s(new Server(std::move(options)));
  Status st = s->Init();
  if (!st.ok()) {
    s->Stop();
    return st;
  }
  return s;
}

Status Server::InitMeta() {
  const meta::KeyLayout layout(options_.cluster_id);
  if (options_.etcd_endpoints.empty()) {
    meta::EmbeddedStoreOptions store_options;
    store_options.dir = (std::filesystem::path(options_.data_dir) / "meta").string();
    store_options.clock = options_.clock;
    ASSIGN_OR_RETURN(std::unique_ptr<meta::EmbeddedMetaStore> store,
                     meta::EmbeddedMetaStore::Open(store_options));
    // Only this process uses the store (the data dir is locked): the owner
    // key and capture of its previous run are stale, drop them now rather
    // than wait for their leases.
    for (const std::string& prefix : {layout.OwnerPrefix(), layout.CapturePrefix()}) {
      ASSIGN_OR_RETURN(meta::RangeResult stale, store->GetPrefix(prefix));
      for (const meta::KeyValue& kv : stale.kvs) RETURN_IF_ERROR(store->Delete(kv.key).status());
    }
    meta::EmbeddedMetaStore* raw = store.get();
    stop_store_ = [raw] { raw->Stop(); };
    store_ = std::move(store);
  } else {
    meta::EtcdStoreOptions etcd;
    etcd.endpoints = options_.etcd_endpoints;
    etcd.clock = options_.clock;
    ASSIGN_OR_RETURN(std::unique_ptr<meta::EtcdMetaStore> store, meta::EtcdMetaStore::Open(etcd));
    meta::EtcdMetaStore* raw = store.get();
    stop_store_ = [raw] { raw->Stop(); };
    store_ = std::move(store);
  }
  meta_ = std::make_unique<meta::MetaClient>(store_.get(), layout);
  election_ = std::make_unique<meta::Election>(store_.get(), layout.OwnerPrefix());
  cluster_ = std::make_unique<Cluster>(this, options_.cluster_id);
  return Status::Ok();
}

Result<meta::ChangefeedInfo> Server::LookupChangefeed(const std::string& id) {
  ASSIGN_OR_RETURN(meta::ChangefeedId parsed, meta::ChangefeedId::Parse(id));
  ASSIGN_OR_RETURN(meta::Versioned<meta::ChangefeedInfo> info, meta_->GetChangefeedInfo(parsed));
  return std::move(info.value);
}

Status Server::Init() {
  RETURN_IF_ERROR(LockDataDir());
  RETURN_IF_ERROR(InitMeta());
  RETURN_IF_ERROR(InitUpstream());
  tso_ = std::make_unique<coordinator::PdTsoSource>(pd_.get());
  gc_ = std::make_unique<coordinator::PdGcSafepointUpdater>(pd_.get());
  RETURN_IF_ERROR(StartApi());
  RETURN_IF_ERROR(CheckAddressIsFree());
  RETURN_IF_ERROR(StartCapture());
  members_thread_.Start("server-members", [this](const StopToken& token) { MembersLoop(token); });
  owner_thread_.Start("server-owner", [this](const StopToken& token) { OwnerLoop(token); });
  if (options_.etcd_endpoints.empty()) {
    // One node: it leads as soon as it campaigns.
    MutexLock lock(&term_mu_);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (coordinator_ == nullptr) {
      if (term_cv_.WaitUntil(&term_mu_, deadline) && coordinator_ == nullptr) {
        return Unavailable("this node did not become the owner within 30 s");
      }
    }
  }
  LOG_INFO("server started; id={} api={} pd={} metastore={} data_dir={}", id().value(),
           api_address(), options_.pd_endpoints.front(),
           options_.etcd_endpoints.empty() ? "embedded" : "etcd " + options_.etcd_endpoints.front(),
           options_.data_dir);
  return Status::Ok();
}

Status Server::LockDataDir() {
  std::error_code ec;
  std::filesystem::create_directories(options_.data_dir, ec);
  if (ec) return IoError("cannot create data dir " + options_.data_dir + ": " + ec.message());
  // One process per data dir: the lock is held until the process exits.
  const std::string lock_path = (std::filesystem::path(options_.data_dir) / "LOCK").string();
  lock_fd_ = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock_fd_ < 0) return IoError("cannot open " + lock_path);
  if (::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    return Unavailable("data dir " + options_.data_dir + " is in use by another sluice process");
  }
  // The data paths are caches: a restarted node starts them afresh from
  // the persisted checkpoints.
  std::filesystem::remove_all(PathsDir(), ec);
  return Status::Ok();
}

std::string Server::PathsDir() const {
  return (std::filesystem::path(options_.data_dir) / "changefeeds").string();
}

Status Server::InitUpstream() {
  pd::PdClientOptions pd_options;
  pd_options.endpoints = options_.pd_endpoints;
  ASSIGN_OR_RETURN(pd_, pd::PdClient::Connect(pd_options));
  cache_ = std::make_unique<pd::RegionCache>(pd_.get());
  puller_ = std::make_unique<logpuller::SubscriptionClient>(options_.puller.client, pd_.get(),
                                                            cache_.get());
  puller_->Start();
  return Status::Ok();
}

Status Server::InitNode() {
  node::NodeOptions o;
  o.self = id();
  o.deps.pd = pd_.get();
  o.deps.cache = cache_.get();
  o.deps.puller = puller_.get();
  o.deps.data_dir = PathsDir();
  o.deps.advance_interval = options_.puller.advance_interval;
  o.deps.clock = options_.clock;
  // Nothing goes downstream once this capture's session may have ended.
  o.deps.write_permit = [liveness = session_->liveness()]() -> Status {
    if (liveness->Alive()) return Status::Ok();
    return StaleOwner("this node's session has ended: it writes nothing more downstream");
  };
  o.lookup = [this](const std::string& id) { return LookupChangefeed(id); };
  o.clock = options_.clock;
  o.transport = node_transport_;
  o.alive_nodes = [this] {
    MutexLock lock(&members_mu_);
    return alive_;
  };
  ASSIGN_OR_RETURN(node_, node::Node::Create(std::move(o)));
  // Maintainers on any node may place dispatchers here.
  return node_->StartControl();
}

Status Server::StartApi() {
  api::ApiOptions api_options;
  ASSIGN_OR_RETURN(std::tie(api_options.host, api_options.port), SplitHostPort(options_.addr));
  api_options.cluster = cluster_.get();
  api_options.self.address = options_.advertise_addr;
  api_options.self.version = kSluiceVersion;
  api_options.self.pid = getpid();
  api_options.upstream_id = pd_->cluster_id();
  api_options.tso = tso_.get();
  ASSIGN_OR_RETURN(api_, api::ApiServer::Start(api_options));
  return Status::Ok();
}

Status Server::RegisterCapture() {
  meta::CaptureInfo capture;
  capture.id = id();
  capture.advertise_addr = AdvertiseAddress();
  capture.version = kSluiceVersion;
  {
    MutexLock lock(&transport_mu_);
    if (transport_ != nullptr) {
      capture.peer_addr = AdvertisedPeer(transport_->address(), capture.advertise_addr);
    }
  }
  capture.start_timestamp_s =
      std::chrono::duration_cast<std::chrono::seconds>(options_.clock->WallNow().time_since_epoch())
          .count();
  meta::LeaseId lease;
  {
    MutexLock lock(&term_mu_);
    lease = session_->lease();
  }
  return meta_->RegisterCapture(capture, lease).status();
}

std::string Server::AdvertiseAddress() const {
  return options_.advertise_addr.empty() ? api_address() : options_.advertise_addr;
}

Status Server::CheckAddressIsFree() {
  if (options_.etcd_endpoints.empty()) return Status::Ok();
  const std::string address = AdvertiseAddress();
  const auto deadline =
      std::chrono::steady_clock::now() + options_.capture_session_ttl + std::chrono::seconds(2);
  bool warned = false;
  while (true) {
    ASSIGN_OR_RETURN(meta::CaptureList list, meta_->ListCaptures());
    std::optional<NodeId> holder;
    for (const auto& c : list.captures) {
      if (c.value.advertise_addr == address) holder = c.value.id;
    }
    if (!holder.has_value()) return Status::Ok();
    if (std::chrono::steady_clock::now() >= deadline) {
      return AlreadyExists("another node (capture " + holder->value() +
                           ") is registered with the advertise address " + address +
                           "; two nodes cannot share an address");
    }
    if (!warned) {
      LOG_WARN("capture {} is registered at {}; waiting for it to expire", holder->value(),
               address);
      warned = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // Polling the metastore.
  }
}

Result<std::unique_ptr<messaging::GrpcTransport>> Server::StartTransport(const NodeId& id) const {
  messaging::GrpcTransportOptions o;
  o.self = id;
  o.cluster_id = options_.cluster_id;
  ASSIGN_OR_RETURN(auto api_host, SplitHostPort(api_address()));
  o.listen = options_.peer_addr.empty() ? api_host.first + ":0" : options_.peer_addr;
  Result<std::unique_ptr<messaging::GrpcTransport>> transport = messaging::GrpcTransport::Start(o);
  if (!transport.ok()) {
    return Status(transport.status().code(),
                  "--peer-addr " + o.listen + ": " + std::string(transport.status().message()));
  }
  return transport;
}

void Server::MembersLoop(const StopToken& token) {
  const std::string prefix = meta::KeyLayout(options_.cluster_id).CapturePrefix();
  std::unique_ptr<meta::WatchCursor> cursor;
  while (!token.cancelled()) {
    if (cursor == nullptr) {
      Result<std::unique_ptr<meta::WatchCursor>> watch = store_->Watch(prefix, 0);
      if (watch.ok()) cursor = std::move(*watch);
    }
    if (auto peers = RefreshPeers()) ExportPeers(*peers);
    const Clock::TimePoint deadline = options_.clock->Now() + std::chrono::seconds(1);
    if (cursor == nullptr) {
      options_.clock->SleepUntil(deadline, token);
      continue;
    }
    Result<std::vector<meta::WatchEvent>> events = cursor->Next(token, deadline);
    if (!events.ok() && events.status().code() != Code::kTimeout) cursor.reset();
  }
}

std::optional<std::vector<messaging::PeerAddress>> Server::RefreshPeers() {
  Result<meta::CaptureList> list = meta_->ListCaptures();
  if (!list.ok()) return std::nullopt;  // Kept as they are; the next round reads again.
  std::vector<messaging::PeerAddress> peers;
  std::vector<NodeId> alive;
  for (const auto& c : list->captures) {
    if (c.value.peer_addr.empty()) continue;
    peers.push_back({c.value.id, c.value.peer_addr});
    alive.push_back(c.value.id);
  }
  {
    MutexLock lock(&members_mu_);
    alive_ = std::move(alive);
  }
  MutexLock lock(&transport_mu_);
  if (transport_ != nullptr) transport_->SetPeers(peers);
  return peers;
}

void Server::ExportPeers(const std::vector<messaging::PeerAddress>& peers) {
  std::vector<NodeId> now;
  {
    MutexLock lock(&transport_mu_);
    if (transport_ == nullptr) return;
    for (const messaging::PeerAddress& p : peers) {
      if (p.id == transport_->self()) continue;
      now.push_back(p.id);
      peer_gauge_->WithLabels({p.id.value()})->Set(transport_->Connected(p.id) ? 1 : 0);
    }
  }
  for (const NodeId& old : exported_peers_) {
    if (std::find(now.begin(), now.end(), old) == now.end()) peer_gauge_->Remove({old.value()});
  }
  exported_peers_ = std::move(now);
}

NodeId Server::id() const {
  MutexLock lock(&id_mu_);
  return id_;
}

coordinator::Coordinator* Server::coordinator() const {
  MutexLock lock(&term_mu_);
  return coordinator_.get();
}

std::string Server::api_address() const {
  if (api_ == nullptr) return options_.addr;
  return api_->address();
}

void Server::Stop() {
  if (stopped_) return;
  stopped_ = true;
  LOG_INFO("server stopping; id={}", id().value());
  if (api_ != nullptr) api_->Stop();
  {
    MutexLock lock(&term_mu_);
    capture_cancel_.Cancel();  // Wakes a campaign or a term in progress.
    term_cancel_.Cancel();
  }
  owner_thread_.Stop();
  members_thread_.Stop();
  // The maintainers report their checkpoints a last time (the coordinator
  // persists them), then the data paths flush and close their sinks.
  EndTerm();
  std::unique_ptr<meta::Session> session;
  std::unique_ptr<node::Node> node;
  {
    MutexLock lock(&term_mu_);
    session = std::move(session_);
    node = std::move(node_);
  }
  if (node != nullptr) node->Stop();
  node.reset();
  {
    MutexLock lock(&transport_mu_);
    transport_.reset();  // Closes the streams to the other nodes.
  }
  if (session != nullptr) {
    if (meta_ != nullptr) (void)meta_->DeregisterCapture(id());
    // Revoking the lease also drops the candidacy: the next node leads now.
    (void)session->Close();
  }
  if (puller_ != nullptr) puller_->Stop();
  puller_.reset();
  cache_.reset();
  if (pd_ != nullptr) pd_->Stop();
  if (stop_store_) stop_store_();
  if (lock_fd_ >= 0) ::close(lock_fd_);  // Releases the data dir lock.
  lock_fd_ = -1;
  LOG_INFO("server stopped; id={}", id().value());
}

}  // namespace sluice::server
