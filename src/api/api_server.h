// ApiServer: TiCDC's HTTP API v2 (api/v2) over the Coordinator, on
// cpp-httplib. Routes, JSON shapes and error codes follow TiCDC; the list
// is in src/api/README.md.
//
// Threads: one owned listening thread (joined by Stop()) plus httplib's
// worker pool, which runs the handlers concurrently. Handlers call the
// Coordinator (thread-safe), the ClusterInfo (must be thread-safe), the
// TsoSource (must be thread-safe) and the metrics Registry (thread-safe). Start(), Stop() and the
// destructor are for the owner; port() and address() may be called from any thread.
//
// Ownership: the coordinator, cluster info, TSO source and registry are
// borrowed and must outlive the server (Stop() it first). Handlers never
// throw out of the server: parse errors are 4xx replies, anything unexpected is a 500
// with CDC:ErrInternalServerError.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/changefeed_api.h"
#include "common/lifecycle.h"
#include "common/metrics.h"
#include "common/status.h"
#include "common/strong_id.h"
#include "common/thread_annotations.h"
#include "coordinator/coordinator.h"
#include "coordinator/interfaces.h"
#include "meta/model.h"

namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace sluice::api {

// A node's lifecycle as TiCDC reports it in /api/v2/status (an integer).
enum class Liveness : int { kAlive = 0, kDraining = 1, kStopping = 2 };

// What the API reports about the cluster. Implementations must be
// thread-safe: httplib workers call them concurrently.
class ClusterInfo {
 public:
  virtual ~ClusterInfo() = default;
  // The registered (alive) nodes.
  virtual std::vector<meta::CaptureInfo> Captures() = 0;
  // The node that owns the coordinator, if known.
  virtual std::optional<NodeId> Owner() = 0;
  // The cluster id (TiCDC's etcd cluster id, "default" by default).
  virtual std::string ClusterId() = 0;
  // This node's liveness; /api/v2/health is 200 only while alive.
  virtual Liveness SelfLiveness() { return Liveness::kAlive; }
  // This node's capture id now (it changes when the node re-registers after
  // losing its session); empty: ServerIdentity::id.
  virtual NodeId SelfId() { return NodeId(); }
  // The owner's API address ("host:port"), where a node without the
  // coordinator forwards the changefeed routes; nullopt if unknown.
  virtual std::optional<std::string> OwnerAddress() { return std::nullopt; }
  // On the owner: end its term and let another node lead (POST
  // /api/v2/owner/resign). Returns at once; the hand-over follows.
  virtual Status ResignOwner() { return NotSupported("resigning is not supported here"); }
};

// This node, as /api/v2/status reports it.
struct ServerIdentity {
  NodeId id;
  std::string address;  // Advertised host:port.
  std::string version;
  std::string git_hash;
  int64_t pid = 0;  // 0: the current process id.
};

struct ApiOptions {
  std::string host = "127.0.0.1";
  int port = 8300;  // 0: any free port; see ApiServer::port().
  // The coordinator, on the owner; null on the other nodes, which forward
  // the changefeed routes to the owner (see SetCoordinator()).
  coordinator::Coordinator* coordinator = nullptr;
  ClusterInfo* cluster = nullptr;
  // PD's TSO for POST /api/v2/tso; must be thread-safe. Null: that route
  // answers 503 (as TiCDC does without an upstream).
  coordinator::TsoSource* tso = nullptr;
  ServerIdentity self;
  Registry* metrics = Registry::Default();
  uint64_t upstream_id = 0;  // PD cluster id, recorded in new changefeeds.
  // Sink schemes the nodes can open; other URIs are CDC:ErrSinkURIInvalid.
  std::vector<std::string> sink_schemes = {"mysql",    "mysql+ssl", "tidb",
                                           "tidb+ssl", "file",      "blackhole"};
  // Larger request bodies get 413 with CDC:ErrAPIInvalidParam.
  size_t max_body_bytes = 1 << 20;
};

class ApiServer {
 public:
  // Binds host:port and starts serving. kInvalidArgument for missing
  // dependencies, an empty host or a port outside 0..65535; kUnavailable
  // when the address cannot be bound (in use, unknown host).
  [[nodiscard]] static Result<std::unique_ptr<ApiServer>> Start(ApiOptions options);

  ~ApiServer();
  ApiServer(const ApiServer&) = delete;
  ApiServer& operator=(const ApiServer&) = delete;

  // Stops accepting, waits for in-flight requests and joins the listening
  // thread. Idempotent.
  void Stop() EXCLUDES(mu_);

  // This node gained (non-null) or lost (null) the coordinator. Without one,
  // the changefeed routes are forwarded to the owner (at most one hop: a
  // forwarded request that meets another non-owner gets 503
  // CDC:ErrOwnerNotFound). Returns once no request uses the old coordinator
  // any more, so the caller may then destroy it.
  void SetCoordinator(coordinator::Coordinator* coordinator) EXCLUDES(coord_mu_);

  // The bound port (the chosen one when options.port was 0).
  int port() const { return port_; }
  std::string address() const { return options_.host + ":" + std::to_string(port_); }

 private:
  explicit ApiServer(ApiOptions options);

  Status Bind();
  void RegisterRoutes();
  void RegisterServerRoutes();
  void RegisterChangefeedRoutes();
  void OnRequestDone(const httplib::Request& req, const httplib::Response& res);
  Reply ServerStatus();
  Reply Health();
  Reply Captures();
  Reply QueryTso(const std::string& body);
  std::string NodeAddress(const NodeId& node);
  NodeId SelfId() const;
  // Runs `f` with the changefeed routes of this node's coordinator, or
  // forwards the request to the owner when there is none.
  template <typename F>
  Reply OnOwner(const httplib::Request& req, F f) EXCLUDES(coord_mu_);
  Reply ForwardToOwner(const httplib::Request& req);
  ChangefeedApiOptions ChangefeedOptions(coordinator::Coordinator* coordinator);

  const ApiOptions options_;
  Mutex coord_mu_;
  CondVar coord_cv_;  // in_flight_ dropped.
  std::unique_ptr<ChangefeedApi> changefeeds_ GUARDED_BY(coord_mu_);
  int in_flight_ GUARDED_BY(coord_mu_) = 0;  // Requests using changefeeds_.
  std::unique_ptr<httplib::Server> server_;
  CounterFamily* requests_ = nullptr;
  int port_ = 0;
  OwnedThread listener_;
  Mutex mu_;
  CondVar listener_done_cv_;
  bool listener_done_ GUARDED_BY(mu_) = false;
};

}  // namespace sluice::api
