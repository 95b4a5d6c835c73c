// TargetMessage: one control message between nodes (or between components
// of one node), with the header the messaging layer routes on, and its
// conversion to and from the wire envelope (heartbeatpb.MessageEnvelope).
//
// A TargetMessage is a value; its payload is an immutable proto message
// shared between copies, so a message can be handed across threads freely.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "common/status.h"
#include "common/strong_id.h"
#include "messaging/message_type.h"
#include "sluice_heartbeat.pb.h"

namespace sluice::messaging {

// Well-known topics: who on a node handles a message.
inline constexpr std::string_view kCoordinatorTopic = "coordinator";
inline constexpr std::string_view kMaintainerManagerTopic = "maintainer-manager";
inline constexpr std::string_view kDispatcherManagerTopic = "dispatcher-manager";
inline constexpr std::string_view kHeartbeatCollectorTopic = "heartbeat-collector";

// How hard the messaging layer tries (see MessageCenter).
enum class DeliveryKind : uint8_t {
  kEvent,    // Periodic state (heartbeats): may be dropped under pressure.
  kCommand,  // Must not be dropped silently: the sender waits or gets an error.
};

struct TargetMessage {
  NodeId from;        // Set by the sending MessageCenter to its own node.
  NodeId to;          // The destination node (may be the sender's own).
  std::string topic;  // The handler on `to` that gets it.
  MessageType type = MessageType::kUnknown;
  // The maintainer generation the message speaks for (0: none, or a
  // pre-epoch peer). Must equal the payload's `maintainer_epoch` if the
  // payload has one.
  MaintainerEpoch epoch;
  // Set by the sending MessageCenter: increases with every message it sends
  // to `to`. Gaps mean dropped events; the receiver does not reorder.
  uint64_t seq = 0;
  DeliveryKind kind = DeliveryKind::kEvent;  // Set by SendEvent / SendCommand.
  std::shared_ptr<const google::protobuf::Message> payload;

  // The payload as T, or nullptr if the message is of another type.
  template <typename T>
  const T* As() const {
    if (type != TypeOf<T>() || payload == nullptr) return nullptr;
    return google::protobuf::DynamicCastToGenerated<T>(payload.get());
  }

  // The header as "type=... from=... to=... topic=... epoch=... seq=...".
  std::string HeaderString() const;
};

// A message of T's type to `topic` on `to`. The envelope epoch is taken from
// the payload's `maintainer_epoch` when T has that field.
template <typename T>
TargetMessage MakeMessage(NodeId to, std::string_view topic, T payload) {
  TargetMessage msg;
  msg.to = std::move(to);
  msg.topic = std::string(topic);
  msg.type = TypeOf<T>();
  if constexpr (requires { payload.maintainer_epoch(); }) {
    msg.epoch = MaintainerEpoch(payload.maintainer_epoch());
  }
  msg.payload = std::make_shared<const T>(std::move(payload));
  return msg;
}

// Checks that the header and the payload agree: a known type, a payload of
// that type, a topic, and when the payload carries them, `sender_node_id`
// equal to `from` and `maintainer_epoch` equal to `epoch`. The error says
// which field disagrees; callers pick the code (InvalidArgument for our own
// sends, ProtocolViolation for what a peer sent) from the returned status.
Status CheckConsistent(const TargetMessage& msg);

// The wire form. Fails (InvalidArgument) only if the payload cannot be
// serialized (e.g. larger than 2 GiB).
Result<heartbeatpb::MessageEnvelope> EncodeEnvelope(const TargetMessage& msg);

// Parses a wire envelope. Corruption for an unknown type or a payload that
// does not parse; ProtocolViolation if the header and the payload disagree
// (CheckConsistent). Never crashes on any input.
Result<TargetMessage> DecodeEnvelope(const heartbeatpb::MessageEnvelope& envelope);

}  // namespace sluice::messaging
