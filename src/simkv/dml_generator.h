// DmlGenerator: builds the workload's DML transactions, TiDB-encoded, from a
// seed. For each row of a transaction it picks a table (uniformly), a handle
// (uniform over 1..key_space, or hot: with hot_fraction over the first
// hot_keys handles) and an operation by the insert/update/delete weights; an
// insert of a live row becomes an update and an update or delete of a missing
// row becomes an insert, so the generator never writes a duplicate insert or
// a delete of nothing. Updates rewrite the whole row, as TiDB does.
//
// It tracks which rows are live, as of the transactions reported through
// OnCommitted(). Handles reserved by open (long) transactions and handles
// already used in the transaction being built are never picked.
//
// Not thread-safe: one owner. Deterministic: the same seed and the same calls
// give the same transactions, byte for byte.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "codec/datum.h"
#include "codec/model/table_info.h"
#include "common/status.h"
#include "simkv/mvcc_types.h"
#include "simkv/row_writer.h"
#include "simkv/workload_rng.h"

namespace sluice::simkv {

// kSequential: handles 1, 2, 3, ... in the order rows are generated (an
// AUTO_INCREMENT key), across all tables and ignoring key_space; with an
// insert-only mix every row is new and each table's rows commit in key
// order.
enum class KeyDistribution : uint8_t { kUniform, kHot, kSequential };

struct DmlOptions {
  int rows_per_txn = 4;
  int64_t key_space = 10000;  // Handles 1..key_space per table.
  KeyDistribution distribution = KeyDistribution::kUniform;
  double hot_fraction = 0.9;  // kHot: the share of rows on the hot handles.
  int64_t hot_keys = 16;      // kHot: handles 1..hot_keys are hot.
  int insert_weight = 50;
  int update_weight = 40;
  int delete_weight = 10;
  ValueOptions values;
};

enum class RowOp : uint8_t { kInsert, kUpdate, kDelete };

// One row a transaction writes and what the generator meant by it.
struct RowIntent {
  int64_t table_id = 0;     // Logical table.
  int64_t physical_id = 0;  // Table or partition in the key.
  int64_t handle = 0;
  RowOp op = RowOp::kInsert;
  // The public columns at generation time and their values (empty for a
  // delete, and dropped unless the owner keeps intents).
  std::vector<int64_t> column_ids;
  std::vector<codec::Datum> values;
};

// A transaction ready to apply: mutations[i] writes rows[i]; mutations[0]'s
// key is the primary.
struct PreparedTxn {
  std::vector<Mutation> mutations;
  std::vector<RowIntent> rows;
};

class DmlGenerator {
 public:
  DmlGenerator(DmlOptions options, uint64_t seed);

  // Adds a table or refreshes it after a DDL (its live rows are kept).
  void SetTable(const model::TableInfo& table);
  void RemoveTable(int64_t table_id);
  // TRUNCATE: `table` replaces `old_id` with no live rows.
  void ReplaceTable(int64_t old_id, const model::TableInfo& table);
  bool HasTable(int64_t table_id) const { return tables_.contains(table_id); }
  size_t num_tables() const { return tables_.size(); }
  size_t LiveRows(int64_t table_id) const;

  // The next transaction; empty (no mutations) when there is no table or
  // every pick was reserved.
  Result<PreparedTxn> Next();

  // Records the rows of a committed transaction as live or gone.
  void OnCommitted(const PreparedTxn& txn);
  // Reserves / releases the handles of an open transaction.
  void Reserve(const PreparedTxn& txn);
  void Release(const PreparedTxn& txn);

  const DmlOptions& options() const { return options_; }

 private:
  struct TableState {
    RowWriter writer;
    std::unordered_set<int64_t> live;
  };
  using RowRef = std::pair<int64_t, int64_t>;  // (table id, handle)

  int64_t PickHandle();
  RowOp PickOp(bool live);
  // Adds one row over `table_id` unless no free handle is found.
  Status AddRow(int64_t table_id, std::set<RowRef>* used, PreparedTxn* txn);

  DmlOptions options_;
  WorkloadRng rng_;
  std::map<int64_t, TableState> tables_;
  std::vector<int64_t> table_ids_;  // Keys of tables_, for uniform picks.
  std::set<RowRef> reserved_;
  int64_t last_sequential_ = 0;  // kSequential: the last handle given.
};

}  // namespace sluice::simkv
