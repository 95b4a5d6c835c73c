// TxnClient: a minimal synchronous Percolator client over the MvccStore and
// the TSO, for tests: start ts from the TSO, buffered mutations, prewrite
// with the first key as primary, commit ts from the TSO after the prewrite,
// commit of the primary and then the secondaries. It is not the workload
// generator; it has no retries and no lock resolution.
//
// A Txn is a plain value owned by one thread; TxnClient is thread-safe (the
// store and the TSO are).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/strong_id.h"
#include "simkv/mvcc_store.h"
#include "simkv/tso_allocator.h"

namespace sluice::simkv {

class Txn {
 public:
  Ts start_ts() const { return start_ts_; }
  // A later mutation of the same key replaces the earlier one.
  void Put(std::string key, std::string value);
  void Delete(std::string key);
  const std::vector<Mutation>& mutations() const { return mutations_; }
  bool prewritten() const { return prewritten_; }

 private:
  friend class TxnClient;
  explicit Txn(Ts start_ts) : start_ts_(start_ts) {}
  void Add(Mutation mutation);

  Ts start_ts_;
  std::vector<Mutation> mutations_;
  bool prewritten_ = false;
};

class TxnClient {
 public:
  // Borrows the store and the TSO; both must outlive the client.
  TxnClient(MvccStore* store, TsoAllocator* tso, uint64_t lock_ttl_ms = 3000)
      : store_(store), tso_(tso), lock_ttl_ms_(lock_ttl_ms) {}

  Result<Txn> Begin();
  // Locks every key (the first mutation's key is the primary).
  Status Prewrite(Txn& txn);
  // Prewrites if not done yet, then commits at a fresh TSO and returns it.
  Result<Ts> Commit(Txn& txn);
  Status Rollback(Txn& txn);

 private:
  MvccStore* const store_;
  TsoAllocator* const tso_;
  const uint64_t lock_ttl_ms_;
};

}  // namespace sluice::simkv
