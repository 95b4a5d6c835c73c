// MessageCenterImpl: the MessageCenter of one node.
//
// Local delivery: each registered topic has a bounded queue and one owned
// delivery thread that calls the topic's handler. A message for the own node
// goes straight into that queue (no serialization). A message for another
// node is encoded and handed to the Transport; what the transport receives
// for this node is decoded, checked and queued the same way.
//
// Full queue: an event is dropped (Busy to a local sender, counted); a
// command waits up to `command_timeout` on the injected clock, then fails
// with Busy (retryable) and is counted. Commands that arrive from the
// transport wait the same way on the transport's reader thread, which pushes
// back on the sending peer.
//
// Bad input from peers never crashes: an envelope that does not decode is
// Corruption, one whose header and payload disagree or that is addressed to
// another node is ProtocolViolation, one for a topic without handler is
// NotFound. Each is counted and logged, and returned to the transport.
//
// Lifecycle: construct, Start() (installs the transport receiver), register
// handlers (before or after Start), send, Stop(). Stop() removes the
// receiver, closes every topic queue (queued messages are dropped and
// counted: control messages are resent by their protocol), wakes blocked
// senders with Cancelled and joins every delivery thread. The destructor
// calls Stop(). The clock and the transport must outlive the center.
//
// Thread-safe: every public method may be called from any thread, including
// from handlers (a handler that sends a command to its own full topic waits
// until the command timeout, so handlers answer with events or to other
// topics).
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/clock.h"
#include "common/thread_annotations.h"
#include "messaging/message_center.h"
#include "messaging/transport.h"

namespace sluice::messaging {

struct MessageCenterOptions {
  NodeId self;
  // Messages each topic queue holds before events drop and commands wait.
  size_t queue_capacity = 1024;
  // How long a command waits for queue space before Busy.
  Clock::Duration command_timeout = std::chrono::seconds(5);
  Clock* clock = Clock::Real();  // Not owned.
  // Not owned. Null: a single node; sends to other nodes are Unavailable.
  Transport* transport = nullptr;
};

// Counters since construction. Each is a relaxed atomic; a snapshot is not
// taken atomically across counters.
struct MessageCenterStats {
  uint64_t queued_local = 0;           // Accepted into a topic queue (own and received).
  uint64_t sent_remote = 0;            // Accepted by the transport.
  uint64_t received_remote = 0;        // Envelopes the transport handed in.
  uint64_t handled = 0;                // Handler calls that returned.
  uint64_t handler_errors = 0;         // ... of which returned non-OK.
  uint64_t events_dropped = 0;         // Events dropped on a full queue.
  uint64_t commands_timed_out = 0;     // Commands that got Busy.
  uint64_t unknown_topic = 0;          // Local or received, no handler.
  uint64_t undecodable = 0;            // Received envelopes that were Corruption.
  uint64_t rejected = 0;               // Received ProtocolViolation, or bad local sends.
  uint64_t dropped_on_deregister = 0;  // Queued when their handler went away.
  uint64_t dropped_on_stop = 0;        // Queued when Stop() ran.
};

class MessageCenterImpl final : public MessageCenter {
 public:
  explicit MessageCenterImpl(MessageCenterOptions options);
  ~MessageCenterImpl() override;
  MessageCenterImpl(const MessageCenterImpl&) = delete;
  MessageCenterImpl& operator=(const MessageCenterImpl&) = delete;

  // Installs the transport receiver. Idempotent; Cancelled after Stop().
  Status Start() EXCLUDES(mu_);
  // See the class comment. Idempotent. Not to be called from a handler.
  void Stop() EXCLUDES(mu_);

  const NodeId& self() const override { return options_.self; }
  Status RegisterHandler(std::string_view topic, Handler handler) override EXCLUDES(mu_);
  void DeregisterHandler(std::string_view topic) override EXCLUDES(mu_);
  Status SendEvent(TargetMessage msg) override EXCLUDES(mu_);
  Status SendCommand(TargetMessage msg) override EXCLUDES(mu_);

  // The transport's receiver (public so that tests can feed raw envelopes).
  Status Receive(heartbeatpb::MessageEnvelope envelope) EXCLUDES(mu_);

  MessageCenterStats stats() const;
  // Messages queued for `topic` and not yet handed to its handler.
  size_t QueuedFor(std::string_view topic) const EXCLUDES(mu_);

 private:
  class TopicWorker;
  struct Counters;

  Status Send(TargetMessage msg, DeliveryKind kind) EXCLUDES(mu_);
  // Queues `msg` for its topic on this node.
  Status DeliverLocal(TargetMessage msg) EXCLUDES(mu_);
  // The topic's worker; NotFound without handler, Cancelled after Stop().
  Result<std::shared_ptr<TopicWorker>> FindWorker(std::string_view topic) const EXCLUDES(mu_);

  const MessageCenterOptions options_;
  const std::unique_ptr<Counters> counters_;

  mutable Mutex mu_;
  bool started_ GUARDED_BY(mu_) = false;
  bool stopped_ GUARDED_BY(mu_) = false;
  std::map<std::string, std::shared_ptr<TopicWorker>, std::less<>> workers_ GUARDED_BY(mu_);
  // Deregistered from their own handler; joined by Stop().
  std::vector<std::shared_ptr<TopicWorker>> retired_ GUARDED_BY(mu_);
  std::unordered_map<NodeId, uint64_t> next_seq_ GUARDED_BY(mu_);
};

}  // namespace sluice::messaging
