// The control protocol's messages survive serialization, the envelope
// carries them intact, and bad bytes are typed errors.
#include <google/protobuf/descriptor.h>
#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "messaging/message.h"
#include "messaging/message_type.h"
#include "sluice_heartbeat.pb.h"

namespace sluice::messaging {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;
using google::protobuf::util::MessageDifferencer;

// Sets every field of `msg` (recursively, two elements per repeated field)
// to a value that differs from the default and from the other fields.
class Filler {
 public:
  void Fill(Message* msg, int depth = 0) {
    const Descriptor* d = msg->GetDescriptor();
    const Reflection* r = msg->GetReflection();
    for (int i = 0; i < d->field_count(); ++i) {
      const FieldDescriptor* f = d->field(i);
      int n = f->is_repeated() ? 2 : 1;
      for (int k = 0; k < n; ++k) SetOne(msg, r, f, depth);
    }
  }

 private:
  void SetOne(Message* msg, const Reflection* r, const FieldDescriptor* f, int depth) {
    ++counter_;
    const bool rep = f->is_repeated();
    switch (f->cpp_type()) {
      case FieldDescriptor::CPPTYPE_INT32:
        rep ? r->AddInt32(msg, f, -counter_) : r->SetInt32(msg, f, -counter_);
        break;
      case FieldDescriptor::CPPTYPE_INT64: {
        int64_t v = -(int64_t{1} << 40) - counter_;
        rep ? r->AddInt64(msg, f, v) : r->SetInt64(msg, f, v);
        break;
      }
      case FieldDescriptor::CPPTYPE_UINT32:
        rep ? r->AddUInt32(msg, f, 1000 + counter_) : r->SetUInt32(msg, f, 1000 + counter_);
        break;
      case FieldDescriptor::CPPTYPE_UINT64: {
        uint64_t v = (uint64_t{1} << 62) + counter_;
        rep ? r->AddUInt64(msg, f, v) : r->SetUInt64(msg, f, v);
        break;
      }
      case FieldDescriptor::CPPTYPE_FLOAT:
        rep ? r->AddFloat(msg, f, 0.5f + counter_) : r->SetFloat(msg, f, 0.5f + counter_);
        break;
      case FieldDescriptor::CPPTYPE_DOUBLE:
        rep ? r->AddDouble(msg, f, 0.25 + counter_) : r->SetDouble(msg, f, 0.25 + counter_);
        break;
      case FieldDescriptor::CPPTYPE_BOOL:
        rep ? r->AddBool(msg, f, true) : r->SetBool(msg, f, true);
        break;
      case FieldDescriptor::CPPTYPE_ENUM: {
        const auto* e = f->enum_type();
        const auto* v = e->value(e->value_count() - 1);  // Never the default.
        rep ? r->AddEnum(msg, f, v) : r->SetEnum(msg, f, v);
        break;
      }
      case FieldDescriptor::CPPTYPE_STRING: {
        // Bytes that are not UTF-8: text fields are declared `bytes`.
        std::string v(f->name());
        v.append(std::to_string(counter_));
        v.push_back('\xff');
        v.push_back('\0');
        rep ? r->AddString(msg, f, v) : r->SetString(msg, f, v);
        break;
      }
      case FieldDescriptor::CPPTYPE_MESSAGE: {
        if (depth >= 4) break;
        Message* child = rep ? r->AddMessage(msg, f) : r->MutableMessage(msg, f);
        Fill(child, depth + 1);
        break;
      }
    }
  }

  int counter_ = 0;
};

// Every field of `msg` (not recursively) differs from its default.
void ExpectAllFieldsSet(const Message& msg) {
  const Descriptor* d = msg.GetDescriptor();
  const Reflection* r = msg.GetReflection();
  for (int i = 0; i < d->field_count(); ++i) {
    const FieldDescriptor* f = d->field(i);
    if (f->is_repeated()) {
      EXPECT_EQ(r->FieldSize(msg, f), 2) << f->full_name();
    } else {
      EXPECT_TRUE(r->HasField(msg, f)) << f->full_name();
    }
  }
}

const google::protobuf::FileDescriptor* File() {
  return heartbeatpb::MessageEnvelope::descriptor()->file();
}

TEST(ProtoRoundTripTest, EveryMessageInTheFileSurvivesSerializeAndParse) {
  const auto* file = File();
  ASSERT_GT(file->message_type_count(), 30);
  for (int i = 0; i < file->message_type_count(); ++i) {
    const Descriptor* d = file->message_type(i);
    SCOPED_TRACE(d->full_name());
    const Message* prototype =
        google::protobuf::MessageFactory::generated_factory()->GetPrototype(d);
    std::unique_ptr<Message> original(prototype->New());
    Filler().Fill(original.get());
    ExpectAllFieldsSet(*original);

    std::string bytes;
    ASSERT_TRUE(original->SerializeToString(&bytes));
    std::unique_ptr<Message> parsed(prototype->New());
    ASSERT_TRUE(parsed->ParseFromString(bytes));
    std::string diff;
    MessageDifferencer differencer;
    differencer.ReportDifferencesToString(&diff);
    EXPECT_TRUE(differencer.Compare(*original, *parsed)) << diff;
  }
}

TEST(ProtoRoundTripTest, EveryMessageTypeTravelsInAnEnvelope) {
  ASSERT_EQ(AllMessageTypes().size(), kNumMessageTypes);
  std::set<const Descriptor*> seen;
  for (MessageType type : AllMessageTypes()) {
    SCOPED_TRACE(std::string(MessageTypeName(type)));
    std::unique_ptr<Message> payload = NewMessage(type);
    ASSERT_TRUE(payload != nullptr);
    EXPECT_EQ(payload->GetDescriptor()->name(), MessageTypeName(type));
    EXPECT_TRUE(seen.insert(payload->GetDescriptor()).second) << "two types share a message";
    EXPECT_EQ(MessageTypeFromWire(static_cast<uint32_t>(type)), type);
    Filler().Fill(payload.get());

    TargetMessage msg;
    msg.from = NodeId("node-a");
    msg.to = NodeId("node-b");
    msg.topic = std::string(kDispatcherManagerTopic);
    msg.type = type;
    msg.seq = 42;
    msg.kind = DeliveryKind::kCommand;
    // Header identity must agree with the payload's.
    const auto* sender = payload->GetDescriptor()->FindFieldByName("sender_node_id");
    if (sender != nullptr) payload->GetReflection()->SetString(payload.get(), sender, "node-a");
    const auto* epoch = payload->GetDescriptor()->FindFieldByName("maintainer_epoch");
    if (epoch != nullptr) {
      msg.epoch = MaintainerEpoch(payload->GetReflection()->GetUInt64(*payload, epoch));
    }
    msg.payload = std::shared_ptr<const Message>(std::move(payload));

    Result<heartbeatpb::MessageEnvelope> envelope = EncodeEnvelope(msg);
    ASSERT_TRUE(envelope.ok()) << envelope.status().ToString();
    std::string wire;
    ASSERT_TRUE(envelope->SerializeToString(&wire));
    heartbeatpb::MessageEnvelope parsed_envelope;
    ASSERT_TRUE(parsed_envelope.ParseFromString(wire));

    Result<TargetMessage> decoded = DecodeEnvelope(parsed_envelope);
    ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
    EXPECT_EQ(decoded->from, msg.from);
    EXPECT_EQ(decoded->to, msg.to);
    EXPECT_EQ(decoded->topic, msg.topic);
    EXPECT_EQ(decoded->type, type);
    EXPECT_EQ(decoded->epoch, msg.epoch);
    EXPECT_EQ(decoded->seq, 42u);
    EXPECT_EQ(decoded->kind, DeliveryKind::kCommand);
    EXPECT_TRUE(MessageDifferencer::Equals(*decoded->payload, *msg.payload));
  }
  EXPECT_EQ(MessageTypeFromWire(0), MessageType::kUnknown);
  EXPECT_EQ(MessageTypeFromWire(9999), MessageType::kUnknown);
  EXPECT_TRUE(NewMessage(MessageType::kUnknown) == nullptr);
}

// Invariant 5: whatever a maintainer sends to a dispatcher manager, and what
// travels between coordinator and maintainer about a maintainer, names the
// sender node and the maintainer epoch.
TEST(ProtoRoundTripTest, ControlMessagesCarrySenderNodeAndEpoch) {
  const Descriptor* fenced[] = {
      heartbeatpb::MaintainerBootstrapRequest::descriptor(),
      heartbeatpb::MaintainerPostBootstrapRequest::descriptor(),
      heartbeatpb::MaintainerCloseRequest::descriptor(),
      heartbeatpb::ScheduleDispatcherRequest::descriptor(),
      heartbeatpb::MergeDispatcherRequest::descriptor(),
      heartbeatpb::HeartBeatResponse::descriptor(),
      heartbeatpb::CheckpointTsMessage::descriptor(),
      heartbeatpb::AddMaintainerRequest::descriptor(),
      heartbeatpb::RemoveMaintainerRequest::descriptor(),
  };
  for (const Descriptor* d : fenced) {
    SCOPED_TRACE(d->name());
    const FieldDescriptor* sender = d->FindFieldByName("sender_node_id");
    ASSERT_NE(sender, nullptr);
    EXPECT_EQ(sender->type(), FieldDescriptor::TYPE_BYTES);
    const FieldDescriptor* epoch = d->FindFieldByName("maintainer_epoch");
    ASSERT_NE(epoch, nullptr);
    EXPECT_EQ(epoch->type(), FieldDescriptor::TYPE_UINT64);
  }
  // Answers echo the epoch of the request they answer.
  for (const Descriptor* d : {heartbeatpb::MaintainerBootstrapResponse::descriptor(),
                              heartbeatpb::MaintainerPostBootstrapResponse::descriptor(),
                              heartbeatpb::MaintainerCloseResponse::descriptor(),
                              heartbeatpb::MaintainerStatus::descriptor()}) {
    EXPECT_NE(d->FindFieldByName("maintainer_epoch"), nullptr) << d->name();
  }
  EXPECT_NE(heartbeatpb::MaintainerHeartbeat::descriptor()->FindFieldByName("sender_node_id"),
            nullptr);
}

TEST(ProtoRoundTripTest, NoStringFields) {
  const auto* file = File();
  for (int i = 0; i < file->message_type_count(); ++i) {
    const Descriptor* d = file->message_type(i);
    for (int j = 0; j < d->field_count(); ++j) {
      EXPECT_NE(d->field(j)->type(), FieldDescriptor::TYPE_STRING) << d->field(j)->full_name();
    }
  }
}

TEST(ProtoRoundTripTest, MakeMessageTakesTheEpochFromThePayload) {
  heartbeatpb::ScheduleDispatcherRequest req;
  req.set_maintainer_epoch(17);
  req.mutable_config()->mutable_dispatcher_id()->set_high(5);
  TargetMessage msg = MakeMessage(NodeId("b"), kDispatcherManagerTopic, req);
  EXPECT_EQ(msg.type, MessageType::kScheduleDispatcherRequest);
  EXPECT_EQ(msg.epoch, MaintainerEpoch(17));
  ASSERT_NE(msg.As<heartbeatpb::ScheduleDispatcherRequest>(), nullptr);
  EXPECT_EQ(msg.As<heartbeatpb::ScheduleDispatcherRequest>()->config().dispatcher_id().high(), 5u);
  EXPECT_EQ(msg.As<heartbeatpb::HeartBeatRequest>(), nullptr);

  TargetMessage heartbeat =
      MakeMessage(NodeId("b"), kCoordinatorTopic, heartbeatpb::MaintainerHeartbeat());
  EXPECT_EQ(heartbeat.epoch, MaintainerEpoch(0));
}

heartbeatpb::MessageEnvelope ValidEnvelope() {
  heartbeatpb::MaintainerCloseRequest close;
  close.set_sender_node_id("node-a");
  close.set_maintainer_epoch(3);
  close.set_removed(true);
  TargetMessage msg = MakeMessage(NodeId("node-b"), kDispatcherManagerTopic, close);
  msg.from = NodeId("node-a");
  return EncodeEnvelope(msg).value();
}

TEST(ProtoRoundTripTest, BadEnvelopesAreTypedErrors) {
  ASSERT_TRUE(DecodeEnvelope(ValidEnvelope()).ok());

  heartbeatpb::MessageEnvelope garbage = ValidEnvelope();
  garbage.set_payload(std::string(3, '\xff'));
  EXPECT_EQ(DecodeEnvelope(garbage).status().code(), Code::kCorruption);

  heartbeatpb::MessageEnvelope unknown = ValidEnvelope();
  unknown.set_type(4242);
  EXPECT_EQ(DecodeEnvelope(unknown).status().code(), Code::kCorruption);

  heartbeatpb::MessageEnvelope wrong_type = ValidEnvelope();  // Parses as another type.
  wrong_type.set_type(static_cast<uint32_t>(MessageType::kCheckpointTsMessage));
  Result<TargetMessage> as_checkpoint = DecodeEnvelope(wrong_type);
  EXPECT_FALSE(as_checkpoint.ok() && as_checkpoint->As<heartbeatpb::MaintainerCloseRequest>());

  heartbeatpb::MessageEnvelope spoofed = ValidEnvelope();
  spoofed.set_from("node-c");
  EXPECT_EQ(DecodeEnvelope(spoofed).status().code(), Code::kProtocolViolation);

  heartbeatpb::MessageEnvelope stale = ValidEnvelope();
  stale.set_epoch(2);
  EXPECT_EQ(DecodeEnvelope(stale).status().code(), Code::kProtocolViolation);

  heartbeatpb::MessageEnvelope empty;
  EXPECT_FALSE(DecodeEnvelope(empty).ok());
}

}  // namespace
}  // namespace sluice::messaging
