#include "meta/metastore.h"

#include <utility>

namespace sluice::meta {

Compare Compare::ModRevisionIs(std::string key, Revision revision) {
  Compare c;
  c.key = std::move(key);
  c.target = Target::kModRevision;
  c.number = revision;
  return c;
}

Compare Compare::CreateRevisionIs(std::string key, Revision revision) {
  Compare c;
  c.key = std::move(key);
  c.target = Target::kCreateRevision;
  c.number = revision;
  return c;
}

Compare Compare::ValueIs(std::string key, std::string value) {
  Compare c;
  c.key = std::move(key);
  c.target = Target::kValue;
  c.value = std::move(value);
  return c;
}

TxnOp TxnOp::Put(std::string key, std::string value, LeaseId lease) {
  TxnOp op;
  op.type = Type::kPut;
  op.key = std::move(key);
  op.value = std::move(value);
  op.lease = lease;
  return op;
}

TxnOp TxnOp::Delete(std::string key) {
  TxnOp op;
  op.type = Type::kDelete;
  op.key = std::move(key);
  return op;
}

Result<Revision> MetaStore::Put(const std::string& key, const std::string& value, LeaseId lease) {
  TxnRequest txn;
  txn.success.push_back(TxnOp::Put(key, value, lease));
  ASSIGN_OR_RETURN(TxnResponse resp, Txn(txn));
  return resp.revision;
}

Result<Revision> MetaStore::Delete(const std::string& key) {
  TxnRequest txn;
  txn.success.push_back(TxnOp::Delete(key));
  ASSIGN_OR_RETURN(TxnResponse resp, Txn(txn));
  return resp.revision;
}

}  // namespace sluice::meta
