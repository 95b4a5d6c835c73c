// InMemoryNetwork: a fake network of nodes in one process, for tests. Each
// node gets a Transport; envelopes travel as serialized bytes (the same wire
// form a gRPC stream carries) through a per-node inbox, and each node's
// delivery thread hands them to its receiver in arrival order.
//
// It keeps state and fails on command, per directed link (from -> to):
//  - SetLinkDown: Send() fails with Unavailable (a broken connection);
//  - DropNext: the next n envelopes are accepted and then lost;
//  - CorruptNext: the next n envelopes arrive with a payload that does not
//    parse;
//  - Hold / Release: envelopes wait until Release(), which delivers them in
//    send order (a delay) or reversed (a reorder).
// Inboxes are unbounded: back-pressure comes from the receiver, which may
// block the destination's delivery thread.
//
// Threads: one owned delivery thread per node. Every method is thread-safe.
// Stop() (also run by the destructor) drops what is queued and joins the
// delivery threads; receivers must have been removed or must return
// promptly. The network owns the transports; they live as long as it does,
// so it must outlive every MessageCenter that uses them.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/thread_annotations.h"
#include "messaging/transport.h"

namespace sluice::messaging {

enum class ReleaseOrder { kInOrder, kReversed };

struct InMemoryNetworkStats {
  uint64_t sent = 0;             // Accepted by Send().
  uint64_t refused = 0;          // Send() failed: link down or unknown node.
  uint64_t dropped = 0;          // Lost by DropNext.
  uint64_t corrupted = 0;        // Mangled by CorruptNext.
  uint64_t delivered = 0;        // Handed to a receiver.
  uint64_t receiver_errors = 0;  // ... whose Status was not OK.
  uint64_t no_receiver = 0;      // Arrived while the node had no receiver.
  uint64_t dropped_on_stop = 0;  // Queued or held when Stop() ran.
};

class InMemoryNetwork {
 public:
  InMemoryNetwork();
  ~InMemoryNetwork();
  InMemoryNetwork(const InMemoryNetwork&) = delete;
  InMemoryNetwork& operator=(const InMemoryNetwork&) = delete;

  // Adds a node and starts its delivery thread. Returns nullptr if the node
  // exists already or the network is stopped.
  Transport* AddNode(const NodeId& node) EXCLUDES(mu_);

  void Stop() EXCLUDES(mu_);

  void SetLinkDown(const NodeId& from, const NodeId& to, bool down) EXCLUDES(mu_);
  void DropNext(const NodeId& from, const NodeId& to, size_t n) EXCLUDES(mu_);
  void CorruptNext(const NodeId& from, const NodeId& to, size_t n) EXCLUDES(mu_);
  void Hold(const NodeId& from, const NodeId& to) EXCLUDES(mu_);
  // Stops holding the link and delivers what it held. Returns how many.
  size_t Release(const NodeId& from, const NodeId& to, ReleaseOrder order) EXCLUDES(mu_);
  size_t HeldCount(const NodeId& from, const NodeId& to) const EXCLUDES(mu_);

  // Waits (real time, at most `timeout`) until every queued envelope has
  // been handed to its receiver (held ones do not count). Returns whether
  // that happened.
  bool WaitIdle(std::chrono::milliseconds timeout = std::chrono::seconds(5)) EXCLUDES(mu_);

  InMemoryNetworkStats stats() const EXCLUDES(mu_);

 private:
  class Endpoint;
  struct Link {
    bool down = false;
    size_t drop_next = 0;
    size_t corrupt_next = 0;
    bool holding = false;
    std::vector<std::string> held;  // Serialized envelopes, in send order.
  };
  using LinkKey = std::pair<NodeId, NodeId>;

  Status Route(const NodeId& from, heartbeatpb::MessageEnvelope envelope) EXCLUDES(mu_);
  void EnqueueLocked(Endpoint* to, std::string wire) REQUIRES(mu_);
  void OnDelivered(bool had_receiver, const Status& status) EXCLUDES(mu_);

  mutable Mutex mu_;
  CondVar idle_;
  bool stopped_ GUARDED_BY(mu_) = false;
  std::map<NodeId, std::unique_ptr<Endpoint>> endpoints_ GUARDED_BY(mu_);
  std::map<LinkKey, Link> links_ GUARDED_BY(mu_);
  size_t pending_ GUARDED_BY(mu_) = 0;  // In inboxes or being delivered.
  InMemoryNetworkStats stats_ GUARDED_BY(mu_);
};

}  // namespace sluice::messaging
