// Golden wire tests for the protocol definitions in proto/: the runner.
//
// Every message is built through the generated C++ API and its serialized
// bytes are compared with bytes written by hand from the field numbers and
// wire types of the protocol facts. The hand encoder (golden_util.h) does not
// use protobuf, so a wrong field number, type or packing in a .proto file
// shows up as a byte difference.
//
// The cases live in the *_golden_test.cc files, one per protocol area. This
// file holds the registry they register with, the parameterized tests that run
// every case and the coverage test that fails if a declared message has no
// case in any file.

#include <gmock/gmock.h>
#include <google/protobuf/descriptor.h>
#include <google/protobuf/descriptor.pb.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "golden_util.h"
#include "tikvpb.pb.h"

namespace sluice::golden {

// tikvpb.proto declares only a service, so no generated code refers to its
// descriptor and the linker would leave it out of the static library. This
// reference (external linkage, so it is kept) registers it for the
// descriptor walks of this binary.
extern const void* const kTikvpbDescriptorAnchor;
const void* const kTikvpbDescriptorAnchor = &descriptor_table_tikvpb_2eproto;

namespace {

struct Registry {
  std::map<std::string, GoldenAdder> groups;
  bool built = false;
};

Registry& TheRegistry() {
  static auto* registry = new Registry;
  return *registry;
}

}  // namespace

GoldenRegistrar::GoldenRegistrar(const char* group, GoldenAdder add) {
  Registry& r = TheRegistry();
  if (r.built || !r.groups.emplace(group, add).second) {
    std::fprintf(stderr, "golden group %s registered twice or too late\n", group);
    std::abort();
  }
}

const std::vector<Golden>& AllGoldens() {
  static const std::vector<Golden>* goldens = [] {
    Registry& r = TheRegistry();
    r.built = true;
    auto* g = new std::vector<Golden>;
    for (const auto& [name, add] : r.groups) add(*g);
    return g;
  }();
  return *goldens;
}

namespace {

using google::protobuf::Descriptor;
using google::protobuf::DescriptorPool;
using google::protobuf::Message;

TEST(HandEncoderTest, MatchesWireFormatSpecExamples) {
  EXPECT_EQ(Varint(0), "\x00"s);
  EXPECT_EQ(Varint(127), "\x7F");
  EXPECT_EQ(Varint(300), "\xAC\x02");
  EXPECT_EQ(Varint(std::numeric_limits<uint64_t>::max()),
            "\xFF\xFF\xFF\xFF\xFF\xFF\xFF\xFF\xFF\x01");
  // The examples of the protobuf encoding guide.
  EXPECT_EQ(V(1, 150), "\x08\x96\x01");
  EXPECT_EQ(L(2, "testing"), "\x12\x07testing");
  // Field 64 needs a two-byte tag.
  EXPECT_EQ(L(64, ""), "\x82\x04\x00"s);
}

class GoldenTest : public ::testing::TestWithParam<Golden> {};

TEST_P(GoldenTest, SerializesToHandEncodedBytes) {
  const Golden& g = GetParam();
  EXPECT_EQ(Hex(g.message->SerializeAsString()), Hex(g.expected));
}

TEST_P(GoldenTest, ParsesHandEncodedBytesBackToTheSameMessage) {
  const Golden& g = GetParam();
  std::unique_ptr<Message> parsed(g.message->New());
  ASSERT_TRUE(parsed->ParseFromString(g.expected));
  EXPECT_TRUE(SameMessage(*parsed, *g.message));
  EXPECT_EQ(Hex(parsed->SerializeAsString()), Hex(g.expected));
}

INSTANTIATE_TEST_SUITE_P(Wire, GoldenTest, ::testing::ValuesIn(AllGoldens()),
                         [](const ::testing::TestParamInfo<Golden>& info) {
                           return info.param.name;
                         });

// Messages of a type, recursively, without synthesized map-entry types.
void CollectMessages(const Descriptor* d, std::set<std::string>* out) {
  if (d->options().map_entry()) return;
  out->insert(d->full_name());
  for (int i = 0; i < d->nested_type_count(); ++i) CollectMessages(d->nested_type(i), out);
}

TEST(GoldenCoverageTest, EveryDefinedMessageHasAGoldenCase) {
  std::set<std::string> defined;
  for (const char* file : kProtoFiles) {
    const auto* fd = DescriptorPool::generated_pool()->FindFileByName(file);
    ASSERT_NE(fd, nullptr) << file;
    for (int i = 0; i < fd->message_type_count(); ++i)
      CollectMessages(fd->message_type(i), &defined);
  }
  std::set<std::string> covered;
  for (const Golden& g : AllGoldens()) covered.insert(g.message->GetDescriptor()->full_name());

  std::vector<std::string> missing;
  std::set_difference(defined.begin(), defined.end(), covered.begin(), covered.end(),
                      std::back_inserter(missing));
  EXPECT_THAT(missing, ::testing::IsEmpty());
  std::vector<std::string> foreign;
  std::set_difference(covered.begin(), covered.end(), defined.begin(), defined.end(),
                      std::back_inserter(foreign));
  EXPECT_THAT(foreign, ::testing::IsEmpty());
}

TEST(GoldenCoverageTest, EveryFileRegisteredItsCases) {
  // A golden file left out of the build would show up above as missing
  // messages; this names the groups directly.
  std::set<std::string> groups;
  for (const auto& [name, add] : TheRegistry().groups) groups.insert(name);
  const std::set<std::string> expected = {"cdcpb_errors",
                                          "cdcpb_events",
                                          "cdcpb_requests",
                                          "errorpb",
                                          "etcd_kv",
                                          "etcd_lease",
                                          "etcd_txn",
                                          "etcd_watch",
                                          "kvrpcpb_context_and_errors",
                                          "kvrpcpb_lock_resolution",
                                          "kvrpcpb_reads",
                                          "metapb",
                                          "mvccpb",
                                          "pdpb_common",
                                          "pdpb_regions",
                                          "pdpb_stores_and_gc",
                                          "raft_cmdpb"};
  EXPECT_EQ(groups, expected);
  std::set<std::string> names;
  for (const Golden& g : AllGoldens()) {
    EXPECT_TRUE(names.insert(g.name).second) << "duplicate case " << g.name;
  }
}

}  // namespace
}  // namespace sluice::golden
