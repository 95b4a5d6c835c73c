// Server: one Sluice node (`sluice server`). It wires the node's parts: the
// PD client, region cache and log puller shared by every changefeed; the
// metastore (the embedded store under <data-dir>/meta for a single node, or
// etcd with --etcd, shared by the nodes of a cluster); this node's session
// and capture registration; the gRPC message stream to every other
// registered node; the coordinator, on the elected owner only; the
// maintainer host and the dispatcher orchestrator; the changefeeds' data
// paths under <data-dir>/changefeeds; and the HTTP API.
//
// Ownership: every node campaigns for the owner key on its session. The
// owner runs the coordinator, which runs every changefeed's maintainer on
// the owner; each maintainer spreads its table dispatchers over every
// registered node (through the message stream). The other nodes forward the
// API's changefeed routes to the owner. When the owner goes, the next node
// in line takes over and resumes every changefeed from its persisted
// checkpoint with a new maintainer epoch, adopting the dispatchers that
// survive on the other nodes.
//
// Session loss: a node whose session is lost (its lease refused, or no
// keep-alive succeeded for a whole TTL) fences itself at once: no dispatcher
// hands anything more to its sink, no maintainer acts, the coordinator stops
// ticking. It then tears its term down and re-registers as a new capture
// (a new id, a new session) and campaigns again.
//
// Stop() is the graceful shutdown (SIGTERM): the API stops taking requests,
// every maintainer reports its checkpoint once more and the coordinator
// persists it, then the data paths close their sinks, the node resigns and
// deregisters.
//
// Threads: Start() and Stop() from the owner's thread; owns the owner thread
// (campaign, term changes), the coordinator's ticker and the session's
// keep-alive thread, besides the threads of the parts.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/lifecycle.h"
#include "common/status.h"
#include "common/thread_annotations.h"
#include "coordinator/coordinator.h"
#include "coordinator/pd_adapters.h"
#include "logpuller/subscription_client.h"
#include "messaging/grpc_transport.h"
#include "meta/election.h"
#include "meta/meta_client.h"
#include "meta/metastore.h"
#include "meta/session.h"
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
  // The cluster's etcd (--etcd); empty: the embedded store, one node.
  std::vector<std::string> etcd_endpoints;
  std::string addr = "127.0.0.1:8300";  // HTTP API; port 0 picks one.
  std::string advertise_addr;           // Default: the bound API address.
  // Where the node-to-node stream listens (--peer-addr, Sluice's own);
  // empty: the API's host with a free port. Registered in the capture info.
  std::string peer_addr;
  std::string data_dir;  // Required.
  std::string cluster_id = "default";
  int64_t gc_ttl_seconds = 86400;  // TiCDC's gc-ttl.
  // TiCDC's capture-session-ttl: how long a node may go silent before the
  // others take its place.
  Clock::Duration capture_session_ttl = std::chrono::seconds(10);
  PullerConfig puller;  // [puller] / --puller-*.
  Clock* clock = Clock::Real();
  // Coordinator retry backoff; TiCDC's defaults unless a test shortens them.
  Clock::Duration backoff_initial = std::chrono::seconds(10);
  Clock::Duration backoff_max = std::chrono::minutes(10);
};

class Server {
 public:
  // Starts every part and enters the election; the first error stops what
  // was started. On the embedded store, returns once this node is the owner.
  // Errors: kInvalidArgument for bad options, the PD client's error when PD
  // is not reachable, the metastore's when etcd is not, kUnavailable when
  // the API address cannot be bound.
  static Result<std::unique_ptr<Server>> Start(ServerOptions options);
  ~Server();  // Stop()s.
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // The graceful shutdown described above. Idempotent.
  void Stop();

  // This node's capture id now.
  NodeId id() const EXCLUDES(id_mu_);
  // The bound API address ("host:port").
  std::string api_address() const;
  // The coordinator while this node is the owner, else null. Tests only:
  // the pointer is valid until the term ends.
  coordinator::Coordinator* coordinator() const EXCLUDES(term_mu_);
  bool is_owner() const EXCLUDES(term_mu_) { return coordinator() != nullptr; }
  // POST /api/v2/owner/resign: the owner ends its term (gracefully: its
  // changefeeds stop and report their checkpoints), then leaves the election
  // and campaigns again, behind the other candidates. kNotFound on a node
  // that is not the owner.
  Status ResignOwner() EXCLUDES(term_mu_);

 private:
  class Cluster;
  explicit Server(ServerOptions options);
  // Init() runs the steps below in order; a failed step leaves what the
  // earlier ones started for Stop().
  Status Init();
  Status LockDataDir();   // Creates and locks the data dir; clears the path cache.
  Status InitMeta();      // The metadata store and the election.
  Status InitUpstream();  // PD client, region cache, log puller.
  Status StartApi();
  // On etcd: no other live node may be registered with this node's
  // advertised address. Waits up to one session TTL for a registration left
  // by a crashed earlier run of this node to expire; kAlreadyExists if one
  // stays.
  Status CheckAddressIsFree();
  std::string AdvertiseAddress() const;
  // A new capture: a fresh id and session, its data plane, its registration.
  Status StartCapture() EXCLUDES(term_mu_);
  Status InitNode() REQUIRES(term_mu_);
  Status RegisterCapture() EXCLUDES(term_mu_);  // This node's capture info, on its lease.

  // The owner thread: campaign, serve a term as the owner, step down;
  // after a session loss, a new capture campaigns again.
  void OwnerLoop(const StopToken& token);
  Status BecomeOwner() EXCLUDES(term_mu_);
  // Ends a term: the API forwards again, the ticker stops, the node stops
  // (gracefully unless fenced: its maintainers report a last time) and the
  // coordinator goes. StepDown() then puts a fresh node in place.
  void EndTerm() EXCLUDES(term_mu_);
  void StepDown() EXCLUDES(term_mu_);
  // The session's loss callback: fences at once, wakes the owner thread.
  void OnSessionLost(const Status& why) EXCLUDES(term_mu_);
  CancelToken CaptureToken() const EXCLUDES(term_mu_);
  // A fresh term's token (cancelled on session loss, resign and stop).
  CancelToken NewTermToken() EXCLUDES(term_mu_);
  meta::LeaseId session_lease() const EXCLUDES(term_mu_);
  bool fenced() const EXCLUDES(term_mu_);
  // The owner's API address, from its capture info.
  std::optional<std::string> OwnerAddress();
  // A transport for capture `id`, listening on the peer address.
  Result<std::unique_ptr<messaging::GrpcTransport>> StartTransport(const NodeId& id) const;
  // The members thread: follows the registered captures (a watch on their
  // keys, re-read at least every second) and hands them to the transport.
  void MembersLoop(const StopToken& token);
  // Hands the registered captures to the transport; returns them (nullopt
  // if the metastore could not be read).
  std::optional<std::vector<messaging::PeerAddress>> RefreshPeers();
  // sluice_peer_connected{peer} for `peers` (members thread only).
  void ExportPeers(const std::vector<messaging::PeerAddress>& peers);

  std::string PathsDir() const;
  Result<meta::ChangefeedInfo> LookupChangefeed(const std::string& id);

  const ServerOptions options_;
  std::unique_ptr<pd::PdClient> pd_;
  std::unique_ptr<pd::RegionCache> cache_;
  std::unique_ptr<logpuller::SubscriptionClient> puller_;
  std::unique_ptr<meta::MetaStore> store_;
  std::function<void()> stop_store_;
  std::unique_ptr<meta::MetaClient> meta_;
  std::unique_ptr<meta::Election> election_;
  std::unique_ptr<coordinator::PdTsoSource> tso_;
  std::unique_ptr<coordinator::PdGcSafepointUpdater> gc_;
  std::unique_ptr<Cluster> cluster_;
  std::unique_ptr<api::ApiServer> api_;

  // The current capture and term. The owner thread (and Init/Stop before
  // and after it) replaces them; the session thread only fences through
  // them, under term_mu_.
  mutable Mutex id_mu_;
  NodeId id_ GUARDED_BY(id_mu_);
  mutable Mutex term_mu_;
  CondVar term_cv_;  // A term began.
  std::unique_ptr<meta::Session> session_ GUARDED_BY(term_mu_);
  CancelSource capture_cancel_ GUARDED_BY(term_mu_);  // Cancelled on session loss.
  CancelSource term_cancel_ GUARDED_BY(term_mu_);     // Ends the term (loss, resign).
  bool resign_requested_ GUARDED_BY(term_mu_) = false;
  std::unique_ptr<node::Node> node_ GUARDED_BY(term_mu_);
  std::unique_ptr<coordinator::Coordinator> coordinator_ GUARDED_BY(term_mu_);
  std::unique_ptr<OwnedThread> ticker_ GUARDED_BY(term_mu_);
  bool fenced_ GUARDED_BY(term_mu_) = false;

  // The current capture's transport. Replaced (old one stopped first, so
  // that a fixed peer port is free) only by StartCapture.
  Mutex transport_mu_ ACQUIRED_BEFORE(term_mu_);
  std::unique_ptr<messaging::GrpcTransport> transport_ GUARDED_BY(transport_mu_);
  // The same transport, for the node; set with transport_.
  messaging::Transport* node_transport_ GUARDED_BY(term_mu_) = nullptr;

  OwnedThread owner_thread_;
  OwnedThread members_thread_;
  GaugeFamily* const peer_gauge_;       // sluice_peer_connected{peer}.
  std::vector<NodeId> exported_peers_;  // Members thread only.
  // The registered nodes that serve the message stream, as last read.
  mutable Mutex members_mu_;
  std::vector<NodeId> alive_ GUARDED_BY(members_mu_);
  int lock_fd_ = -1;  // flock on <data-dir>/LOCK.
  bool stopped_ = false;
};

}  // namespace sluice::server
