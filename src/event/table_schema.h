// TableSchema: one version of a table's schema, shared immutably by the
// mounter (to decode rows), the dispatchers and the sinks (to write them).
// It wraps the TiDB TableInfo with what the data path needs at hand: the
// columns rows carry, their decode specs, and the key columns that identify a
// row downstream. Immutable after Make(); safe to share across threads.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "codec/model/table_info.h"
#include "codec/row.h"
#include "common/status.h"
#include "common/strong_id.h"

namespace sluice::event {

class TableSchema;
using TableSchemaPtr = std::shared_ptr<const TableSchema>;

class TableSchema {
 public:
  // `version` is the commit ts of the DDL that produced this schema (the
  // storage sink's table version). InvalidArgument for a table without
  // public columns.
  static Result<TableSchemaPtr> Make(std::string schema_name, int64_t schema_id,
                                     model::TableInfo info, Ts version);

  const std::string& schema_name() const { return schema_name_; }
  int64_t schema_id() const { return schema_id_; }
  const std::string& table_name() const { return info_.name.original; }
  int64_t table_id() const { return info_.id; }
  Ts version() const { return version_; }
  const model::TableInfo& info() const { return info_; }

  // The public columns, in declaration order: every row image has one datum
  // per entry, in this order.
  const std::vector<model::ColumnInfo>& columns() const { return columns_; }
  // Decode specs parallel to columns() (defaults and handle offsets set).
  const std::vector<codec::ColumnSpec>& specs() const { return specs_; }
  // Offsets into columns() of the columns identifying a row downstream: the
  // primary key, else the first unique index over NOT NULL columns; empty
  // when the table has neither (then every column identifies the row).
  const std::vector<int>& key_columns() const { return key_columns_; }
  bool has_key() const { return !key_columns_.empty(); }
  // True for a column the downstream computes itself (virtual or stored
  // generated): sinks do not write it.
  bool IsGenerated(int offset) const { return columns_[offset].IsGenerated(); }

  // "`schema`.`table`" with backquotes doubled inside names.
  std::string QuotedName() const;

 private:
  TableSchema() = default;

  std::string schema_name_;
  int64_t schema_id_ = 0;
  model::TableInfo info_;
  Ts version_;
  std::vector<model::ColumnInfo> columns_;
  std::vector<codec::ColumnSpec> specs_;
  std::vector<int> key_columns_;
};

// "`name`" with backquotes doubled.
std::string QuoteName(std::string_view name);

}  // namespace sluice::event
