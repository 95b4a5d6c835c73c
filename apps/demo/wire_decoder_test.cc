#include "apps/demo/wire_decoder.h"

#include <gtest/gtest.h>

#include "cdcpb.pb.h"

namespace sluice::demo {
namespace {

class Batch {
 public:
  Batch& Row(cdcpb::Event_LogType type, uint64_t start, uint64_t commit, const std::string& key,
             const std::string& value = "",
             cdcpb::Event_Row_OpType op = cdcpb::Event_Row_OpType_PUT) {
    cdcpb::Event* e = msg_.add_events();
    e->set_region_id(1);
    cdcpb::Event_Row* r = e->mutable_entries()->add_entries();
    r->set_type(type);
    r->set_start_ts(start);
    r->set_commit_ts(commit);
    r->set_key(key);
    r->set_value(value);
    r->set_op_type(op);
    return *this;
  }
  std::string Wire() const { return msg_.SerializeAsString(); }

 private:
  cdcpb::ChangeDataEvent msg_;
};

std::string Resolved(uint64_t ts) {
  cdcpb::ChangeDataEvent msg;
  msg.mutable_resolved_ts()->add_regions(1);
  msg.mutable_resolved_ts()->set_ts(ts);
  return msg.SerializeAsString();
}

TEST(WireDecoderTest, PairsCommitWithPrewriteAndReleasesOnResolved) {
  WireDecoder d;
  ASSERT_TRUE(d.Consume(Batch()
                            .Row(cdcpb::Event_LogType_PREWRITE, 10, 0, "b", "vb")
                            .Row(cdcpb::Event_LogType_PREWRITE, 10, 0, "a", "va")
                            .Row(cdcpb::Event_LogType_PREWRITE, 12, 0, "c", "vc")
                            .Wire())
                  .ok());
  ASSERT_TRUE(d.Consume(Batch()
                            .Row(cdcpb::Event_LogType_COMMIT, 12, 13, "c")
                            .Row(cdcpb::Event_LogType_COMMIT, 10, 11, "b")
                            .Row(cdcpb::Event_LogType_COMMIT, 10, 11, "a")
                            .Wire())
                  .ok());
  EXPECT_TRUE(d.TakeResolved().empty());  // nothing resolved yet
  ASSERT_TRUE(d.Consume(Resolved(12)).ok());
  auto out = d.TakeResolved();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].key, "a");  // commit-ts order, then key order
  EXPECT_EQ(out[0].value, "va");
  EXPECT_EQ(out[1].key, "b");
  ASSERT_TRUE(d.Consume(Resolved(13)).ok());
  out = d.TakeResolved();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].commit_ts, Ts(13));
  EXPECT_EQ(d.pending_prewrites(), 0u);
}

TEST(WireDecoderTest, RollbackDropsThePrewrite) {
  WireDecoder d;
  ASSERT_TRUE(d.Consume(Batch()
                            .Row(cdcpb::Event_LogType_PREWRITE, 10, 0, "a", "va")
                            .Row(cdcpb::Event_LogType_ROLLBACK, 10, 0, "a")
                            .Wire())
                  .ok());
  EXPECT_EQ(d.pending_prewrites(), 0u);
  Status st = d.Consume(Batch().Row(cdcpb::Event_LogType_COMMIT, 10, 11, "a").Wire());
  EXPECT_EQ(st.code(), Code::kProtocolViolation);
}

TEST(WireDecoderTest, ViolationsAreErrorsNotCrashes) {
  WireDecoder d;
  EXPECT_EQ(d.Consume(Batch().Row(cdcpb::Event_LogType_COMMIT, 1, 2, "x").Wire()).code(),
            Code::kProtocolViolation);
  ASSERT_TRUE(d.Consume(Resolved(20)).ok());
  EXPECT_EQ(d.Consume(Resolved(19)).code(), Code::kProtocolViolation);
  EXPECT_EQ(d.Consume(Batch().Row(cdcpb::Event_LogType_COMMITTED, 5, 20, "k", "v").Wire()).code(),
            Code::kProtocolViolation);
  EXPECT_EQ(d.Consume(Batch().Row(cdcpb::Event_LogType_INITIALIZED, 0, 0, "").Wire()).code(),
            Code::kProtocolViolation);
  EXPECT_EQ(d.Consume(Batch()
                          .Row(cdcpb::Event_LogType_PREWRITE, 30, 0, "k", "v",
                               static_cast<cdcpb::Event_Row_OpType>(9))
                          .Wire())
                .code(),
            Code::kProtocolViolation);
  EXPECT_EQ(d.Consume("\xff\xff\xff").code(), Code::kCorruption);
}

}  // namespace
}  // namespace sluice::demo
