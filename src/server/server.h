// Server: one Sluice node (`sluice server`). It wires the node's parts:
// the PD client, region cache and log puller shared by every changefeed;
// the embedded metastore under <data-dir>/meta with this node registered as
// a capture; the coordinator (this node is the only one, so always the
// owner); the maintainer host and the dispatcher orchestrator; the
// changefeeds' data paths under <data-dir>/changefeeds; and the HTTP API.
//
// Stop() is the graceful shutdown (SIGTERM): the API stops taking requests,
// every maintainer reports its checkpoint once more and the coordinator
// persists it, then the data paths close their sinks and the node
// deregisters.
//
// Threads: Start() and Stop() from the owner's thread; owns a ticker thread
// (coordinator ticks) besides the threads of the parts.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/lifecycle.h"
#include "common/status.h"
#include "coordinator/coordinator.h"
#include "coordinator/pd_adapters.h"
#include "logpuller/subscription_client.h"
#include "meta/embedded_store.h"
#include "meta/meta_client.h"
#include "node/node.h"
#include "pd/pd_client.h"
#include "pd/region_cache.h"
#include "server/puller_config.h"

namespace sluice::api {
class ApiServer;
}

namespace sluice::server {

inline constexpr const char* kSluiceVersion = "v0.1.0-sluice";

struct ServerOptions {
  std::vector<std::string> pd_endpoints{"127.0.0.1:2379"};
  std::string addr = "127.0.0.1:8300";  // HTTP API; port 0 picks one.
  std::string advertise_addr;           // Default: the bound API address.
  std::string data_dir;                 // Required.
  std::string cluster_id = "default";
  int64_t gc_ttl_seconds = 86400;  // TiCDC's gc-ttl.
  PullerConfig puller;             // [puller] / --puller-*.
  Clock* clock = Clock::Real();
  // Coordinator retry backoff; TiCDC's defaults unless a test shortens them.
  Clock::Duration backoff_initial = std::chrono::seconds(10);
  Clock::Duration backoff_max = std::chrono::minutes(10);
};

class Server {
 public:
  // Starts every part; the first error stops what was started. Errors:
  // kInvalidArgument for bad options, the PD client's error when PD is not
  // reachable, kUnavailable when the API address cannot be bound.
  static Result<std::unique_ptr<Server>> Start(ServerOptions options);
  ~Server();  // Stop()s.
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // The graceful shutdown described above. Idempotent.
  void Stop();

  const NodeId& id() const { return id_; }
  // The bound API address ("host:port").
  std::string api_address() const;
  coordinator::Coordinator* coordinator() const { return coordinator_.get(); }

 private:
  class Cluster;
  explicit Server(ServerOptions options);
  // Init() runs the steps below in order; a failed step leaves what the
  // earlier ones started for Stop().
  Status Init();
  Status LockDataDir();      // Creates and locks the data dir; clears the path cache.
  Status InitMeta();         // The metadata store and this node's lease.
  Status InitUpstream();     // PD client, region cache, log puller.
  Status InitNode();         // The node's data plane and control endpoints.
  Status InitCoordinator();  // The coordinator and its ticker.
  Status StartApi();
  Status RegisterCapture();  // This node's capture info, on its lease.
  std::string PathsDir() const;
  Result<meta::ChangefeedInfo> LookupChangefeed(const std::string& id);

  const ServerOptions options_;
  NodeId id_;
  std::unique_ptr<pd::PdClient> pd_;
  std::unique_ptr<pd::RegionCache> cache_;
  std::unique_ptr<logpuller::SubscriptionClient> puller_;
  std::unique_ptr<meta::EmbeddedMetaStore> store_;
  std::unique_ptr<meta::MetaClient> meta_;
  meta::LeaseId lease_;
  std::unique_ptr<node::Node> node_;
  std::unique_ptr<coordinator::PdTsoSource> tso_;
  std::unique_ptr<coordinator::PdGcSafepointUpdater> gc_;
  std::unique_ptr<Cluster> cluster_;
  std::unique_ptr<coordinator::Coordinator> coordinator_;
  std::unique_ptr<api::ApiServer> api_;
  OwnedThread ticker_;
  int lock_fd_ = -1;  // flock on <data-dir>/LOCK.
  bool stopped_ = false;
};

}  // namespace sluice::server
