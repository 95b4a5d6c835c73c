// Translation between the metastore's values (types.h) and etcd v3 wire
// messages (etcdserverpb, mvccpb), under an optional key namespace: every key
// the store writes is prefixed with it and every key it reads must carry it.
// Answers from etcd that break the model (a key outside the namespace, a
// negative revision) are kProtocolViolation, never an assert. Pure functions;
// any thread.
#pragma once

#include <grpcpp/grpcpp.h>

#include <string>
#include <string_view>
#include <utility>

#include "common/status.h"
#include "etcd/kv.pb.h"
#include "etcd/rpc.pb.h"
#include "meta/types.h"

namespace sluice::meta::etcd {

// The smallest key above every key that starts with `prefix`, as etcd's
// clientv3.GetPrefixRangeEnd: the last byte below 0xff incremented, the bytes
// after it dropped; "\0" (etcd's "to the end") when there is none.
std::string PrefixEnd(std::string_view prefix);

// A gRPC status of an etcd call → Status: UNAVAILABLE, DEADLINE_EXCEEDED,
// CANCELLED, UNKNOWN, INTERNAL and etcd's "no leader" / "request timed out"
// are kUnavailable; INVALID_ARGUMENT kInvalidArgument; NOT_FOUND (a lease)
// kNotFound; OUT_OF_RANGE ("required revision has been compacted") kNotFound
// with a message starting "compacted"; UNIMPLEMENTED kNotSupported (an
// endpoint that is not etcd).
Status FromGrpc(const grpc::Status& status, std::string_view what);

// A key namespace ("" for none).
class Namespace {
 public:
  explicit Namespace(std::string prefix) : prefix_(std::move(prefix)) {}

  std::string Wrap(std::string_view key) const;
  // `key` without the namespace; kProtocolViolation if it lacks it.
  Result<std::string> Unwrap(std::string_view key) const;
  // Range bounds (key, range_end) covering every key under `prefix`.
  std::pair<std::string, std::string> PrefixRange(std::string_view prefix) const;
  // A key to read store-wide facts (the revision) with: the namespace, or
  // "\0" without one.
  std::string ProbeKey() const { return prefix_.empty() ? std::string(1, '\0') : prefix_; }

  const std::string& prefix() const { return prefix_; }

 private:
  std::string prefix_;
};

// Validates `txn` (non-empty keys, each key written at most once) and builds
// the etcd request.
Result<etcdserverpb::TxnRequest> TxnToProto(const TxnRequest& txn, const Namespace& ns);

Result<KeyValue> KeyValueFromProto(const mvccpb::KeyValue& kv, const Namespace& ns);
Result<WatchEvent> EventFromProto(const mvccpb::Event& event, const Namespace& ns);

}  // namespace sluice::meta::etcd
