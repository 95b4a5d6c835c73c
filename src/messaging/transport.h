// Transport: moves wire envelopes between nodes. The MessageCenter uses it
// for every message whose destination is another node; messages to the own
// node never reach it. The in-memory network (in_memory_transport.h)
// implements it for tests; the gRPC stream between nodes will implement it
// for clusters.
#pragma once

#include <functional>

#include "common/status.h"
#include "common/strong_id.h"
#include "sluice_heartbeat.pb.h"

namespace sluice::messaging {

// What an implementation promises:
//  - Order: envelopes that Send() accepted for one peer reach that peer's
//    receiver in the order Send() was called (one stream per peer). Across
//    peers there is no order.
//  - Threads: Send() may be called from any thread and does not block for
//    long (it queues). The receiver is called from the transport's own
//    reader thread(s), one call at a time per sending peer, never from a
//    thread that must not block: the receiver may block (up to the
//    MessageCenter's command timeout) to push back on a peer that floods it.
//  - Loss: an accepted envelope may still be lost if the connection breaks;
//    senders of commands retry at the protocol level (bootstrap resends).
class Transport {
 public:
  // Gets every envelope addressed to this node. Its Status is the outcome
  // of the delivery (e.g. NotFound for an unknown topic); a transport may
  // count or log it but must not stop delivering because of it.
  using Receiver = std::function<Status(heartbeatpb::MessageEnvelope envelope)>;

  virtual ~Transport() = default;

  // The node this transport sends from and receives for.
  virtual const NodeId& self() const = 0;

  // Installs the receiver (nullptr removes it). When SetReceiver returns,
  // the previous receiver is not running and will not be called again.
  // Envelopes that arrive without a receiver are dropped. Not to be called
  // from inside the receiver.
  virtual void SetReceiver(Receiver receiver) = 0;

  // Queues `envelope` for the node named by envelope.to(). OK means
  // accepted, not delivered. Unavailable (retryable) if the peer is unknown
  // or unreachable; Busy (retryable) if the stream to it is congested.
  virtual Status Send(heartbeatpb::MessageEnvelope envelope) = 0;
};

}  // namespace sluice::messaging
