// The kinds of control messages the messaging layer carries: a stable
// number per proto message type (it is the `type` of a MessageEnvelope on
// the wire), the mapping from a generated proto class to its number, and a
// factory that makes an empty message of a given kind for decoding.
//
// Plain functions over constant tables; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

#include "sluice_heartbeat.pb.h"

namespace sluice::messaging {

// X(enum name, wire number, heartbeatpb message). Numbers are part of the
// wire format: never reuse or renumber one; append new kinds at the end.
#define SLUICE_MESSAGE_TYPES(X)                                           \
  X(kMaintainerBootstrapRequest, 1, MaintainerBootstrapRequest)           \
  X(kMaintainerBootstrapResponse, 2, MaintainerBootstrapResponse)         \
  X(kMaintainerPostBootstrapRequest, 3, MaintainerPostBootstrapRequest)   \
  X(kMaintainerPostBootstrapResponse, 4, MaintainerPostBootstrapResponse) \
  X(kMaintainerCloseRequest, 5, MaintainerCloseRequest)                   \
  X(kMaintainerCloseResponse, 6, MaintainerCloseResponse)                 \
  X(kScheduleDispatcherRequest, 7, ScheduleDispatcherRequest)             \
  X(kMergeDispatcherRequest, 8, MergeDispatcherRequest)                   \
  X(kHeartBeatRequest, 9, HeartBeatRequest)                               \
  X(kHeartBeatResponse, 10, HeartBeatResponse)                            \
  X(kBlockStatusRequest, 11, BlockStatusRequest)                          \
  X(kCheckpointTsMessage, 12, CheckpointTsMessage)                        \
  X(kMaintainerHeartbeat, 13, MaintainerHeartbeat)                        \
  X(kCoordinatorBootstrapRequest, 14, CoordinatorBootstrapRequest)        \
  X(kCoordinatorBootstrapResponse, 15, CoordinatorBootstrapResponse)      \
  X(kAddMaintainerRequest, 16, AddMaintainerRequest)                      \
  X(kRemoveMaintainerRequest, 17, RemoveMaintainerRequest)                \
  X(kScheduleDispatcherResponse, 18, ScheduleDispatcherResponse)

enum class MessageType : uint32_t {
  kUnknown = 0,
#define SLUICE_MESSAGE_TYPE_ENUM(name, number, proto) name = number,
  SLUICE_MESSAGE_TYPES(SLUICE_MESSAGE_TYPE_ENUM)
#undef SLUICE_MESSAGE_TYPE_ENUM
};

// MessageTypeOf<heartbeatpb::X>::kType is X's MessageType. Using a proto
// class that is not listed above does not compile.
template <typename T>
struct MessageTypeOf;
#define SLUICE_MESSAGE_TYPE_TRAIT(name, number, proto)      \
  template <>                                               \
  struct MessageTypeOf<heartbeatpb::proto> {                \
    static constexpr MessageType kType = MessageType::name; \
  };
SLUICE_MESSAGE_TYPES(SLUICE_MESSAGE_TYPE_TRAIT)
#undef SLUICE_MESSAGE_TYPE_TRAIT

// How many known types there are (kUnknown excluded).
#define SLUICE_MESSAGE_TYPE_COUNT(name, number, proto) +1
inline constexpr size_t kNumMessageTypes = 0 SLUICE_MESSAGE_TYPES(SLUICE_MESSAGE_TYPE_COUNT);
#undef SLUICE_MESSAGE_TYPE_COUNT

template <typename T>
constexpr MessageType TypeOf() {
  return MessageTypeOf<T>::kType;
}

// Every known type (kUnknown excluded), in wire-number order.
std::span<const MessageType> AllMessageTypes();

// The known type with this wire number, or kUnknown.
MessageType MessageTypeFromWire(uint32_t number);

// The proto message name, e.g. "HeartBeatRequest"; "Unknown" for kUnknown.
std::string_view MessageTypeName(MessageType type);

// The descriptor of the type's proto message; nullptr for kUnknown.
const google::protobuf::Descriptor* MessageDescriptor(MessageType type);

// A new empty message of this type; nullptr for kUnknown.
std::unique_ptr<google::protobuf::Message> NewMessage(MessageType type);

}  // namespace sluice::messaging
