#include "simkv/row_writer.h"

#include <charconv>
#include <limits>

#include "codec/datum_codec.h"
#include "codec/rowcodec_v2.h"
#include "codec/tablecodec.h"

namespace sluice::simkv {

namespace {

// A RANGE bound: the integer, or INT64_MAX for MAXVALUE (and anything else
// that is not an integer).
int64_t ParseBound(const std::vector<std::string>& less_than) {
  if (less_than.empty()) return std::numeric_limits<int64_t>::max();
  const std::string& s = less_than[0];
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::numeric_limits<int64_t>::max();
  return v;
}

}  // namespace

RowWriter::RowWriter(const model::TableInfo& table) : table_id_(table.id) {
  const model::IndexInfo* primary = table.is_common_handle ? table.GetPrimaryIndex() : nullptr;
  int_handle_ = !table.is_common_handle;
  for (const model::ColumnInfo& c : table.columns) {
    if (!c.IsPublic()) continue;
    columns_.push_back(c);
    column_ids_.push_back(c.id);
    is_key_column_.push_back((table.pk_is_handle || primary != nullptr) && c.IsPrimaryKey());
  }
  if (primary != nullptr) {
    for (const model::IndexColumn& ic : primary->columns) {
      for (size_t i = 0; i < columns_.size(); ++i) {
        if (columns_[i].name.lower == ic.name.lower) common_handle_.push_back(i);
      }
    }
  }
  if (table.IsPartitioned()) {
    for (const model::PartitionDefinition& d : table.partition->definitions) {
      partition_ids_.push_back(d.id);
      if (table.partition->type == model::PartitionType::kRange) {
        range_bounds_.push_back(ParseBound(d.less_than));
      }
    }
  }
}

int64_t RowWriter::PhysicalId(int64_t handle) const {
  if (partition_ids_.empty()) return table_id_;
  if (range_bounds_.empty()) {
    int64_t n = static_cast<int64_t>(partition_ids_.size());
    return partition_ids_[static_cast<size_t>(((handle % n) + n) % n)];
  }
  for (size_t i = 0; i < range_bounds_.size(); ++i) {
    if (handle < range_bounds_[i]) return partition_ids_[i];
  }
  return partition_ids_.back();
}

Result<std::string> RowWriter::Key(int64_t handle) const {
  TableId physical(PhysicalId(handle));
  if (int_handle_) return codec::EncodeRowKey(physical, handle);
  std::vector<codec::Datum> pk;
  for (size_t i : common_handle_) pk.push_back(HandleColumnValue(columns_[i], handle));
  std::string encoded;
  RETURN_IF_ERROR(codec::EncodeKeyDatums(pk, &encoded));
  return codec::EncodeRowKeyWithCommonHandle(physical, encoded);
}

std::vector<codec::Datum> RowWriter::Values(int64_t handle, const ValueOptions& options,
                                            WorkloadRng* rng) const {
  std::vector<codec::Datum> values;
  values.reserve(columns_.size());
  for (size_t i = 0; i < columns_.size(); ++i) {
    values.push_back(is_key_column_[i] ? HandleColumnValue(columns_[i], handle)
                                       : RandomValue(columns_[i], options, rng));
  }
  return values;
}

Result<std::string> RowWriter::Encode(const std::vector<codec::Datum>& values) const {
  if (values.size() != columns_.size()) return InvalidArgument("row: wrong number of values");
  std::string out;
  if (!int_handle_) {
    RETURN_IF_ERROR(codec::EncodeRowV2(column_ids_, values, &out));
    return out;
  }
  // TiDB leaves the int-handle column out of the value; the key carries it.
  std::vector<int64_t> ids;
  std::vector<codec::Datum> stored;
  ids.reserve(columns_.size());
  stored.reserve(columns_.size());
  for (size_t i = 0; i < columns_.size(); ++i) {
    if (is_key_column_[i]) continue;
    ids.push_back(column_ids_[i]);
    stored.push_back(values[i]);
  }
  RETURN_IF_ERROR(codec::EncodeRowV2(ids, stored, &out));
  return out;
}

}  // namespace sluice::simkv
