// GrpcTransport: the Transport between the nodes of a cluster, one gRPC
// stream per pair of nodes (proto/sluice_peer.proto, service PeerMessaging).
//
// Who dials: of two nodes, the one whose id sorts lower opens the stream;
// both send on it. The first envelope each way is a hello naming both nodes
// and the cluster. The accepting side refuses a stream from a node that is
// not among its registered peers (SetPeers: the captures in the metastore),
// from the wrong side of the pair, for another node or from another cluster.
// A newer stream from the same peer replaces the older one.
//
// Sending: Send() queues into the peer's bounded queue (messages and bytes);
// a full queue is Busy, a node that is not a registered peer Unavailable. A
// writer thread per peer drains the queue into the stream; while the peer is
// unreachable the queue holds (bounded), and an envelope leaves the queue
// only once written, so one may arrive twice around a reconnect (the control
// protocol tolerates resends). The dialing side reconnects with backoff.
//
// Receiving: each stream's reader hands envelopes to the receiver, one at a
// time per peer. An envelope whose `from` is not the stream's peer, or whose
// `to` is not this node, is dropped and counted; so is everything from a
// peer once SetPeers no longer lists it (its stream is cancelled).
//
// Threads: per peer a writer thread, and on the dialing side a dialer thread
// that also reads; on the accepting side gRPC's handler thread reads. All
// owned and joined by Stop() (or SetPeers removing the peer). Every public
// method is thread-safe; SetReceiver is not to be called from the receiver.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "common/thread_annotations.h"
#include "messaging/transport.h"

namespace grpc {
class Server;
}

namespace sluice::messaging {

// A registered node and where its PeerMessaging service listens.
struct PeerAddress {
  NodeId id;
  std::string address;  // host:port
};

struct GrpcTransportOptions {
  NodeId self;
  std::string cluster_id = "default";
  // host:port to serve on; port 0 picks a free port (see address()).
  std::string listen = "127.0.0.1:0";
  // Per peer: envelopes and payload bytes queued before Send() is Busy.
  size_t queue_messages = 4096;
  size_t queue_bytes = 64 << 20;
  BackoffOptions reconnect{std::chrono::milliseconds(50), std::chrono::seconds(2), 2.0};
};

// Counters since Start(); relaxed atomics, not a consistent snapshot.
struct GrpcTransportStats {
  uint64_t sent = 0;               // Envelopes written to a stream.
  uint64_t received = 0;           // Envelopes handed to the receiver.
  uint64_t queue_full = 0;         // Send() refused with Busy.
  uint64_t unknown_peer = 0;       // Send() refused with Unavailable.
  uint64_t streams_opened = 0;     // Handshakes completed, either side.
  uint64_t streams_refused = 0;    // Incoming streams refused at the hello.
  uint64_t rejected = 0;           // Envelopes dropped for a wrong from/to.
  uint64_t dropped_unknown = 0;    // Envelopes dropped: peer no longer registered.
  uint64_t dropped_on_remove = 0;  // Queued for a peer that was removed or at Stop().
};

class GrpcTransport final : public Transport {
 public:
  // Binds and starts serving. kInvalidArgument for an empty id;
  // kUnavailable if `listen` cannot be bound.
  static Result<std::unique_ptr<GrpcTransport>> Start(GrpcTransportOptions options);
  ~GrpcTransport() override;  // Stop()s.
  GrpcTransport(const GrpcTransport&) = delete;
  GrpcTransport& operator=(const GrpcTransport&) = delete;

  // Closes every stream, drops what is queued (counted), joins every
  // thread and stops serving. Idempotent.
  void Stop() EXCLUDES(mu_);

  // The bound address, host:port.
  const std::string& address() const { return address_; }

  // The registered nodes. A peer no longer listed is closed (its queue
  // dropped, its stream cancelled); a new one is connected; a changed
  // address reconnects. This node's own entry is ignored.
  void SetPeers(const std::vector<PeerAddress>& peers) EXCLUDES(mu_);
  // Whether a stream to `peer` is established now.
  bool Connected(const NodeId& peer) const EXCLUDES(mu_);

  const NodeId& self() const override { return options_.self; }
  void SetReceiver(Receiver receiver) override EXCLUDES(receiver_mu_);
  Status Send(heartbeatpb::MessageEnvelope envelope) override EXCLUDES(mu_);

  GrpcTransportStats stats() const;

 private:
  class Link;
  class Service;
  class Stream;
  struct Counters;

  explicit GrpcTransport(GrpcTransportOptions options);
  Status Serve();
  std::shared_ptr<Link> FindLink(const NodeId& peer) const EXCLUDES(mu_);
  // Checks and hands one envelope that arrived on `link`'s stream to the
  // receiver.
  void Deliver(Link* link, const heartbeatpb::MessageEnvelope& envelope) EXCLUDES(receiver_mu_);
  heartbeatpb::MessageEnvelope Hello(const NodeId& to) const;
  // OK if `hello` is a valid first envelope from `from` side for this node.
  Status CheckHello(const heartbeatpb::MessageEnvelope& hello) const;

  const GrpcTransportOptions options_;
  const std::unique_ptr<Counters> counters_;
  std::unique_ptr<Service> service_;
  std::unique_ptr<grpc::Server> server_;
  std::string address_;

  mutable Mutex mu_;
  bool stopped_ GUARDED_BY(mu_) = false;
  std::map<NodeId, std::shared_ptr<Link>> links_ GUARDED_BY(mu_);

  // The receiver and the calls into it in progress, by receiver generation,
  // so that SetReceiver can wait for the old one's calls to return.
  Mutex receiver_mu_;
  CondVar receiver_cv_;
  std::shared_ptr<Receiver> receiver_ GUARDED_BY(receiver_mu_);
  uint64_t receiver_generation_ GUARDED_BY(receiver_mu_) = 0;
  std::map<uint64_t, int> receiver_calls_ GUARDED_BY(receiver_mu_);
};

}  // namespace sluice::messaging
