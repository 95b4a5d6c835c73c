#include "server/server.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <filesystem>
#include <random>
#include <system_error>

#include "api/api_server.h"
#include "common/logging.h"

namespace sluice::server {

namespace {

NodeId NewNodeId() {
  std::random_device rd;
  std::mt19937_64 rng((static_cast<uint64_t>(rd()) << 32) ^ rd() ^ getpid());
  const uint64_t a = rng();
  const uint64_t b = rng();
  return NodeId(fmt::format("{:08x}-{:04x}-{:04x}-{:04x}-{:012x}", a >> 32, (a >> 16) & 0xffff,
                            a & 0xffff, b >> 48, b & 0xffffffffffffULL));
}

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

}  // namespace

// This node as the coordinator and the API see the cluster: one node, always
// the owner, registered in the metastore.
class Server::Cluster final : public coordinator::NodeMembership, public api::ClusterInfo {
 public:
  Cluster(const NodeId& self, meta::MetaClient* meta, std::string cluster_id)
      : self_(self), meta_(meta), cluster_id_(std::move(cluster_id)) {}

  std::vector<NodeId> AliveNodes() const override { return {self_}; }
  std::vector<meta::CaptureInfo> Captures() override {
    std::vector<meta::CaptureInfo> out;
    Result<meta::CaptureList> list = meta_->ListCaptures();
    if (!list.ok()) return out;
    for (auto& c : list->captures) out.push_back(std::move(c.value));
    return out;
  }
  std::optional<NodeId> Owner() override { return self_; }
  std::string ClusterId() override { return cluster_id_; }

 private:
  const NodeId self_;
  meta::MetaClient* const meta_;
  const std::string cluster_id_;
};

Server::Server(ServerOptions options) : options_(std::move(options)), id_(NewNodeId()) {}

Server::~Server() { Stop(); }

Result<std::unique_ptr<Server>> Server::Start(ServerOptions options) {
  if (options.data_dir.empty()) return InvalidArgument("--data-dir is required");
  if (options.pd_endpoints.empty()) return InvalidArgument("--pd is required");
  RETURN_IF_ERROR(SplitHostPort(options.addr).status());
  std::unique_ptr<Server> s(new Server(std::move(options)));
  Status st = s->Init();
  if (!st.ok()) {
    s->Stop();
    return st;
  }
  return s;
}

Status Server::InitMeta() {
  meta::EmbeddedStoreOptions store_options;
  store_options.dir = (std::filesystem::path(options_.data_dir) / "meta").string();
  store_options.clock = options_.clock;
  ASSIGN_OR_RETURN(store_, meta::EmbeddedMetaStore::Open(store_options));
  meta_ = std::make_unique<meta::MetaClient>(store_.get(), meta::KeyLayout(options_.cluster_id));
  ASSIGN_OR_RETURN(meta::LeaseGrant lease, store_->GrantLease(std::chrono::seconds(10)));
  lease_ = lease.id;
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
  RETURN_IF_ERROR(InitNode());
  RETURN_IF_ERROR(InitCoordinator());
  RETURN_IF_ERROR(StartApi());
  RETURN_IF_ERROR(RegisterCapture());
  LOG_INFO("server started; id={} api={} pd={} data_dir={}", id_.value(), api_address(),
           options_.pd_endpoints.front(), options_.data_dir);
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
  o.self = id_;
  o.deps.pd = pd_.get();
  o.deps.cache = cache_.get();
  o.deps.puller = puller_.get();
  o.deps.data_dir = PathsDir();
  o.deps.advance_interval = options_.puller.advance_interval;
  o.deps.clock = options_.clock;
  o.lookup = [this](const std::string& id) { return LookupChangefeed(id); };
  o.clock = options_.clock;
  ASSIGN_OR_RETURN(node_, node::Node::Create(std::move(o)));
  return Status::Ok();
}

Status Server::InitCoordinator() {
  tso_ = std::make_unique<coordinator::PdTsoSource>(pd_.get());
  gc_ = std::make_unique<coordinator::PdGcSafepointUpdater>(pd_.get());
  cluster_ = std::make_unique<Cluster>(id_, meta_.get(), options_.cluster_id);
  coordinator::CoordinatorOptions co;
  co.clock = options_.clock;
  co.meta = meta_.get();
  co.maintainers = node_->host();
  co.nodes = cluster_.get();
  co.tso = tso_.get();
  co.gc_updater = gc_.get();
  co.gc.ttl_seconds = options_.gc_ttl_seconds;
  co.self_addr = options_.addr;
  co.backoff_initial = options_.backoff_initial;
  co.backoff_max = options_.backoff_max;
  ASSIGN_OR_RETURN(coordinator_, coordinator::Coordinator::Open(co));
  RETURN_IF_ERROR(node_->Start(coordinator_.get()));
  ticker_.Start("coord-tick", [this](const StopToken& token) {
    while (!token.cancelled()) {
      coordinator_->Tick();
      if (lease_.value() != 0) (void)store_->KeepAlive(lease_);
      options_.clock->SleepFor(std::chrono::milliseconds(100), token);
    }
  });
  return Status::Ok();
}

Status Server::StartApi() {
  api::ApiOptions api_options;
  ASSIGN_OR_RETURN(std::tie(api_options.host, api_options.port), SplitHostPort(options_.addr));
  api_options.coordinator = coordinator_.get();
  api_options.cluster = cluster_.get();
  api_options.self.id = id_;
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
  capture.id = id_;
  capture.advertise_addr =
      options_.advertise_addr.empty() ? api_address() : options_.advertise_addr;
  capture.version = kSluiceVersion;
  capture.start_timestamp_s =
      std::chrono::duration_cast<std::chrono::seconds>(options_.clock->WallNow().time_since_epoch())
          .count();
  return meta_->RegisterCapture(capture, lease_).status();
}

std::string Server::api_address() const {
  if (api_ == nullptr) return options_.addr;
  return api_->address();
}

void Server::Stop() {
  if (stopped_) return;
  stopped_ = true;
  LOG_INFO("server stopping; id={}", id_.value());
  if (api_ != nullptr) api_->Stop();
  ticker_.Stop();
  // The maintainers report their checkpoints a last time (the coordinator
  // persists them), then the data paths flush and close their sinks.
  if (node_ != nullptr) node_->Stop();
  coordinator_.reset();
  if (meta_ != nullptr) (void)meta_->DeregisterCapture(id_);
  if (puller_ != nullptr) puller_->Stop();
  node_.reset();
  puller_.reset();
  cache_.reset();
  if (pd_ != nullptr) pd_->Stop();
  if (store_ != nullptr) store_->Stop();
  if (lock_fd_ >= 0) ::close(lock_fd_);  // Releases the data dir lock.
  lock_fd_ = -1;
  LOG_INFO("server stopped; id={}", id_.value());
}

}  // namespace sluice::server
