#include "meta/etcd_wire.h"

#include <set>

namespace sluice::meta::etcd {

namespace {

std::string Describe(std::string_view what, const grpc::Status& status) {
  return "etcd " + std::string(what) + ": grpc code " +
         std::to_string(static_cast<int>(status.error_code())) + ": " + status.error_message();
}

etcdserverpb::Compare::CompareResult ResultOf(Compare::Op op) {
  switch (op) {
    case Compare::Op::kEqual:
      return etcdserverpb::Compare::EQUAL;
    case Compare::Op::kNotEqual:
      return etcdserverpb::Compare::NOT_EQUAL;
    case Compare::Op::kLess:
      return etcdserverpb::Compare::LESS;
    case Compare::Op::kGreater:
      return etcdserverpb::Compare::GREATER;
  }
  return etcdserverpb::Compare::EQUAL;
}

void CompareToProto(const Compare& c, const Namespace& ns, etcdserverpb::Compare* out) {
  out->set_key(ns.Wrap(c.key));
  out->set_result(ResultOf(c.op));
  switch (c.target) {
    case Compare::Target::kVersion:
      out->set_target(etcdserverpb::Compare::VERSION);
      out->set_version(c.number);
      break;
    case Compare::Target::kCreateRevision:
      out->set_target(etcdserverpb::Compare::CREATE);
      out->set_create_revision(c.number);
      break;
    case Compare::Target::kModRevision:
      out->set_target(etcdserverpb::Compare::MOD);
      out->set_mod_revision(c.number);
      break;
    case Compare::Target::kValue:
      out->set_target(etcdserverpb::Compare::VALUE);
      out->set_value(c.value);
      break;
    case Compare::Target::kLease:
      out->set_target(etcdserverpb::Compare::LEASE);
      out->set_lease(c.number);
      break;
  }
}

Status OpsToProto(const std::vector<TxnOp>& ops, const Namespace& ns,
                  google::protobuf::RepeatedPtrField<etcdserverpb::RequestOp>* out) {
  std::set<std::string_view> keys;
  for (const TxnOp& op : ops) {
    if (op.key.empty()) return InvalidArgument("metastore: empty key in a transaction");
    if (!keys.insert(op.key).second) {
      return InvalidArgument("metastore: key '" + op.key + "' written twice in one transaction");
    }
    etcdserverpb::RequestOp* request = out->Add();
    if (op.type == TxnOp::Type::kPut) {
      etcdserverpb::PutRequest* put = request->mutable_request_put();
      put->set_key(ns.Wrap(op.key));
      put->set_value(op.value);
      put->set_lease(op.lease.value());
    } else {
      request->mutable_request_delete_range()->set_key(ns.Wrap(op.key));
    }
  }
  return Status::Ok();
}

}  // namespace

std::string PrefixEnd(std::string_view prefix) {
  std::string end(prefix);
  while (!end.empty()) {
    const auto last = static_cast<unsigned char>(end.back());
    if (last < 0xff) {
      end.back() = static_cast<char>(last + 1);
      return end;
    }
    end.pop_back();
  }
  return std::string(1, '\0');
}

Status FromGrpc(const grpc::Status& status, std::string_view what) {
  if (status.ok()) return Status::Ok();
  std::string text = Describe(what, status);
  const std::string& message = status.error_message();
  switch (status.error_code()) {
    case grpc::StatusCode::INVALID_ARGUMENT:
      return InvalidArgument(std::move(text));
    case grpc::StatusCode::NOT_FOUND:
      return NotFound(std::move(text));
    case grpc::StatusCode::OUT_OF_RANGE:
      if (message.find("compacted") != std::string::npos) {
        return NotFound("compacted: " + std::move(text));
      }
      return InvalidArgument(std::move(text));
    case grpc::StatusCode::UNIMPLEMENTED:
      return NotSupported(std::move(text) + " (is this an etcd endpoint?)");
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return ResourceExhausted(std::move(text));
    case grpc::StatusCode::PERMISSION_DENIED:
    case grpc::StatusCode::UNAUTHENTICATED:
      return InvalidArgument(std::move(text));
    default:
      return Unavailable(std::move(text));
  }
}

std::string Namespace::Wrap(std::string_view key) const { return prefix_ + std::string(key); }

Result<std::string> Namespace::Unwrap(std::string_view key) const {
  if (!key.starts_with(prefix_)) {
    return ProtocolViolation("etcd returned key '" + std::string(key) +
                             "' outside the namespace '" + prefix_ + "'");
  }
  return std::string(key.substr(prefix_.size()));
}

std::pair<std::string, std::string> Namespace::PrefixRange(std::string_view prefix) const {
  std::string start = Wrap(prefix);
  // An empty start is "no key" to etcd; "\0" with end "\0" is every key.
  if (start.empty()) return {std::string(1, '\0'), std::string(1, '\0')};
  std::string end = PrefixEnd(start);
  return {std::move(start), std::move(end)};
}

Result<etcdserverpb::TxnRequest> TxnToProto(const TxnRequest& txn, const Namespace& ns) {
  etcdserverpb::TxnRequest out;
  for (const Compare& c : txn.compares) {
    if (c.key.empty()) return InvalidArgument("metastore: empty key in a compare");
    CompareToProto(c, ns, out.add_compare());
  }
  RETURN_IF_ERROR(OpsToProto(txn.success, ns, out.mutable_success()));
  RETURN_IF_ERROR(OpsToProto(txn.failure, ns, out.mutable_failure()));
  return out;
}

Result<KeyValue> KeyValueFromProto(const mvccpb::KeyValue& kv, const Namespace& ns) {
  if (kv.create_revision() < 0 || kv.mod_revision() < 0 || kv.version() < 0) {
    return ProtocolViolation("etcd returned negative revisions for key '" + kv.key() + "'");
  }
  KeyValue out;
  ASSIGN_OR_RETURN(out.key, ns.Unwrap(kv.key()));
  out.value = kv.value();
  out.create_revision = kv.create_revision();
  out.mod_revision = kv.mod_revision();
  out.version = kv.version();
  out.lease = LeaseId(kv.lease());
  return out;
}

Result<WatchEvent> EventFromProto(const mvccpb::Event& event, const Namespace& ns) {
  WatchEvent out;
  switch (event.type()) {
    case mvccpb::Event::PUT:
      out.type = WatchEvent::Type::kPut;
      break;
    case mvccpb::Event::DELETE:
      out.type = WatchEvent::Type::kDelete;
      break;
    default:
      return ProtocolViolation("etcd watch event of unknown type " +
                               std::to_string(static_cast<int>(event.type())));
  }
  ASSIGN_OR_RETURN(out.kv, KeyValueFromProto(event.kv(), ns));
  // etcd's delete events carry the key and the deleting revision only.
  if (out.type == WatchEvent::Type::kDelete) out.kv.value.clear();
  return out;
}

}  // namespace sluice::meta::etcd
