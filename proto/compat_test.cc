// Forward compatibility with newer and non-validating peers: unknown fields,
// unknown enum values, unpacked repeated scalars, opaque admin payloads and
// text fields that are not UTF-8.

#include <gmock/gmock.h>
#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>
#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "cdcpb.pb.h"
#include "errorpb.pb.h"
#include "etcd/rpc.pb.h"
#include "golden_samples.h"
#include "golden_util.h"
#include "pdpb.pb.h"

namespace sluice::golden {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::DescriptorPool;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::MessageFactory;
using google::protobuf::Reflection;

TEST(CompatibilityTest, EventWithUnknownAdminPayloadRoundTrips) {
  // An admin event whose raft_cmdpb payloads carry fields we do not model.
  const std::string admin_request = Cat({V(1, 2), L(3, Cat({V(1, 1002), L(2, "split-key")}))});
  const std::string admin_response = Cat({L(1, V(2, 9)), V(5, 300)});
  const std::string wire =
      Cat({V(1, 1001), V(2, 88), L(4, Cat({L(1, admin_request), L(2, admin_response)})), V(7, 7)});
  cdcpb::Event event;
  ASSERT_TRUE(event.ParseFromString(wire));
  EXPECT_EQ(event.region_id(), 1001u);
  EXPECT_EQ(event.request_id(), 7u);
  ASSERT_EQ(event.event_case(), cdcpb::Event::kAdmin);
  ASSERT_TRUE(event.admin().has_admin_request());
  ASSERT_TRUE(event.admin().has_admin_response());
  EXPECT_EQ(event.admin()
                .admin_request()
                .GetReflection()
                ->GetUnknownFields(event.admin().admin_request())
                .field_count(),
            2);
  EXPECT_EQ(Hex(event.SerializeAsString()), Hex(wire));

  cdcpb::ChangeDataEvent batch;
  *batch.add_events() = event;
  EXPECT_EQ(Hex(batch.SerializeAsString()), Hex(L(1, wire)));
}

TEST(CompatibilityTest, UnknownFieldsFromNewerPeersAreKept) {
  // A newer TiKV may add fields; they must not break parsing or be dropped.
  const std::string wire = Cat({V(1, 1001), V(6, kTso), V(7, 7), L(99, "future"), V(100, 1)});
  cdcpb::Event event;
  ASSERT_TRUE(event.ParseFromString(wire));
  EXPECT_EQ(event.resolved_ts(), kTso);
  EXPECT_EQ(Hex(event.SerializeAsString()), Hex(wire));
}

TEST(CompatibilityTest, UnpackedRepeatedScalarsAreAccepted) {
  // Writers may emit repeated scalars unpacked; both forms must parse.
  cdcpb::ResolvedTs resolved;
  ASSERT_TRUE(resolved.ParseFromString(Cat({V(1, 1001), V(1, 1002), V(2, kTso)})));
  EXPECT_THAT(resolved.regions(), ::testing::ElementsAre(1001u, 1002u));
  etcdserverpb::WatchCreateRequest create;
  ASSERT_TRUE(create.ParseFromString(Cat({V(5, 1), V(5, 0)})));
  EXPECT_THAT(create.filters(), ::testing::ElementsAre(etcdserverpb::WatchCreateRequest::NODELETE,
                                                       etcdserverpb::WatchCreateRequest::NOPUT));
}

TEST(CompatibilityTest, UnknownEnumValuesArePreserved) {
  // proto3 enums are open: a LogType added by a newer TiKV reaches the caller
  // as its number instead of being dropped.
  cdcpb::Event::Row row;
  ASSERT_TRUE(row.ParseFromString(Cat({V(3, 9), V(4, 7)})));
  EXPECT_EQ(static_cast<int>(row.type()), 9);
  EXPECT_EQ(static_cast<int>(row.op_type()), 7);
  EXPECT_FALSE(cdcpb::Event::LogType_IsValid(row.type()));
  EXPECT_EQ(Hex(row.SerializeAsString()), Hex(Cat({V(3, 9), V(4, 7)})));
}

TEST(CompatibilityTest, LastOneofMemberOnTheWireWins) {
  cdcpb::Event event;
  ASSERT_TRUE(event.ParseFromString(Cat({L(3, ""), V(6, kTso)})));
  EXPECT_EQ(event.event_case(), cdcpb::Event::kResolvedTs);
  ASSERT_TRUE(event.ParseFromString(Cat({V(6, kTso), L(3, "")})));
  EXPECT_EQ(event.event_case(), cdcpb::Event::kEntries);
}

// ---------------------------------------------------------------------------
// Text fields that are not UTF-8. TiKV, PD and etcd do not validate the text
// they send, and the C++ parser would reject a whole message for one invalid
// proto3 `string`, so every text field is declared `bytes`: the message
// parses and the bytes survive unchanged.

// Parses `wire` as T and checks that it serializes back to the same bytes.
template <typename T>
T ParseKeepingBytes(const std::string& wire) {
  T m;
  EXPECT_TRUE(m.ParseFromString(wire)) << Hex(wire);
  EXPECT_EQ(Hex(m.SerializeAsString()), Hex(wire));
  return m;
}

void CollectAllMessages(const Descriptor* d, std::vector<const Descriptor*>* out) {
  out->push_back(d);
  for (int i = 0; i < d->nested_type_count(); ++i) CollectAllMessages(d->nested_type(i), out);
}

// Every message of every file, map-entry types included.
std::vector<const Descriptor*> AllMessages() {
  std::vector<const Descriptor*> out;
  for (const char* file : kProtoFiles) {
    const auto* fd = DescriptorPool::generated_pool()->FindFileByName(file);
    EXPECT_NE(fd, nullptr) << file;
    if (fd == nullptr) continue;
    for (int i = 0; i < fd->message_type_count(); ++i)
      CollectAllMessages(fd->message_type(i), &out);
  }
  return out;
}

TEST(TextFieldTest, NoFieldIsDeclaredString) {
  std::vector<std::string> string_fields;
  for (const Descriptor* d : AllMessages()) {
    for (int i = 0; i < d->field_count(); ++i) {
      if (d->field(i)->type() == FieldDescriptor::TYPE_STRING) {
        string_fields.push_back(d->field(i)->full_name());
      }
    }
  }
  EXPECT_THAT(string_fields, ::testing::IsEmpty());
}

TEST(TextFieldTest, EveryBytesFieldKeepsInvalidUtf8) {
  std::set<std::string> checked;
  for (const Descriptor* d : AllMessages()) {
    for (int i = 0; i < d->field_count(); ++i) {
      const FieldDescriptor* f = d->field(i);
      if (f->type() != FieldDescriptor::TYPE_BYTES) continue;
      SCOPED_TRACE(f->full_name());
      const std::string wire = L(f->number(), kNotUtf8);
      std::unique_ptr<Message> m(MessageFactory::generated_factory()->GetPrototype(d)->New());
      ASSERT_TRUE(m->ParseFromString(wire));
      const Reflection* r = m->GetReflection();
      EXPECT_EQ(Hex(f->is_repeated() ? r->GetRepeatedString(*m, f, 0) : r->GetString(*m, f)),
                Hex(kNotUtf8));
      EXPECT_EQ(Hex(m->SerializeAsString()), Hex(wire));
      checked.insert(f->full_name());
    }
  }
  // The text fields that peers send, which kvproto and etcd declare `string`.
  EXPECT_THAT(checked, ::testing::IsSupersetOf({
                           "cdcpb.Header.ticdc_version",
                           "cdcpb.Compatibility.required_version",
                           "errorpb.ServerIsBusy.reason",
                           "errorpb.Error.message",
                           "kvrpcpb.KeyError.retryable",
                           "kvrpcpb.KeyError.abort",
                           "kvrpcpb.Context.request_source",
                           "metapb.StoreLabel.key",
                           "metapb.StoreLabel.value",
                           "metapb.Store.address",
                           "metapb.Store.version",
                           "metapb.Store.peer_address",
                           "metapb.Store.status_address",
                           "metapb.Store.git_hash",
                           "metapb.Store.deploy_path",
                           "pdpb.Error.message",
                           "pdpb.Member.name",
                           "pdpb.Member.peer_urls",
                           "pdpb.Member.client_urls",
                           "pdpb.Member.deploy_path",
                           "pdpb.Member.binary_version",
                           "pdpb.Member.git_hash",
                           "pdpb.Member.dc_location",
                           "pdpb.GetMembersResponse.TsoAllocatorLeadersEntry.key",
                           "pdpb.RequestHeader.caller_id",
                           "pdpb.RequestHeader.caller_component",
                           "pdpb.TsoRequest.dc_location",
                           "etcdserverpb.WatchResponse.cancel_reason",
                           "etcdserverpb.LeaseGrantResponse.error",
                       }));
}

TEST(TextFieldTest, HeaderAndServiceIdKeepInvalidUtf8) {
  // kvproto declares ticdc_version `string`; as such the C++ parser rejects
  // this. service_id is `bytes` upstream too.
  EXPECT_TRUE(Parses<cdcpb::Header>(L(2, "\xC3\x28"s)));
  EXPECT_TRUE(Parses<pdpb::UpdateServiceGCSafePointRequest>(L(2, "\xC3\x28"s)));
  EXPECT_EQ(ParseKeepingBytes<cdcpb::Header>(L(2, "\xC3\x28"s)).ticdc_version(), "\xC3\x28"s);
  EXPECT_EQ(
      ParseKeepingBytes<pdpb::UpdateServiceGCSafePointRequest>(L(2, "\xC3\x28"s)).service_id(),
      "\xC3\x28"s);
}

TEST(TextFieldTest, ChangeDataEventWithInvalidErrorTextsParses) {
  // One batch: a busy store, an incompatible version and ordinary rows. The
  // bad texts must not cost the rows.
  const std::string wire = Cat({
      L(1, Cat({V(1, 1001), L(5, L(7, Cat({L(1, kNotUtf8), V(2, 20)}))), V(7, 7)})),
      L(1, Cat({V(1, 1002), L(5, L(5, L(1, kNotUtf8))), V(7, 7)})),
      L(1, Cat({V(1, 1003), L(3, L(1, PrewriteBytes())), V(7, 7)})),
  });
  const auto batch = ParseKeepingBytes<cdcpb::ChangeDataEvent>(wire);
  ASSERT_EQ(batch.events_size(), 3);
  EXPECT_EQ(batch.events(0).error().server_is_busy().reason(), kNotUtf8);
  EXPECT_EQ(batch.events(0).error().server_is_busy().backoff_ms(), 20u);
  EXPECT_EQ(batch.events(1).error().compatibility().required_version(), kNotUtf8);
  ASSERT_EQ(batch.events(2).entries().entries_size(), 1);
  EXPECT_TRUE(SameMessage(batch.events(2).entries().entries(0), MakePrewrite()));

  // The region error of the KV RPCs.
  const auto error = ParseKeepingBytes<errorpb::Error>(Cat({L(1, kNotUtf8), L(6, L(1, kNotUtf8))}));
  EXPECT_EQ(error.message(), kNotUtf8);
  EXPECT_EQ(error.server_is_busy().reason(), kNotUtf8);
}

TEST(TextFieldTest, PdResponsesWithInvalidTextParse) {
  const std::string header = Cat({V(1, kClusterId), L(2, Cat({V(1, 1), L(2, kNotUtf8)}))});
  const std::string member = Cat({L(1, kNotUtf8), V(2, 1), L(3, kNotUtf8), L(4, kNotUtf8),
                                  L(6, kNotUtf8), L(7, kNotUtf8), L(8, kNotUtf8), L(9, kNotUtf8)});
  const auto members = ParseKeepingBytes<pdpb::GetMembersResponse>(
      Cat({L(1, header), L(2, member), L(3, member), L(5, Cat({L(1, kNotUtf8), L(2, member)}))}));
  EXPECT_EQ(members.header().error().message(), kNotUtf8);
  ASSERT_EQ(members.members_size(), 1);
  EXPECT_EQ(members.members(0).name(), kNotUtf8);
  EXPECT_THAT(members.leader().client_urls(), ::testing::ElementsAre(kNotUtf8));
  EXPECT_THAT(members.leader().peer_urls(), ::testing::ElementsAre(kNotUtf8));
  EXPECT_EQ(members.leader().dc_location(), kNotUtf8);
  ASSERT_EQ(members.tso_allocator_leaders_size(), 1);
  EXPECT_EQ(members.tso_allocator_leaders(0).key(), kNotUtf8);
  EXPECT_EQ(members.tso_allocator_leaders(0).value().member_id(), 1u);

  const std::string label = Cat({L(1, kNotUtf8), L(2, kNotUtf8)});
  const std::string store = Cat({V(1, 4), L(2, kNotUtf8), L(4, label), L(5, kNotUtf8),
                                 L(6, kNotUtf8), L(7, kNotUtf8), L(8, kNotUtf8), L(10, kNotUtf8)});
  const auto stores = ParseKeepingBytes<pdpb::GetAllStoresResponse>(
      Cat({L(1, header), L(2, store), L(2, Cat({V(1, 5), L(2, "tikv-5:20160")}))}));
  ASSERT_EQ(stores.stores_size(), 2);
  EXPECT_EQ(stores.stores(0).address(), kNotUtf8);
  ASSERT_EQ(stores.stores(0).labels_size(), 1);
  EXPECT_EQ(stores.stores(0).labels(0).key(), kNotUtf8);
  EXPECT_EQ(stores.stores(0).labels(0).value(), kNotUtf8);
  EXPECT_EQ(stores.stores(0).peer_address(), kNotUtf8);
  EXPECT_EQ(stores.stores(1).address(), "tikv-5:20160");
  EXPECT_EQ(ParseKeepingBytes<pdpb::GetStoreResponse>(Cat({L(1, header), L(2, store)}))
                .store()
                .status_address(),
            kNotUtf8);
  EXPECT_EQ(
      ParseKeepingBytes<pdpb::TsoResponse>(Cat({L(1, header), V(2, 1)})).header().error().message(),
      kNotUtf8);
}

TEST(TextFieldTest, EtcdResponsesWithInvalidTextParse) {
  const auto watch = ParseKeepingBytes<etcdserverpb::WatchResponse>(
      Cat({V(2, 3), V(4, 1), L(6, kNotUtf8), L(11, L(2, Cat({L(1, "/k"), V(2, 41)})))}));
  EXPECT_TRUE(watch.canceled());
  EXPECT_EQ(watch.cancel_reason(), kNotUtf8);
  ASSERT_EQ(watch.events_size(), 1);
  EXPECT_EQ(watch.events(0).kv().key(), "/k");
  const auto grant =
      ParseKeepingBytes<etcdserverpb::LeaseGrantResponse>(Cat({V(2, 9), L(4, kNotUtf8)}));
  EXPECT_EQ(grant.id(), 9);
  EXPECT_EQ(grant.error(), kNotUtf8);
}

}  // namespace
}  // namespace sluice::golden
