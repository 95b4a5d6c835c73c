// RowWriter: how TiDB writes the rows of one table, for the workload. It
// maps a row handle to its physical table (partition) and record key
// (t{id}_r + int handle, or + the key-form datums of a clustered primary
// key), draws column values as TiDB stores them after casting to the column
// type, and encodes row values in row format v2 with the table's public
// columns (the int-handle column is not stored, as in TiDB).
//
// Value type; thread-compatible. Built from a TableInfo snapshot and not
// updated with it: build a new one after every DDL on the table.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "codec/datum.h"
#include "codec/model/column_info.h"
#include "codec/model/table_info.h"
#include "common/status.h"
#include "simkv/workload_rng.h"

namespace sluice::simkv {

struct ValueOptions {
  int64_t pad_width = 0;        // Exact length of a `pad` column's text.
  double null_fraction = 0.05;  // Chance that a nullable column is NULL.
};

// A value of `column` as TiDB stores it: integers in range (sometimes the
// extremes), FLOAT/DOUBLE exactly representable, DECIMAL with exactly the
// column's fraction digits, BINARY(n) padded to n bytes, times truncated to
// the column's fsp, ENUM/SET/BIT within their members and width, JSON in
// binary form. NULL with `null_fraction` for nullable columns.
codec::Datum RandomValue(const model::ColumnInfo& column, const ValueOptions& options,
                         WorkloadRng* rng);

// The value a primary-key column takes for row `handle`: the handle for an
// integer column, "k" + the zero-padded handle for a string column.
codec::Datum HandleColumnValue(const model::ColumnInfo& column, int64_t handle);

class RowWriter {
 public:
  explicit RowWriter(const model::TableInfo& table);

  int64_t table_id() const { return table_id_; }
  // The physical table holding `handle` (a partition of a partitioned table).
  int64_t PhysicalId(int64_t handle) const;
  // The record key of `handle` under its physical table.
  Result<std::string> Key(int64_t handle) const;

  // Ids of the public columns, in declaration order; Values() is parallel.
  const std::vector<int64_t>& column_ids() const { return column_ids_; }
  // A full row for `handle`: key-derived primary-key values, random others.
  std::vector<codec::Datum> Values(int64_t handle, const ValueOptions& options,
                                   WorkloadRng* rng) const;
  // Row format v2 of `values` (parallel to column_ids()).
  Result<std::string> Encode(const std::vector<codec::Datum>& values) const;

 private:
  int64_t table_id_ = 0;
  std::vector<model::ColumnInfo> columns_;  // Public columns.
  std::vector<int64_t> column_ids_;
  std::vector<bool> is_key_column_;  // Part of the primary key.
  bool int_handle_ = false;
  // Common handle: positions (in columns_) of the primary-key columns.
  std::vector<size_t> common_handle_;
  // Partitions: ids, and the exclusive RANGE upper bounds (INT64_MAX for
  // MAXVALUE); hash when bounds are empty.
  std::vector<int64_t> partition_ids_;
  std::vector<int64_t> range_bounds_;
};

}  // namespace sluice::simkv
