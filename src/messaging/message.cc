#include "messaging/message.h"

#include <fmt/format.h>

namespace sluice::messaging {
namespace {

// The payload's top-level field `name` if its type declares one.
const google::protobuf::FieldDescriptor* FindField(const google::protobuf::Message& payload,
                                                   std::string_view name) {
  return payload.GetDescriptor()->FindFieldByName(std::string(name));
}

}  // namespace

std::string TargetMessage::HeaderString() const {
  return fmt::format("type={} from={} to={} topic={} epoch={} seq={} kind={}",
                     MessageTypeName(type), from.value(), to.value(), topic, epoch.value(), seq,
                     kind == DeliveryKind::kCommand ? "command" : "event");
}

Status CheckConsistent(const TargetMessage& msg) {
  const google::protobuf::Descriptor* descriptor = MessageDescriptor(msg.type);
  if (descriptor == nullptr) {
    return InvalidArgument(fmt::format("unknown message type {}", static_cast<uint32_t>(msg.type)));
  }
  if (msg.payload == nullptr) return InvalidArgument("message without payload");
  if (msg.payload->GetDescriptor() != descriptor) {
    return InvalidArgument(fmt::format("payload is a {}, header says {}",
                                       msg.payload->GetDescriptor()->name(),
                                       MessageTypeName(msg.type)));
  }
  if (msg.topic.empty()) return InvalidArgument("message without topic");
  const google::protobuf::Reflection* reflection = msg.payload->GetReflection();
  if (const auto* field = FindField(*msg.payload, "sender_node_id"); field != nullptr) {
    std::string sender = reflection->GetString(*msg.payload, field);
    if (sender != msg.from.value()) {
      return InvalidArgument(fmt::format("{}.sender_node_id is '{}', envelope from is '{}'",
                                         MessageTypeName(msg.type), sender, msg.from.value()));
    }
  }
  if (const auto* field = FindField(*msg.payload, "maintainer_epoch"); field != nullptr) {
    uint64_t epoch = reflection->GetUInt64(*msg.payload, field);
    if (epoch != msg.epoch.value()) {
      return InvalidArgument(fmt::format("{}.maintainer_epoch is {}, envelope epoch is {}",
                                         MessageTypeName(msg.type), epoch, msg.epoch.value()));
    }
  }
  return Status::Ok();
}

Result<heartbeatpb::MessageEnvelope> EncodeEnvelope(const TargetMessage& msg) {
  if (msg.payload == nullptr) return InvalidArgument("message without payload");
  heartbeatpb::MessageEnvelope envelope;
  envelope.set_from(msg.from.value());
  envelope.set_to(msg.to.value());
  envelope.set_topic(msg.topic);
  envelope.set_type(static_cast<uint32_t>(msg.type));
  envelope.set_epoch(msg.epoch.value());
  envelope.set_seq(msg.seq);
  envelope.set_command(msg.kind == DeliveryKind::kCommand);
  if (!msg.payload->SerializeToString(envelope.mutable_payload())) {
    return InvalidArgument(fmt::format("cannot serialize {}", MessageTypeName(msg.type)));
  }
  return envelope;
}

Result<TargetMessage> DecodeEnvelope(const heartbeatpb::MessageEnvelope& envelope) {
  MessageType type = MessageTypeFromWire(envelope.type());
  if (type == MessageType::kUnknown) {
    return Corruption(fmt::format("envelope from '{}' has unknown message type {}", envelope.from(),
                                  envelope.type()));
  }
  std::unique_ptr<google::protobuf::Message> payload = NewMessage(type);
  if (!payload->ParseFromString(envelope.payload())) {
    return Corruption(fmt::format("envelope from '{}': {} payload of {} bytes does not parse",
                                  envelope.from(), MessageTypeName(type),
                                  envelope.payload().size()));
  }
  TargetMessage msg;
  msg.from = NodeId(envelope.from());
  msg.to = NodeId(envelope.to());
  msg.topic = envelope.topic();
  msg.type = type;
  msg.epoch = MaintainerEpoch(envelope.epoch());
  msg.seq = envelope.seq();
  msg.kind = envelope.command() ? DeliveryKind::kCommand : DeliveryKind::kEvent;
  msg.payload = std::shared_ptr<const google::protobuf::Message>(std::move(payload));
  if (Status st = CheckConsistent(msg); !st.ok()) {
    return ProtocolViolation(std::string(st.message()));
  }
  return msg;
}

}  // namespace sluice::messaging
