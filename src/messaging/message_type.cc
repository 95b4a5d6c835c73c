#include "messaging/message_type.h"

#include <array>

namespace sluice::messaging {
namespace {

struct TypeInfo {
  MessageType type;
  std::string_view name;
  const google::protobuf::Message* prototype;
};

const std::array<TypeInfo, kNumMessageTypes>& Table() {
  static const std::array<TypeInfo, kNumMessageTypes> table = {{
#define SLUICE_MESSAGE_TYPE_ROW(name, number, proto) \
  {MessageType::name, #proto, &heartbeatpb::proto::default_instance()},
      SLUICE_MESSAGE_TYPES(SLUICE_MESSAGE_TYPE_ROW)
#undef SLUICE_MESSAGE_TYPE_ROW
  }};
  return table;
}

const TypeInfo* Find(MessageType type) {
  for (const TypeInfo& info : Table()) {
    if (info.type == type) return &info;
  }
  return nullptr;
}

}  // namespace

std::span<const MessageType> AllMessageTypes() {
  static const std::array<MessageType, kNumMessageTypes> types = [] {
    std::array<MessageType, kNumMessageTypes> out{};
    for (size_t i = 0; i < out.size(); ++i) out[i] = Table()[i].type;
    return out;
  }();
  return types;
}

MessageType MessageTypeFromWire(uint32_t number) {
  const TypeInfo* info = Find(static_cast<MessageType>(number));
  return info == nullptr ? MessageType::kUnknown : info->type;
}

std::string_view MessageTypeName(MessageType type) {
  const TypeInfo* info = Find(type);
  return info == nullptr ? "Unknown" : info->name;
}

const google::protobuf::Descriptor* MessageDescriptor(MessageType type) {
  const TypeInfo* info = Find(type);
  return info == nullptr ? nullptr : info->prototype->GetDescriptor();
}

std::unique_ptr<google::protobuf::Message> NewMessage(MessageType type) {
  const TypeInfo* info = Find(type);
  if (info == nullptr) return nullptr;
  return std::unique_ptr<google::protobuf::Message>(info->prototype->New());
}

}  // namespace sluice::messaging
