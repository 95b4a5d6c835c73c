#include "meta/etcd_wire.h"

#include <gtest/gtest.h>

namespace sluice::meta::etcd {
namespace {

TEST(EtcdWireTest, PrefixEndAsEtcdComputesIt) {
  EXPECT_EQ(PrefixEnd("/a/"), "/a0");
  EXPECT_EQ(PrefixEnd("a\xff"), "b");
  EXPECT_EQ(PrefixEnd("\xff\xff"), std::string(1, '\0'));
  EXPECT_EQ(PrefixEnd(""), std::string(1, '\0'));
}

TEST(EtcdWireTest, NamespaceWrapsAndRefusesForeignKeys) {
  Namespace ns("/t/");
  EXPECT_EQ(ns.Wrap("k"), "/t/k");
  EXPECT_EQ(*ns.Unwrap("/t/k"), "k");
  EXPECT_EQ(ns.Unwrap("/u/k").status().code(), Code::kProtocolViolation);
  EXPECT_EQ(ns.PrefixRange("a"), std::make_pair(std::string("/t/a"), std::string("/t/b")));
  EXPECT_EQ(ns.PrefixRange(""), std::make_pair(std::string("/t/"), std::string("/t0")));
  const std::string all(1, '\0');
  EXPECT_EQ(Namespace("").PrefixRange(""), std::make_pair(all, all));
}

TEST(EtcdWireTest, TxnMapsCompareTargetsAndOps) {
  TxnRequest txn;
  Compare greater = Compare::ModRevisionIs("m", 7);
  greater.op = Compare::Op::kGreater;
  Compare lease{"l", Compare::Target::kLease, Compare::Op::kNotEqual, 9, ""};
  txn.compares = {Compare::Absent("a"), greater, Compare::ValueIs("v", "x"), lease};
  txn.success = {TxnOp::Put("p", "1", LeaseId(5)), TxnOp::Delete("d")};
  txn.failure = {TxnOp::Put("p", "2")};
  Result<etcdserverpb::TxnRequest> out = TxnToProto(txn, Namespace("/n/"));
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_EQ(out->compare_size(), 4);
  EXPECT_EQ(out->compare(0).key(), "/n/a");
  EXPECT_EQ(out->compare(0).target(), etcdserverpb::Compare::CREATE);
  EXPECT_EQ(out->compare(0).create_revision(), 0);
  EXPECT_TRUE(out->compare(0).has_create_revision());
  EXPECT_EQ(out->compare(1).result(), etcdserverpb::Compare::GREATER);
  EXPECT_EQ(out->compare(1).mod_revision(), 7);
  EXPECT_EQ(out->compare(2).target(), etcdserverpb::Compare::VALUE);
  EXPECT_EQ(out->compare(2).value(), "x");
  EXPECT_EQ(out->compare(3).result(), etcdserverpb::Compare::NOT_EQUAL);
  EXPECT_EQ(out->compare(3).lease(), 9);
  ASSERT_EQ(out->success_size(), 2);
  EXPECT_EQ(out->success(0).request_put().key(), "/n/p");
  EXPECT_EQ(out->success(0).request_put().lease(), 5);
  EXPECT_EQ(out->success(1).request_delete_range().key(), "/n/d");
  EXPECT_TRUE(out->success(1).request_delete_range().range_end().empty());
  EXPECT_EQ(out->failure(0).request_put().value(), "2");
}

TEST(EtcdWireTest, TxnRefusesEmptyAndRepeatedKeys) {
  TxnRequest twice;
  twice.success = {TxnOp::Put("k", "1"), TxnOp::Delete("k")};
  EXPECT_EQ(TxnToProto(twice, Namespace("/n/")).status().code(), Code::kInvalidArgument);
  TxnRequest empty;
  empty.failure = {TxnOp::Put("", "1")};
  // Under a namespace the wrapped key is not empty; still refused.
  EXPECT_EQ(TxnToProto(empty, Namespace("/n/")).status().code(), Code::kInvalidArgument);
  TxnRequest compare;
  compare.compares = {Compare::Absent("")};
  EXPECT_EQ(TxnToProto(compare, Namespace("")).status().code(), Code::kInvalidArgument);
}

TEST(EtcdWireTest, BadAnswersAreProtocolViolations) {
  mvccpb::KeyValue kv;
  kv.set_key("/n/k");
  kv.set_mod_revision(-1);
  EXPECT_EQ(KeyValueFromProto(kv, Namespace("/n/")).status().code(), Code::kProtocolViolation);
  mvccpb::Event event;
  event.set_type(static_cast<mvccpb::Event::EventType>(7));
  event.mutable_kv()->set_key("/n/k");
  EXPECT_EQ(EventFromProto(event, Namespace("/n/")).status().code(), Code::kProtocolViolation);
  event.set_type(mvccpb::Event::DELETE);
  event.mutable_kv()->set_mod_revision(12);
  Result<WatchEvent> deleted = EventFromProto(event, Namespace("/n/"));
  ASSERT_TRUE(deleted.ok());
  EXPECT_EQ(deleted->type, WatchEvent::Type::kDelete);
  EXPECT_EQ(deleted->kv.key, "k");
  EXPECT_EQ(deleted->kv.mod_revision, 12);
}

TEST(EtcdWireTest, GrpcStatusesMapToTypedCodes) {
  using grpc::StatusCode;
  EXPECT_EQ(FromGrpc(grpc::Status::OK, "x").code(), Code::kOk);
  EXPECT_EQ(FromGrpc(grpc::Status(StatusCode::UNAVAILABLE, "down"), "x").code(),
            Code::kUnavailable);
  EXPECT_EQ(FromGrpc(grpc::Status(StatusCode::DEADLINE_EXCEEDED, ""), "x").code(),
            Code::kUnavailable);
  EXPECT_EQ(FromGrpc(grpc::Status(StatusCode::NOT_FOUND, "requested lease not found"), "x").code(),
            Code::kNotFound);
  Status compacted = FromGrpc(grpc::Status(StatusCode::OUT_OF_RANGE,
                                           "etcdserver: mvcc: required revision has been "
                                           "compacted"),
                              "x");
  EXPECT_EQ(compacted.code(), Code::kNotFound);
  EXPECT_TRUE(compacted.message().starts_with("compacted")) << compacted.message();
  EXPECT_EQ(FromGrpc(grpc::Status(StatusCode::UNIMPLEMENTED, ""), "x").code(), Code::kNotSupported);
  EXPECT_EQ(FromGrpc(grpc::Status(StatusCode::INVALID_ARGUMENT, "duplicate key"), "x").code(),
            Code::kInvalidArgument);
}

}  // namespace
}  // namespace sluice::meta::etcd
