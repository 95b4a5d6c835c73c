#include "eventservice/mounter.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "codec/mysql_type.h"
#include "codec/row.h"
#include "codec/tablecodec.h"

namespace sluice::eventservice {

namespace {

Status MountError(const Status& st, int64_t table_id, Ts commit_ts) {
  return st.WithContext(
      fmt::format("mount row of table {} at commit ts {}", table_id, commit_ts.value()));
}

// Decodes one row image and makes every datum own its bytes (the decoders
// return views into `value` and the key).
Status DecodeImage(std::string_view value, const event::TableSchema& schema,
                   const codec::RowHandle& handle, std::vector<codec::Datum>* out) {
  RETURN_IF_ERROR(codec::DecodeRow(value, schema.specs(), handle, out));
  for (codec::Datum& d : *out) d.MakeOwned();
  return Status::Ok();
}

// The before image of a delete that came without an old value: only the
// handle columns are known (from the key).
Status HandleOnlyImage(const event::TableSchema& schema, const codec::RowHandle& handle,
                       std::vector<codec::Datum>* out) {
  const std::vector<codec::ColumnSpec>& specs = schema.specs();
  out->assign(specs.size(), codec::Datum::Null());
  for (size_t i = 0; i < specs.size(); ++i) {
    if (!specs[i].is_handle) continue;
    RETURN_IF_ERROR(codec::FillMissingColumn(specs[i], handle, /*stored_null=*/false, &(*out)[i]));
    (*out)[i].MakeOwned();
  }
  return Status::Ok();
}

int OffsetOf(const event::TableSchema& schema, std::string_view lower_name) {
  const auto& cols = schema.columns();
  for (size_t i = 0; i < cols.size(); ++i) {
    if (cols[i].name.lower == lower_name) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace

Result<event::RowChange> MountRow(const RawKvEntry& entry, const event::TableSchema& schema,
                                  int64_t physical_table_id) {
  Result<codec::DecodedRowKey> key = codec::DecodeRowKey(entry.key);
  if (!key.ok()) return MountError(key.status(), physical_table_id, entry.commit_ts);
  if (key->table_id.value() != physical_table_id) {
    return MountError(Corruption(fmt::format("row key belongs to table {}", key->table_id.value())),
                      physical_table_id, entry.commit_ts);
  }
  event::RowChange out;
  out.raw_key = entry.key;
  // The common handle is a view into entry.key; DecodeImage copies what it keeps.
  const codec::RowHandle& handle = key->handle;
  Status st;
  if (entry.op == KvOp::kDelete) {
    out.kind = event::RowKind::kDelete;
    st = entry.old_value.empty() ? HandleOnlyImage(schema, handle, &out.pre_row)
                                 : DecodeImage(entry.old_value, schema, handle, &out.pre_row);
  } else if (entry.old_value.empty()) {
    out.kind = event::RowKind::kInsert;
    st = DecodeImage(entry.value, schema, handle, &out.row);
  } else {
    out.kind = event::RowKind::kUpdate;
    st = DecodeImage(entry.old_value, schema, handle, &out.pre_row);
    if (st.ok()) st = DecodeImage(entry.value, schema, handle, &out.row);
  }
  if (!st.ok()) return MountError(st, physical_table_id, entry.commit_ts);
  return out;
}

std::vector<int> UniqueKeyColumns(const event::TableSchema& schema) {
  std::vector<int> out;
  const auto& cols = schema.columns();
  for (size_t i = 0; i < cols.size(); ++i) {
    bool pk_handle = schema.info().pk_is_handle && cols[i].IsPrimaryKey();
    if (pk_handle || cols[i].type.HasFlag(codec::mysql_flag::kUniqueKey)) {
      out.push_back(static_cast<int>(i));
    }
  }
  for (const model::IndexInfo& idx : schema.info().indices) {
    if (!(idx.primary || idx.unique) || !idx.IsPublic()) continue;
    for (const model::IndexColumn& ic : idx.columns) {
      int off = OffsetOf(schema, ic.name.lower);
      if (off >= 0) out.push_back(off);
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

bool UniqueKeyChanged(const event::RowChange& update, const std::vector<int>& uk_columns) {
  if (update.kind != event::RowKind::kUpdate) return false;
  for (int off : uk_columns) {
    size_t i = static_cast<size_t>(off);
    if (i >= update.row.size() || i >= update.pre_row.size()) return true;
    if (!(update.row[i] == update.pre_row[i])) return true;
  }
  return false;
}

std::pair<event::RowChange, event::RowChange> SplitUpdate(event::RowChange update) {
  event::RowChange del;
  del.kind = event::RowKind::kDelete;
  del.pre_row = std::move(update.pre_row);
  del.raw_key = update.raw_key;
  event::RowChange ins;
  ins.kind = event::RowKind::kInsert;
  ins.row = std::move(update.row);
  ins.raw_key = std::move(update.raw_key);
  return {std::move(del), std::move(ins)};
}

}  // namespace sluice::eventservice
