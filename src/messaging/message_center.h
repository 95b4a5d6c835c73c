// MessageCenter: typed messages between the coordinator, maintainers and
// dispatcher managers, on one node or across nodes.
//
// A component registers a handler for its topic; anyone sends a
// TargetMessage to (node, topic). Messages for the own node are delivered
// in-process without serialization; messages for other nodes go through a
// Transport. The implementation is MessageCenterImpl (message_center_impl.h).
#pragma once

#include <functional>
#include <string_view>

#include "common/status.h"
#include "common/strong_id.h"
#include "messaging/message.h"

namespace sluice::messaging {

// Handles one message. Runs on the topic's delivery thread, one message at a
// time, so a handler needs no locking against itself. It must return
// promptly (it holds up every later message of its topic, and Stop() and
// DeregisterHandler() wait for it). A non-OK result is logged with the
// message header and counted; it never stops delivery.
using Handler = std::function<Status(const TargetMessage& msg)>;

// Delivery promises:
//  - Order: messages that one thread sends to one (node, topic) are
//    handled in the order sent, as long as the transport keeps them.
//  - Events (SendEvent) may be dropped when the destination is congested;
//    the caller gets Busy and the drop is counted. Periodic state
//    (heartbeats, checkpoints) is sent as events.
//  - Commands (SendCommand) are never dropped silently: the sender waits for
//    queue space up to a deadline and then gets Busy (retryable).
//  - Node id and epoch travel unchanged: the handler sees the sender's node
//    as `from` and the epoch it sent.
//
// Every method is thread-safe.
class MessageCenter {
 public:
  virtual ~MessageCenter() = default;

  // The node this center runs on.
  virtual const NodeId& self() const = 0;

  // Installs the handler for `topic` on this node. AlreadyExists if the
  // topic has one; Cancelled after Stop().
  virtual Status RegisterHandler(std::string_view topic, Handler handler) = 0;

  // Removes the handler of `topic`. Messages still queued for it are dropped
  // and counted; later messages to the topic fail as an unknown topic. When
  // this returns the handler is not running and will not be called again;
  // called from inside that handler, it returns at once and the handler is
  // not called again after the current call. No-op for an unknown topic.
  virtual void DeregisterHandler(std::string_view topic) = 0;

  // Sends `msg` (its `from`, `seq` and `kind` are filled in here).
  //  InvalidArgument: the header and payload disagree (CheckConsistent).
  //  NotFound: `msg.to` is this node and no handler has `msg.topic`.
  //  Busy: the destination queue is full (event dropped / command timed out).
  //  Unavailable: the destination node cannot be reached.
  //  Cancelled: the center is stopped.
  virtual Status SendEvent(TargetMessage msg) = 0;
  virtual Status SendCommand(TargetMessage msg) = 0;
};

}  // namespace sluice::messaging
