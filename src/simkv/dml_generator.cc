#include "simkv/dml_generator.h"

#include <algorithm>

namespace sluice::simkv {

namespace {

// Attempts at finding a free handle for one row before skipping the row.
constexpr int kPickAttempts = 8;

}  // namespace

DmlGenerator::DmlGenerator(DmlOptions options, uint64_t seed)
    : options_(std::move(options)), rng_(seed) {
  options_.rows_per_txn = std::max(options_.rows_per_txn, 1);
  options_.key_space = std::max<int64_t>(options_.key_space, 1);
  options_.hot_keys = std::clamp<int64_t>(options_.hot_keys, 1, options_.key_space);
}

void DmlGenerator::SetTable(const model::TableInfo& table) {
  auto it = tables_.find(table.id);
  if (it != tables_.end()) {
    it->second.writer = RowWriter(table);
    return;
  }
  tables_.emplace(table.id, TableState{RowWriter(table), {}});
  table_ids_.push_back(table.id);
  std::sort(table_ids_.begin(), table_ids_.end());
}

void DmlGenerator::RemoveTable(int64_t table_id) {
  tables_.erase(table_id);
  std::erase(table_ids_, table_id);
  std::erase_if(reserved_, [&](const RowRef& r) { return r.first == table_id; });
}

void DmlGenerator::ReplaceTable(int64_t old_id, const model::TableInfo& table) {
  RemoveTable(old_id);
  SetTable(table);
}

size_t DmlGenerator::LiveRows(int64_t table_id) const {
  auto it = tables_.find(table_id);
  return it == tables_.end() ? 0 : it->second.live.size();
}

int64_t DmlGenerator::PickHandle() {
  if (options_.distribution == KeyDistribution::kSequential) return ++last_sequential_;
  if (options_.distribution == KeyDistribution::kHot && rng_.Chance(options_.hot_fraction)) {
    return 1 + static_cast<int64_t>(rng_.Uniform(static_cast<uint64_t>(options_.hot_keys)));
  }
  return 1 + static_cast<int64_t>(rng_.Uniform(static_cast<uint64_t>(options_.key_space)));
}

RowOp DmlGenerator::PickOp(bool live) {
  int total = std::max(options_.insert_weight, 0) + std::max(options_.update_weight, 0) +
              std::max(options_.delete_weight, 0);
  RowOp op = RowOp::kInsert;
  if (total > 0) {
    int64_t r = static_cast<int64_t>(rng_.Uniform(static_cast<uint64_t>(total)));
    if (r >= options_.insert_weight) {
      op = r < options_.insert_weight + options_.update_weight ? RowOp::kUpdate : RowOp::kDelete;
    }
  }
  if (op == RowOp::kInsert && live) return RowOp::kUpdate;
  if (op != RowOp::kInsert && !live) return RowOp::kInsert;
  return op;
}

Status DmlGenerator::AddRow(int64_t table_id, std::set<RowRef>* used, PreparedTxn* txn) {
  TableState& table = tables_.at(table_id);
  int64_t handle = 0;
  for (int i = 0; i < kPickAttempts && handle == 0; ++i) {
    int64_t h = PickHandle();
    RowRef ref{table_id, h};
    if (!used->contains(ref) && !reserved_.contains(ref)) handle = h;
  }
  if (handle == 0) return Status::Ok();
  used->insert({table_id, handle});
  RowIntent row;
  row.table_id = table_id;
  row.physical_id = table.writer.PhysicalId(handle);
  row.handle = handle;
  row.op = PickOp(table.live.contains(handle));
  ASSIGN_OR_RETURN(std::string key, table.writer.Key(handle));
  if (row.op == RowOp::kDelete) {
    txn->mutations.push_back(Mutation::Delete(std::move(key)));
  } else {
    row.column_ids = table.writer.column_ids();
    row.values = table.writer.Values(handle, options_.values, &rng_);
    ASSIGN_OR_RETURN(std::string value, table.writer.Encode(row.values));
    txn->mutations.push_back(Mutation::Put(std::move(key), std::move(value)));
  }
  txn->rows.push_back(std::move(row));
  return Status::Ok();
}

Result<PreparedTxn> DmlGenerator::Next() {
  PreparedTxn txn;
  if (table_ids_.empty()) return txn;
  std::set<RowRef> used;
  for (int i = 0; i < options_.rows_per_txn; ++i) {
    int64_t table_id = table_ids_[rng_.Uniform(table_ids_.size())];
    RETURN_IF_ERROR(AddRow(table_id, &used, &txn));
  }
  return txn;
}

void DmlGenerator::OnCommitted(const PreparedTxn& txn) {
  for (const RowIntent& row : txn.rows) {
    auto it = tables_.find(row.table_id);
    if (it == tables_.end()) continue;
    if (row.op == RowOp::kDelete) {
      it->second.live.erase(row.handle);
    } else {
      it->second.live.insert(row.handle);
    }
  }
}

void DmlGenerator::Reserve(const PreparedTxn& txn) {
  for (const RowIntent& row : txn.rows) reserved_.insert({row.table_id, row.handle});
}

void DmlGenerator::Release(const PreparedTxn& txn) {
  for (const RowIntent& row : txn.rows) reserved_.erase({row.table_id, row.handle});
}

}  // namespace sluice::simkv
