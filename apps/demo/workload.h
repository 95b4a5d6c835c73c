// The demo's upstream workload: a TiDB `shop.orders` table created by a DDL
// job document, and seeded Percolator transactions (insert, update, delete,
// some rolled back) encoded as TiDB does (record keys, row format v2).
// Single-threaded.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "codec/model/table_info.h"
#include "common/status.h"
#include "simkv/mvcc_store.h"
#include "simkv/tso_allocator.h"

namespace sluice::demo {

// A finished CREATE TABLE job as TiDB writes it into mysql.tidb_ddl_job.
extern const char* const kCreateOrdersJob;

class OrdersWorkload {
 public:
  OrdersWorkload(const model::TableInfo& table, uint64_t seed) : table_(table), rng_(seed) {}

  // Runs `txns` transactions.
  Status Run(int txns, simkv::MvccStore* store, simkv::TsoAllocator* tso);

  int committed() const { return committed_; }
  int rolled_back() const { return rolled_back_; }

 private:
  Status RunOne(simkv::MvccStore* store, simkv::TsoAllocator* tso);
  Result<std::string> NewRowValue();
  std::vector<simkv::Mutation> NextMutations();

  const model::TableInfo& table_;
  std::mt19937_64 rng_;
  std::vector<int64_t> live_ids_;
  int64_t next_id_ = 1;
  int committed_ = 0;
  int rolled_back_ = 0;
};

}  // namespace sluice::demo
