#include "simkv/txn_client.h"

#include <algorithm>
#include <utility>

namespace sluice::simkv {

void Txn::Add(Mutation mutation) {
  auto same_key = [&](const Mutation& m) { return m.key == mutation.key; };
  auto it = std::find_if(mutations_.begin(), mutations_.end(), same_key);
  if (it != mutations_.end()) {
    *it = std::move(mutation);
  } else {
    mutations_.push_back(std::move(mutation));
  }
}

void Txn::Put(std::string key, std::string value) {
  Add(Mutation::Put(std::move(key), std::move(value)));
}

void Txn::Delete(std::string key) { Add(Mutation::Delete(std::move(key))); }

Result<Txn> TxnClient::Begin() {
  ASSIGN_OR_RETURN(Ts start_ts, tso_->Allocate(1));
  return Txn(start_ts);
}

Status TxnClient::Prewrite(Txn& txn) {
  if (txn.mutations_.empty()) return InvalidArgument("txn: nothing to write");
  TxnStatus status =
      store_->Prewrite(txn.mutations_, txn.mutations_.front().key, txn.start_ts_, lock_ttl_ms_);
  if (!status.ok()) return status.status();
  txn.prewritten_ = true;
  return Status::Ok();
}

Result<Ts> TxnClient::Commit(Txn& txn) {
  if (!txn.prewritten_) RETURN_IF_ERROR(Prewrite(txn));
  ASSIGN_OR_RETURN(Ts commit_ts, tso_->Allocate(1));
  std::vector<std::string> keys;
  for (const Mutation& m : txn.mutations_) keys.push_back(m.key);
  std::vector<std::string> primary(keys.begin(), keys.begin() + 1);
  std::vector<std::string> secondaries(keys.begin() + 1, keys.end());
  TxnStatus status = store_->Commit(primary, txn.start_ts_, commit_ts);
  if (!status.ok()) return status.status();
  if (!secondaries.empty()) {
    status = store_->Commit(secondaries, txn.start_ts_, commit_ts);
    if (!status.ok()) return status.status();
  }
  return commit_ts;
}

Status TxnClient::Rollback(Txn& txn) {
  std::vector<std::string> keys;
  for (const Mutation& m : txn.mutations_) keys.push_back(m.key);
  if (keys.empty()) return Status::Ok();
  return store_->Rollback(keys, txn.start_ts_).status();
}

}  // namespace sluice::simkv
